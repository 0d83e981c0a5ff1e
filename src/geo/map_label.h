// Internals of map labeling (the public face is sam3/map_labeler.h): a georeferenced raster of any size, read tile by tile (never whole),
// each tile segmented for every category, instances mapped back and merged across seams, then written as georeferenced vectors through OGR
// (GeoPackage, GeoJSON, FlatGeobuf, Shapefile).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "label/label_image.h"
#include "sam3/model.h"
#include "sam3/map_labeler.h"
#include "sam3/raster.h"

namespace sam3::geo {

// What one tile gave, kept as each tile finishes so that an interrupted map run resumes.
struct TileRecord {
  std::vector<label::LabeledInstance> instances;  // raster pixel coordinates, as found
  bool nodata = false;                            // the tile held no data and was not encoded
  double area_km2 = 0;                            // ground with data that only this tile covers
};

// Tile records of one run in a folder, keyed by the run's settings (raster file and its
// size and time, grid, bands, prompts, thresholds, model): another run's records are never
// taken. Written atomically, one file per tile.
class MapTileStore {
 public:
  MapTileStore(std::filesystem::path dir, std::string settings) : dir_(std::move(dir)), settings_(std::move(settings)) {}
  // The tile's record in a width x height raster of `categories` categories; false when it has
  // none, is another run's or is damaged (the tile is then done again).
  bool load(int tile, int width, int height, size_t categories, TileRecord* record) const;
  void save(int tile, const TileRecord& record) const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::string settings_;
};

struct MapLabelOptions {
  SegmentOptions segment;
  int tile = 0;       // tile side in raster pixels, at most kMaxMapTile; 0: the model's input size
  int overlap = 0;    // 0: tile / 8
  TileOptions merge;  // merge_iou and merge_containment for instances crossing seams
  // After each tile: tiles done, tiles in all, square kilometres covered so far.
  std::function<void(int, int, double)> progress;
  const std::atomic<bool>* stop = nullptr;  // checked between tiles
  // Scale-out: tiles t with t % shards == shard are this run's; their instances come back as
  // found (not merged across seams), for merge_map_shards to merge exactly as one run would.
  // Exemplar boxes are in the raster file's own pixels; each tile gets those inside it.
  int shard = 0, shards = 1;
  const MapTileStore* store = nullptr;  // resume: tiles with a record are not read again
};

// Tiles are numbered with int (records, shards): a grid of more is refused, naming its size.
inline constexpr std::int64_t kMaxMapTiles = 2147483647;

// The settings a run's shards and tile records must agree on (see MapTileStore): everything
// that changes a tile's result: the raster file and its size and time, the grid read (size,
// geotransform: --gsd), bands and their scaling (--bands, --scale), categories with their
// prompts and exemplar boxes (corners and polarity), thresholds, tile and overlap, the model.
std::string map_settings_hash(const Model& model, const Raster& raster, const std::vector<LabelCategory>& categories,
                              const MapLabelOptions& options, const label::TileGrid& grid);
// The tile grid label_raster uses for these options, computed, never listed. Throws
// kInvalidArgument naming the sizes for a tile over kMaxMapTile or more than kMaxMapTiles tiles.
label::TileGrid map_tile_grid(const Model& model, const Raster& raster, const MapLabelOptions& options);

struct MapLabelResult {
  std::vector<label::LabeledInstance> instances;  // raster pixel coordinates, no pixel outside the data
  std::vector<int> tile_of_instance;
  label::TileGrid grid;
  std::int64_t tiles_skipped = 0;  // all nodata: never encoded
  double area_km2 = 0;             // ground covered by tiles with data (0 without a CRS)
  bool stopped = false;
};

// Exemplar boxes are in the raster file's own pixels: throws kInvalidArgument naming a box
// that is not inside them (label_raster checks too; callers check before making outputs).
void check_exemplar_boxes(const Raster& raster, const std::vector<LabelCategory>& categories);

MapLabelResult label_raster(const std::shared_ptr<const Model>& model, const Raster& raster, const std::vector<LabelCategory>& categories,
                            const MapLabelOptions& options);

// A shard's instances as found and its run's settings (map_settings_hash: raster, size, tiles,
// categories, thresholds, model), which every shard must share; `extra` rides along (the
// CLI's outputs).
void write_map_shard(const std::filesystem::path& path, const Raster& raster, const std::vector<LabelCategory>& categories, int shard,
                     int shards, const std::string& settings, const MapLabelResult& result, const std::string& extra_json);

struct MapShard {
  std::filesystem::path raster;
  std::vector<std::string> categories;
  std::string settings_hash, extra_json;
  int shard = 0, shards = 1;
  MapLabelResult result;  // instances as found, with their tiles
  std::string where;      // the shard's folder, for messages
};
MapShard read_map_shard(const std::filesystem::path& path);  // throws kInvalidArgument
// All N shards of one run (each once, same settings) merged across seams: equal to one run.
MapLabelResult merge_map_shards(std::vector<MapShard> shards, const TileOptions& merge);

struct VectorOutput {
  std::filesystem::path path;  // the driver by extension: .gpkg, .geojson/.json, .fgb, .shp
  std::string target_crs;      // "" keeps the raster's; "EPSG:4326", WKT, ... (.geojson: WGS84 always)
};

struct MapPart {
  const Raster* raster;
  const MapLabelResult* result;
};

// One layer per category in a GeoPackage, one layer with a "class" field in the others; fields
// source, class, score, area (map units of the source raster), area_m2, tile. Polygons follow
// pixel edges (holes kept) and are made valid; every part is written in the target CRS (else
// the first raster's). Returns the features written per category. Throws kIo, kInvalidArgument.
std::vector<int> write_map_vectors(const VectorOutput& output, const std::vector<LabelCategory>& categories,
                                   const std::vector<MapPart>& parts);

// A tiled GeoTIFF aligned pixel for pixel with the raster (same size, geotransform and CRS):
// each pixel the category index + 1 of the best-scoring instance covering it, 0 elsewhere
// (nodata). Byte, or UInt16 past 255 categories; sparse, so large empty areas cost nothing.
// A GeoTIFF keeps its block index in memory, so sizes past kMaxClassRasterBlocks blocks are
// refused; check_class_raster_size says so before a run starts.
inline constexpr std::int64_t kMaxClassRasterBlocks = std::int64_t{1} << 24;  // 256 MB of index, ~1.1 terapixels
void check_class_raster_size(const Raster& raster);                           // throws kInvalidArgument naming the size
void write_class_raster(const std::filesystem::path& path, const Raster& raster, const MapLabelResult& result, std::size_t categories);

}  // namespace sam3::geo
