// Labeling maps as one call: rasters of any size (GeoTIFF, COG, VRT mosaics, ...) to
// georeferenced vectors (GeoPackage with a layer per category, FlatGeobuf, Shapefile, RFC 7946
// GeoJSON) and an aligned class raster, tile by tile, resumable, in shards across machines.
//
//   auto model = sam3::Model::load("models/sam3");
//   sam3::MapLabelJob job;
//   job.rasters = {"ortho.tif"};
//   job.categories = {{"building", {"building", {}}}};
//   job.out = "labels";                           // labels.gpkg inside; sam3's own files only
//   sam3::MapRunSummary s = sam3::MapLabeler(model).run(job);
//
// Every setting that changes a result is part of the run's settings hash, so a rerun resumes
// only from tiles made with the same settings and shards merge only with their own run.
// Thread-safety: a MapLabeler may run one job at a time; separate labelers may share a Model.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sam3/labeler.h"
#include "sam3/model.h"
#include "sam3/raster.h"

namespace sam3 {

// A tile is read whole into memory (3 bytes a pixel, and 8 per band as read): sides beyond this
// are refused; the model sees each tile at its input size (1008) anyway.
inline constexpr int kMaxMapTile = 8192;

enum class MapFormat { kGpkg, kFgb, kShp, kGeojson };
// "gpkg,fgb,shp,geojson" (comma-separated) -> formats; throws kInvalidArgument naming one that
// is not a map format. is_map_format_list says whether a --format value asks for map outputs.
std::vector<MapFormat> parse_map_formats(const std::string& list);
bool is_map_format_list(const std::string& list);
// The file (or, for Shapefiles, folder) a format is written to inside the output folder.
std::string map_output_name(MapFormat format);

struct MapLabelJob {
  std::vector<std::filesystem::path> rasters;
  RasterOptions raster;
  std::vector<LabelCategory> categories;  // exemplar boxes in the raster file's own pixels
  std::vector<MapFormat> formats = {MapFormat::kGpkg};
  std::filesystem::path out;  // made if needed; only files sam3 wrote there are replaced
  std::string target_crs;     // "" keeps the raster's ("EPSG:4326", WKT, ...)
  std::string raster_out;     // a class raster file name inside `out` (one raster), "" none
  SegmentOptions segment;
  int tile = 0, overlap = 0;  // 0: the model's input size, tile / 8
  int shard = 0, shards = 1;  // this run's share of one raster's tiles (0-based shard)
};

struct MapProgress {
  std::filesystem::path raster;
  int tiles_done = 0, tiles_total = 0;
  double area_km2 = 0;
};

struct MapRunSummary {
  bool stopped = false;                        // `stop` was set: finished tiles are kept, rerun resumes
  std::filesystem::path tiles_dir;             // the per-tile records
  std::vector<std::filesystem::path> outputs;  // what was written (or the shard file)
  std::vector<std::string> categories;         // names, in order
  std::vector<int> features_per_category;
  std::int64_t tiles = 0, tiles_skipped = 0;  // all nodata: never encoded
  std::int64_t instances = 0;
  double area_km2 = 0;
  int rasters = 0;
};

class MapLabeler {
 public:
  explicit MapLabeler(std::shared_ptr<const Model> model);
  // Checks everything first (rasters, boxes, sizes) and makes no folder when it refuses. Every
  // raster must be georeferenced (a geotransform in the file or a world file beside it): one
  // without is refused (kInvalidArgument), as its objects would have no place on the ground.
  // Throws sam3::Error; `stop` is checked between tiles.
  MapRunSummary run(const MapLabelJob& job, const std::function<void(const MapProgress&)>& progress = {},
                    const std::atomic<bool>* stop = nullptr) const;
  // All shards of one run (folders each holding map-shard.json) merged into `out`'s outputs,
  // equal to one run's.
  static MapRunSummary merge(const std::vector<std::filesystem::path>& shard_dirs, const std::filesystem::path& out);
  static bool is_shard_dir(const std::filesystem::path& dir);

 private:
  std::shared_ptr<const Model> model_;
};

}  // namespace sam3
