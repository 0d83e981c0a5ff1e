// sam3 label on maps: the command line translated into a MapLabelJob (sam3/map_labeler.h),
// progress on stderr and the summary on stdout. label_map.cpp runs it on sam3::geo (GDAL);
// a build without maps (SAM3_MAPS=OFF or no libgdal-dev) links label_map_off.cpp instead,
// which refuses map formats saying how to turn maps on.
#pragma once

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "model_resolver.h"
#include "sam3/map_labeler.h"
#include "sam3/raster.h"

namespace sam3::cli {

// Whether a --format list asks for map outputs (gpkg, fgb, shp), and those formats.
bool asks_for_maps(const std::string& formats);
std::vector<MapFormat> map_formats(const std::string& formats);
// Whether a file is georeferenced by its own content (sam3::is_georeferenced_raster): labelled as
// a map whatever the formats. Always false in a build without maps, which cannot read it.
bool is_georeferenced(const std::filesystem::path& path);
bool maps_built();
// Whether a folder was written by a map shard (`sam3 label merge` of map shards).
bool is_map_shard_dir(const std::filesystem::path& dir);
// The rasters of the inputs: a folder (recursive) or a .txt/.lst list file stands for the image
// files in it, as for `sam3 label` on images (sam3::collect_label_inputs, skipping `out`); a
// folder without any is kept (GDAL reads a few formats from folders); anything else as given
// (GDAL names such as /vsizip/... included).
std::vector<std::filesystem::path> map_raster_inputs(const std::vector<std::string>& inputs, const std::filesystem::path& out);
// --bands "1,2,3" and --scale "minmax" | "percentile:2,98" | "A,B" into the raster options.
RasterOptions parse_raster_options(const std::string& bands, const std::string& scale);
int run_map_label(const MapLabelJob& job, const ModelSelection& models, int threads, const std::atomic<bool>* stop);
// `sam3 label merge` of folders written by map shards (map-shard.json), into their outputs.
int run_map_merge(const std::vector<std::string>& dirs, const std::string& out);

}  // namespace sam3::cli
