// sam3 label on maps: GDAL rasters of any size, read tile by tile, to one georeferenced vector
// file per format (GeoPackage with a layer per category, FlatGeobuf, RFC 7946 GeoJSON).
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "model_resolver.h"
#include "sam3/label.h"
#include "sam3/raster.h"

namespace sam3::cli {

struct MapLabelArgs {
  ModelSelection models;
  std::vector<std::string> rasters;
  std::vector<LabelCategory> categories;
  std::vector<std::string> formats;  // gpkg, fgb, geojson
  std::string out;
  SegmentOptions segment;
  int tile = 0, overlap = 0, threads = 0;
  RasterOptions raster;
  std::string bands_text, scale_text;  // as given, recorded in shards
  std::string target_crs;
  std::string raster_out;  // a class raster file name in --out (one input raster)
  int shard = 0, shards = 1;  // --shard K/N of one raster's tiles (0-based shard)
};

// Whether --format asks for map outputs (then every format given must be one).
bool is_map_format_list(const std::string& formats);
// --bands "1,2,3" and --scale "minmax" | "percentile:2,98" | "A,B" into the raster options.
RasterOptions parse_raster_options(const std::string& bands, const std::string& scale);
int run_map_label(const MapLabelArgs& args, const std::atomic<bool>* stop);
// `sam3 label merge` of folders written by map shards (map-shard.json), into their outputs.
bool is_map_shard_dir(const std::string& dir);
int run_map_merge(const std::vector<std::string>& dirs, const std::string& out);

}  // namespace sam3::cli
