// Map shards on disk: the instances one shard found (mask crops as COCO RLE of the crop) and
// the settings every shard of a run must share.
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "geo/seam_merge.h"
#include "label/records.h"
#include "sam3/error.h"
#include "sam3/export.h"
#include "geo/map_label.h"

namespace sam3 {

namespace {

using json = nlohmann::ordered_json;

// 2: the grid as its four numbers instead of every tile listed.
constexpr int kShardVersion = 2;

json instance_json(const LabeledInstance& inst) {
  const MaskCrop& m = inst.mask;
  return {{"category", inst.category}, {"score", inst.score},
          {"box", {inst.box.x0, inst.box.y0, inst.box.x1, inst.box.y1}},
          {"crop", {m.x0, m.y0, m.width, m.height}},
          {"counts", rle_encode(Mask::from_raster(m.width, m.height, m.data))}};
}

LabeledInstance instance_of(const json& e, int width, int height) {
  LabeledInstance inst;
  inst.category = e.at("category").get<int>();
  inst.score = e.at("score").get<float>();
  const auto& b = e.at("box");
  inst.box = {b[0].get<float>(), b[1].get<float>(), b[2].get<float>(), b[3].get<float>()};
  const auto& c = e.at("crop");
  const Mask m = rle_decode(e.at("counts").get<std::string>(), c[3].get<int>(), c[2].get<int>());
  inst.mask = {c[0].get<int>(), c[1].get<int>(), m.width(), m.height(), width, height, m.to_raster()};
  return inst;
}

json grid_json(const TileGrid& g) { return {g.width(), g.height(), g.tile(), g.overlap()}; }

}  // namespace

std::string map_settings_hash(const Model& model, const Raster& raster, const std::vector<LabelCategory>& categories,
                              const MapLabelOptions& o, const TileGrid& grid) {
  json cats = json::array();
  for (const auto& c : categories) {
    json boxes = json::array();
    for (const auto& b : c.prompt.boxes) boxes.push_back({b.box.x0, b.box.y0, b.box.x1, b.box.y1, b.positive});
    json cat = {c.name, c.prompt.text, boxes};
    if (const auto& e = c.everything) {  // only then: runs of text prompts keep their hash
      cat.push_back({e->points_per_side, e->pred_iou_threshold, e->stability_threshold, e->stability_offset,
                     e->box_nms_threshold, e->object_score_threshold, e->min_area});
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
  const json j = {{"raster", std::filesystem::absolute(raster.path()).string()},
                  {"file", {ec ? 0 : bytes, ec ? 0 : mtime}},
                  {"size", {raster.width(), raster.height()}},
                  {"geotransform", raster.geotransform()},
                  {"bands", raster.bands()},
                  {"scales", scales},
                  {"categories", cats},
                  {"segment", {o.segment.score_threshold, o.segment.mask_threshold, o.segment.min_area,
                               o.segment.max_instances, o.segment.nms_iou}},
                  {"grid", grid_json(grid)},
                  {"model", label::model_fingerprint(model)}};
  return label::config_hash(j);
}

bool MapTileStore::load(int tile, int width, int height, TileRecord* record) const {
  std::ifstream in(dir_ / ("tile-" + std::to_string(tile) + ".json"));
  if (!in) return false;
  const json j = json::parse(in, nullptr, false);
  if (!j.is_object() || j.value("settings", "") != settings_) return false;  // another run's: redone
  try {
    TileRecord r;
    r.nodata = j.at("nodata").get<bool>();
    r.area_km2 = j.at("area_km2").get<double>();
    for (const auto& e : j.at("instances")) r.instances.push_back(instance_of(e, width, height));
    *record = std::move(r);
    return true;
  } catch (const std::exception&) {
    return false;  // damaged: the tile is done again
  }
}

void MapTileStore::save(int tile, const TileRecord& record) const {
  json instances = json::array();
  for (const auto& inst : record.instances) instances.push_back(instance_json(inst));
  std::filesystem::create_directories(dir_);
  write_file_atomic(dir_ / ("tile-" + std::to_string(tile) + ".json"),
                    json{{"settings", settings_}, {"nodata", record.nodata}, {"area_km2", record.area_km2},
                         {"instances", instances}}.dump());
}

void write_map_shard(const std::filesystem::path& path, const Raster& raster, const std::vector<LabelCategory>& categories,
                     int shard, int shards, const std::string& settings, const MapLabelResult& result,
                     const std::string& extra_json) {
  json instances = json::array();
  for (size_t i = 0; i < result.instances.size(); ++i) {
    json e = instance_json(result.instances[i]);
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
  if (j.value("sam3_map_shard", 0) != kShardVersion) {
    throw Error(ErrorCode::kInvalidArgument, path.string() + ": a map shard of another sam3 version; run its shard again "
                                                             "with this one (the finished tiles are redone)");
  }
  try {
    MapShard s;
    s.raster = j.at("raster").get<std::string>();
    s.categories = j.at("categories").get<std::vector<std::string>>();
    s.settings_hash = j.at("settings").get<std::string>();
    s.extra_json = j.at("extra").dump();
    s.shard = j.at("shard").get<int>();
    s.shards = j.at("shards").get<int>();
    const int w = j.at("size")[0].get<int>(), h = j.at("size")[1].get<int>();
    const auto& g = j.at("grid");
    s.result.grid = TileGrid(g.at(0).get<int>(), g.at(1).get<int>(), g.at(2).get<int>(), g.at(3).get<int>());
    s.result.tiles_skipped = j.at("tiles_skipped").get<std::int64_t>();
    s.result.area_km2 = j.at("area_km2").get<double>();
    for (const auto& e : j.at("instances")) {
      s.result.instances.push_back(instance_of(e, w, h));
      s.result.tile_of_instance.push_back(e.at("tile").get<int>());
    }
    return s;
  } catch (const std::exception& e) {  // JSON that is not a shard's, or a grid that is no grid
    throw Error(ErrorCode::kInvalidArgument, path.string() + ": a damaged map shard (" + e.what() + ")");
  }
}

MapLabelResult merge_map_shards(std::vector<MapShard> shards, const TileOptions& merge) {
  if (shards.empty()) throw Error(ErrorCode::kInvalidArgument, "no map shard to merge");
  const int n = shards.front().shards;
  std::vector<bool> seen(static_cast<size_t>(std::max(n, 0)), false);
  for (const auto& s : shards) {
    if (s.settings_hash != shards.front().settings_hash || s.shards != n) {
      throw Error(ErrorCode::kInvalidArgument, "the shards are not of one run (another raster, prompts, boxes, thresholds, "
                                               "bands, scale, GSD, tiles or model); merge the shards of one "
                                               "'sam3 label --shard K/N' run");
    }
    if (s.extra_json != shards.front().extra_json) {  // the outputs asked for: formats, --t-srs, --raster-out
      throw Error(ErrorCode::kInvalidArgument, "the shards ask for different outputs (--format, --t-srs or --raster-out); "
                                               "run every shard with the same options");
    }
    if (s.shard < 0 || s.shard >= n || seen[static_cast<size_t>(s.shard)]) {
      throw Error(ErrorCode::kInvalidArgument, "shard " + std::to_string(s.shard + 1) + "/" + std::to_string(n) +
                                                   " is given twice");
    }
    seen[static_cast<size_t>(s.shard)] = true;
  }
  for (int k = 0; k < n; ++k) {
    if (!seen[static_cast<size_t>(k)]) {
      throw Error(ErrorCode::kInvalidArgument, "shard " + std::to_string(k + 1) + "/" + std::to_string(n) +
                                                   " is missing; run it, then merge all " + std::to_string(n));
    }
  }
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

}  // namespace sam3
