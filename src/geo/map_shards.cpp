// Map shards on disk: the instances one shard found (mask crops as COCO RLE of the crop) and
// the settings every shard of a run must share.
#include <algorithm>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/json_integer.h"
#include "geo/seam_merge.h"
#include "label/instance_record.h"
#include "label/records.h"
#include "label/shard_set.h"
#include "sam3/error.h"
#include "sam3/export.h"
#include "geo/map_label.h"

namespace sam3::geo {

namespace {

using json = nlohmann::ordered_json;

// 2: the grid as its four numbers instead of every tile listed.
constexpr int kShardVersion = 2;

json grid_json(const label::TileGrid& g) { return {g.width(), g.height(), g.tile(), g.overlap()}; }

}  // namespace

std::string map_settings_hash(const Model& model, const Raster& raster, const std::vector<LabelCategory>& categories,
                              const MapLabelOptions& o, const label::TileGrid& grid) {
  json cats = json::array();
  for (const auto& c : categories) {
    json boxes = json::array();
    for (const auto& b : c.prompt.boxes) boxes.push_back({b.box.x0, b.box.y0, b.box.x1, b.box.y1, b.positive});
    json cat = {c.name, c.prompt.text, boxes};
    if (const auto& e = c.everything) {  // only then: runs of text prompts keep their hash
      cat.push_back({e->points_per_side, e->pred_iou_threshold, e->stability_threshold, e->stability_offset, e->box_nms_threshold,
                     e->object_score_threshold, e->min_area});
      if (e->crop_layers > 0) {  // only then: runs without crops keep their hash
        cat.push_back({e->crop_layers, e->crop_overlap_ratio, e->crop_points_downscale, e->crop_nms_threshold});
      }
    }
    cats.push_back(std::move(cat));
  }
  json scales = json::array();
  for (const auto& s : raster.scales()) scales.push_back({s.offset, s.factor});
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(raster.path(), ec);
  const auto mtime = std::filesystem::last_write_time(raster.path(), ec).time_since_epoch().count();
  const json j = {
      {"raster", std::filesystem::absolute(raster.path()).string()},
      {"file", {ec ? 0 : bytes, ec ? 0 : mtime}},
      {"size", {raster.width(), raster.height()}},
      {"geotransform", raster.geotransform()},
      {"bands", raster.bands()},
      {"scales", scales},
      {"categories", cats},
      {"segment", {o.segment.score_threshold, o.segment.mask_threshold, o.segment.min_area, o.segment.max_instances, o.segment.nms_iou}},
      {"grid", grid_json(grid)},
      {"model", label::model_fingerprint(model)}};
  return label::config_hash(j);
}

bool MapTileStore::load(int tile, int width, int height, size_t categories, TileRecord* record) const {
  std::ifstream in(dir_ / ("tile-" + std::to_string(tile) + ".json"));
  if (!in) return false;
  const json j = json::parse(in, nullptr, false);
  // Another run's, or damaged: the tile is done again. (value() would throw on a "settings" of
  // another type: found by shard_records_fuzz.)
  const auto settings = j.is_object() ? j.find("settings") : j.end();
  if (settings == j.end() || !settings->is_string() || settings->get_ref<const std::string&>() != settings_) return false;
  try {
    TileRecord r;
    r.nodata = j.at("nodata").get<bool>();
    r.area_km2 = j.at("area_km2").get<double>();
    for (const auto& e : j.at("instances")) r.instances.push_back(label::instance_from_record(e, width, height, categories));
    *record = std::move(r);
    return true;
  } catch (const std::exception&) {  // nlohmann's type errors and sam3's
    return false;                    // damaged: the tile is done again
  }
}

void MapTileStore::save(int tile, const TileRecord& record) const {
  json instances = json::array();
  for (const auto& inst : record.instances) instances.push_back(label::instance_record_json(inst));
  std::filesystem::create_directories(dir_);
  write_file_atomic(
      dir_ / ("tile-" + std::to_string(tile) + ".json"),
      json{{"settings", settings_}, {"nodata", record.nodata}, {"area_km2", record.area_km2}, {"instances", instances}}.dump());
}

void write_map_shard(const std::filesystem::path& path, const Raster& raster, const std::vector<LabelCategory>& categories, int shard,
                     int shards, const std::string& settings, const MapLabelResult& result, const std::string& extra_json) {
  json instances = json::array();
  for (size_t i = 0; i < result.instances.size(); ++i) {
    json e = label::instance_record_json(result.instances[i]);
    e["tile"] = result.tile_of_instance[i];
    instances.push_back(std::move(e));
  }
  json names = json::array();
  for (const auto& c : categories) names.push_back(c.name);
  const json j = {{"sam3_map_shard", kShardVersion},
                  {"raster", std::filesystem::absolute(raster.path()).string()},
                  {"size", {raster.width(), raster.height()}},
                  {"shard", shard},
                  {"shards", shards},
                  {"settings", settings},
                  {"categories", names},
                  {"grid", grid_json(result.grid)},
                  {"tiles_skipped", result.tiles_skipped},
                  {"area_km2", result.area_km2},
                  {"extra", json::parse(extra_json.empty() ? "{}" : extra_json)},
                  {"instances", instances}};
  write_file_atomic(path, j.dump());
}

MapShard read_map_shard(const std::filesystem::path& path) {
  std::ifstream in(path);
  const json j = json::parse(in, nullptr, false);
  if (!j.is_object() || !j.contains("sam3_map_shard")) {
    throw Error(ErrorCode::kInvalidArgument, path.string() + ": not a sam3 map shard (written by sam3 label --shard on a raster)");
  }
  if (j["sam3_map_shard"] != kShardVersion) {
    throw Error(ErrorCode::kInvalidArgument, path.string() +
                                                 ": a map shard of another sam3 version; run its shard again "
                                                 "with this one (the finished tiles are redone)");
  }
  try {
    MapShard s;
    s.raster = j.at("raster").get<std::string>();
    s.categories = j.at("categories").get<std::vector<std::string>>();
    s.settings_hash = j.at("settings").get<std::string>();
    s.extra_json = j.at("extra").dump();
    // Counts and sizes are read in their own type and checked before they index anything.
    const auto count = [&](const json& v, std::int64_t lo, std::int64_t hi, const char* what) {
      const auto n = core::json_integer_in(v, lo, hi);
      if (!n) throw Error(ErrorCode::kInvalidArgument, std::string(what) + " " + v.dump() + " is out of range");
      return *n;
    };
    constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();
    s.shards = static_cast<int>(count(j.at("shards"), 1, kMaxInt, "shards"));
    s.shard = static_cast<int>(count(j.at("shard"), 0, s.shards - 1, "shard"));
    s.where = path.parent_path().string();
    const json& size = j.at("size");
    if (!size.is_array() || size.size() != 2) throw Error(ErrorCode::kInvalidArgument, "size is not [width, height]");
    const int w = static_cast<int>(count(size[0], 1, kMaxInt, "width")), h = static_cast<int>(count(size[1], 1, kMaxInt, "height"));
    const json& g = j.at("grid");
    if (!g.is_array() || g.size() != 4) throw Error(ErrorCode::kInvalidArgument, "grid is not [width, height, tile, overlap]");
    const auto side = [&](size_t k, std::int64_t lo, const char* what) { return static_cast<int>(count(g[k], lo, kMaxInt, what)); };
    s.result.grid = label::TileGrid(side(0, 1, "grid width"), side(1, 1, "grid height"), side(2, 1, "tile"), side(3, 0, "overlap"));
    if (s.result.grid.width() != w || s.result.grid.height() != h) {
      throw Error(ErrorCode::kInvalidArgument, "its grid is not of its raster's size");
    }
    s.result.tiles_skipped = count(j.at("tiles_skipped"), 0, s.result.grid.size(), "tiles_skipped");
    s.result.area_km2 = j.at("area_km2").get<double>();
    const std::int64_t last_tile = std::min<std::int64_t>(s.result.grid.size() - 1, kMaxInt);
    for (const auto& e : j.at("instances")) {
      s.result.instances.push_back(label::instance_from_record(e, w, h, s.categories.size()));
      s.result.tile_of_instance.push_back(static_cast<int>(count(e.at("tile"), 0, last_tile, "tile")));
    }
    return s;
  } catch (const std::exception& e) {  // JSON that is not a shard's, or a grid that is no grid
    throw Error(ErrorCode::kInvalidArgument, path.string() + ": a damaged map shard (" + e.what() + ")");
  }
}

MapLabelResult merge_map_shards(std::vector<MapShard> shards, const TileOptions& merge) {
  if (shards.empty()) throw Error(ErrorCode::kInvalidArgument, "no map shard to merge");
  std::vector<label::ShardNumber> numbers;
  for (const auto& s : shards) {
    if (s.settings_hash != shards.front().settings_hash) {
      throw Error(ErrorCode::kInvalidArgument,
                  "the shards are not of one run (another raster, prompts, boxes, thresholds, "
                  "bands, scale, GSD, tiles or model); merge the shards of one "
                  "'sam3 label --shard K/N' run");
    }
    if (s.extra_json != shards.front().extra_json) {  // the outputs asked for: formats, --t-srs, --raster-out
      throw Error(ErrorCode::kInvalidArgument,
                  "the shards ask for different outputs (--format, --t-srs or --raster-out); "
                  "run every shard with the same options");
    }
    numbers.push_back({s.shard + 1, s.shards, s.where});
  }
  label::check_shard_set(numbers);  // one N, each K once, none missing: as image shards
  // In tile order, as one run finds them: the merge then sees the same instances in the same order.
  struct Found {
    int tile;
    size_t shard, index;
  };
  std::vector<Found> order;
  for (size_t s = 0; s < shards.size(); ++s) {
    for (size_t i = 0; i < shards[s].result.instances.size(); ++i) order.push_back({shards[s].result.tile_of_instance[i], s, i});
  }
  std::stable_sort(order.begin(), order.end(), [](const Found& a, const Found& b) { return a.tile < b.tile; });
  MapLabelResult all;
  all.grid = shards.front().result.grid;
  for (const auto& s : shards) all.tiles_skipped += s.result.tiles_skipped, all.area_km2 += s.result.area_km2;
  for (const auto& f : order) {
    all.instances.push_back(std::move(shards[f.shard].result.instances[f.index]));
    all.tile_of_instance.push_back(f.tile);
  }
  return merged(std::move(all), merge);
}

}  // namespace sam3::geo
