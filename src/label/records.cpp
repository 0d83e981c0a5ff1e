#include "label/records.h"

#include <algorithm>
#include <fstream>

#include "core/hash.h"
#include "sam3/error.h"
#include "sam3/export.h"
#include "sam3/result_json.h"

namespace sam3::label {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in, nullptr, false);
}

// Crop counts of a MaskCrop (column-major inside the crop), as a string.
std::string crop_rle(const MaskCrop& m) {
  return rle_encode(Mask{m.width, m.height, m.data});
}

}  // namespace

std::string output_stem(const std::string& name) {
  std::string s = fs::path(name).replace_extension().generic_string();
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '/') out += "__";
    else out += (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '-' || s[i] == '_' || s[i] == '.') ? s[i] : '_';
  }
  return out;
}

std::string record_key(const std::string& name) { return output_stem(name) + "-" + hex64(fnv1a64(name)).substr(0, 8); }

ojson config_json(const LabelConfig& c, const Model& model) {
  ojson categories = ojson::array();
  for (const auto& cat : c.categories) {
    categories.push_back({{"name", cat.name}, {"text", cat.prompt.text}, {"boxes", box_prompts_json(cat.prompt.boxes)}});
  }
  const char* mode = c.tiles.mode == TileOptions::Mode::kOff ? "off" : c.tiles.mode == TileOptions::Mode::kAuto ? "auto" : "fixed";
  ojson j = {
      {"version", 1},
      {"categories", categories},
      {"segment", {{"threshold", c.segment.score_threshold}, {"mask_threshold", c.segment.mask_threshold},
                   {"min_area", c.segment.min_area}, {"max_instances", c.segment.max_instances}, {"nms", c.segment.nms_iou}}},
      {"tiles", {{"mode", mode}, {"tile", c.tiles.tile}, {"overlap", c.tiles.overlap}}},
      {"model", {{"layout", layout_name(model.layout())}, {"input_size", model.input_size()}}},
      {"max_pixels", c.load.max_pixels},
  };
  j["hash"] = config_hash(j);
  j["outputs"] = {{"formats", c.formats}, {"coco_polygons", c.coco_polygons}, {"simplify", c.simplify}, {"semantic", c.semantic}};
  return j;
}

std::string config_hash(const ojson& config) {
  ojson core = config;
  core.erase("hash");
  core.erase("outputs");
  return hex64(fnv1a64(core.dump()));
}

void write_config(const fs::path& out, const ojson& config) { write_file_atomic(out / "config.json", config.dump(2) + "\n"); }

nlohmann::json read_config(const fs::path& out) {
  auto j = read_json(out / "config.json");
  if (j.is_discarded() || !j.is_object() || !j.contains("hash")) {
    throw Error(ErrorCode::kInvalidArgument, (out / "config.json").string() + ": missing or damaged; is this a sam3 label folder?");
  }
  return j;
}

void write_item(const fs::path& out, const ItemRecord& item, const std::string& hash) {
  ojson instances = ojson::array();
  for (const auto& inst : item.instances) {
    instances.push_back({{"category", inst.category},
                         {"score", inst.score},
                         {"box", {inst.box.x0, inst.box.y0, inst.box.x1, inst.box.y1}},
                         {"crop", {inst.mask.x0, inst.mask.y0, inst.mask.width, inst.mask.height}},
                         {"counts", crop_rle(inst.mask)}});
  }
  const ojson j = {{"name", item.name}, {"path", item.path.string()}, {"width", item.width}, {"height", item.height},
                   {"config", hash}, {"instances", instances}};
  write_file_atomic(out / "items" / (record_key(item.name) + ".json"), j.dump() + "\n");
}

void write_failure(const fs::path& out, const FailureRecord& f) {
  const ojson j = {{"name", f.name}, {"path", f.path.string()}, {"code", f.code}, {"message", f.message}};
  write_file_atomic(out / "failed" / (record_key(f.name) + ".json"), j.dump() + "\n");
}

void remove_failure(const fs::path& out, const std::string& name) {
  std::error_code ec;
  fs::remove(out / "failed" / (record_key(name) + ".json"), ec);
}

bool has_item(const fs::path& out, const std::string& name, const std::string& hash) {
  const auto p = out / "items" / (record_key(name) + ".json");
  if (!fs::exists(p)) return false;
  const auto j = read_json(p);
  return !j.is_discarded() && j.value("config", "") == hash && j.value("name", "") == name;
}

std::vector<ItemRecord> read_items(const fs::path& out, const std::string& hash) {
  std::vector<ItemRecord> items;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out / "items", ec)) {
    if (e.path().extension() != ".json") continue;
    const auto j = read_json(e.path());
    if (j.is_discarded() || j.value("config", "") != hash) continue;
    ItemRecord r;
    r.name = j["name"];
    r.path = j["path"].get<std::string>();
    r.width = j["width"];
    r.height = j["height"];
    for (const auto& ij : j["instances"]) {
      LabeledInstance inst;
      inst.category = ij["category"];
      inst.score = ij["score"];
      const auto& b = ij["box"];
      inst.box = {b[0], b[1], b[2], b[3]};
      const auto& c = ij["crop"];
      const Mask crop = rle_decode(ij["counts"], c[3], c[2]);
      inst.mask = {c[0], c[1], c[2], c[3], r.width, r.height, crop.data};
      r.instances.push_back(std::move(inst));
    }
    items.push_back(std::move(r));
  }
  std::sort(items.begin(), items.end(), [](const ItemRecord& a, const ItemRecord& b) { return a.name < b.name; });
  return items;
}

std::vector<FailureRecord> read_failures(const fs::path& out) {
  std::vector<FailureRecord> failures;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out / "failed", ec)) {
    const auto j = read_json(e.path());
    if (j.is_discarded()) continue;
    failures.push_back({j["name"], j["path"].get<std::string>(), j["code"], j["message"]});
  }
  std::sort(failures.begin(), failures.end(), [](const FailureRecord& a, const FailureRecord& b) { return a.name < b.name; });
  return failures;
}

std::vector<Polygon> instance_polygons(const LabeledInstance& inst, double simplify) {
  const auto& c = inst.mask;
  auto polys = mask_to_polygons(Mask{c.width, c.height, c.data}, simplify);
  for (auto& p : polys) {
    for (auto& pt : p.outer) pt.x += c.x0, pt.y += c.y0;
    for (auto& h : p.holes)
      for (auto& pt : h) pt.x += c.x0, pt.y += c.y0;
  }
  return polys;
}

}  // namespace sam3::label
