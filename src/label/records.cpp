#include "label/records.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <fstream>

#include "core/hash.h"
#include "sam3/error.h"
#include "sam3/export.h"
#include "export/result_document.h"

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
  return rle_encode(Mask::from_raster(m.width, m.height, m.data));
}

}  // namespace

std::string record_key(const std::string& name) {
  std::string stem;
  for (char c : fs::path(name).replace_extension().generic_string()) {
    stem += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
    if (stem.size() >= 100) break;  // file names stay far below 255 bytes
  }
  return stem + "-" + hex64(fnv1a64(name)).substr(0, 8);
}

void assign_output_stems(std::vector<ItemRecord>& items) {
  const auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  std::map<std::string, int> uses;
  for (size_t i = 0; i < items.size(); ++i) {
    std::string plain, stem;
    for (char c : fs::path(items[i].name).replace_extension().generic_string()) {
      plain += c == '/' ? std::string("__") : std::string(1, c);
    }
    for (char c : plain) stem += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
    if (stem.empty() || stem[0] == '.') stem.insert(0, 1, '_');
    if (stem.size() > 120) stem.resize(120);
    items[i].stem = stem;
    if (stem != plain) items[i].stem.append("-").append(hex64(fnv1a64(items[i].name)), 0, 8);
    ++uses[lower(items[i].stem)];
  }
  for (auto& item : items) {
    if (uses[lower(item.stem)] > 1) item.stem.append("-").append(hex64(fnv1a64(item.name)), 0, 8);
  }
}

SourceIdentity source_identity_of_bytes(const fs::path& path, std::span<const std::uint8_t> bytes) {
  SourceIdentity id;
  id.size = static_cast<std::int64_t>(bytes.size());
  std::error_code ec;
  const auto mtime = fs::last_write_time(path, ec);
  if (!ec) id.mtime_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(mtime.time_since_epoch()).count();
  id.hash = hex64(fnv1a64({reinterpret_cast<const char*>(bytes.data()), bytes.size()}));
  return id;
}

std::string model_fingerprint(const Model& model) {
  std::string all;
  for (const auto& f : model.files()) {
    std::error_code ec;
    const auto size = fs::file_size(f.file, ec);
    all += f.file.filename().string() + ":" + std::to_string(ec ? 0 : size) + ":";
    // The first and last 64 KiB: headers, graph and the weights stored last differ between
    // exports and fine-tunes; reading them is cheap next to loading the model.
    std::ifstream in(f.file, std::ios::binary);
    std::string chunk(65536, '\0');
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    all += hex64(fnv1a64(std::string_view(chunk.data(), static_cast<size_t>(in.gcount()))));
    if (!ec && size > chunk.size()) {
      in.clear();
      in.seekg(static_cast<std::streamoff>(size - chunk.size()));
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      all += hex64(fnv1a64(std::string_view(chunk.data(), static_cast<size_t>(in.gcount()))));
    }
    all += ";";
  }
  return hex64(fnv1a64(all));
}

ojson config_json(const LabelConfig& c, const Model& model) {
  ojson categories = ojson::array();
  for (const auto& cat : c.categories) {
    ojson category = {{"name", cat.name}, {"text", cat.prompt.text}, {"boxes", detail::box_prompts_value(cat.prompt.boxes)}};
    if (const auto& e = cat.everything) {  // only then: folders of text prompts keep their hash
      category["everything"] = {{"points_per_side", e->points_per_side}, {"pred_iou", e->pred_iou_threshold},
                                {"stability", e->stability_threshold}, {"stability_offset", e->stability_offset},
                                {"box_nms", e->box_nms_threshold}, {"object_score", e->object_score_threshold},
                                {"min_area", e->min_area}};
      if (e->crop_layers > 0) {  // only then: runs without crops keep their hash
        category["everything"]["crops"] = {{"layers", e->crop_layers}, {"overlap", e->crop_overlap_ratio},
                                           {"points_downscale", e->crop_points_downscale}, {"nms", e->crop_nms_threshold}};
      }
    }
    categories.push_back(std::move(category));
  }
  const char* mode = c.tiles.mode == TileOptions::Mode::kOff ? "off" : c.tiles.mode == TileOptions::Mode::kAuto ? "auto" : "fixed";
  ojson j = {
      {"version", 1},
      {"categories", categories},
      {"segment", {{"threshold", c.segment.score_threshold}, {"mask_threshold", c.segment.mask_threshold},
                   {"min_area", c.segment.min_area}, {"max_instances", c.segment.max_instances}, {"nms", c.segment.nms_iou}}},
      {"tiles", {{"mode", mode}, {"tile", c.tiles.tile}, {"overlap", c.tiles.overlap}}},
      {"model", {{"layout", layout_name(model.layout())}, {"input_size", model.input_size()},
                 {"fingerprint", model_fingerprint(model)}}},
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
                   {"config", hash},
                   {"source", {{"size", item.source.size}, {"mtime_ns", item.source.mtime_ns}, {"hash", item.source.hash}}},
                   {"instances", instances}};
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

bool has_item(const fs::path& out, const LabelInput& input, const std::string& hash) {
  const auto j = read_json(out / "items" / (record_key(input.name) + ".json"));
  if (j.is_discarded() || !j.is_object() || j.value("config", "") != hash || j.value("name", "") != input.name ||
      !j.contains("source") || !j["source"].is_object()) {
    return false;
  }
  const auto& src = j["source"];
  std::error_code ec;
  const auto size = fs::file_size(input.path, ec);
  if (ec || static_cast<std::int64_t>(size) != src.value("size", std::int64_t{-1})) return false;
  const auto mtime = fs::last_write_time(input.path, ec);
  if (ec) return false;
  const auto mtime_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(mtime.time_since_epoch()).count();
  if (mtime_ns == src.value("mtime_ns", std::int64_t{0})) return true;
  // Touched or copied: the same bytes are the same image.
  std::ifstream in(input.path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return hex64(fnv1a64(bytes)) == src.value("hash", "");
}

void write_input_names(const fs::path& out, const std::vector<std::string>& names) {
  write_file_atomic(out / "inputs.json", nlohmann::json(names).dump(0) + "\n");
}

std::vector<std::string> read_input_names(const fs::path& out) {
  const auto j = read_json(out / "inputs.json");
  if (!j.is_array()) {
    throw Error(ErrorCode::kInvalidArgument,
                (out / "inputs.json").string() + ": missing or damaged; rerun sam3 label on this folder to rebuild it");
  }
  return j.get<std::vector<std::string>>();
}

std::vector<ItemRecord> read_items(const fs::path& out, const std::string& hash, const std::vector<std::string>& names) {
  std::vector<ItemRecord> items;
  for (const auto& name : names) {
    const auto j = read_json(out / "items" / (record_key(name) + ".json"));
    if (j.is_discarded() || !j.is_object() || j.value("config", "") != hash || j.value("name", "") != name) continue;
    ItemRecord r;
    r.name = name;
    r.path = j["path"].get<std::string>();
    r.width = j["width"];
    r.height = j["height"];
    if (const auto src = j.find("source"); src != j.end() && src->is_object()) {
      r.source = {src->value("size", std::int64_t{-1}), src->value("mtime_ns", std::int64_t{0}), src->value("hash", "")};
    }
    for (const auto& ij : j["instances"]) {
      LabeledInstance inst;
      inst.category = ij["category"];
      inst.score = ij["score"];
      const auto& b = ij["box"];
      inst.box = {b[0], b[1], b[2], b[3]};
      const auto& c = ij["crop"];
      const Mask crop = rle_decode(ij["counts"], c[3], c[2]);
      inst.mask = {c[0], c[1], c[2], c[3], r.width, r.height, crop.to_raster()};
      r.instances.push_back(std::move(inst));
    }
    items.push_back(std::move(r));
  }
  std::sort(items.begin(), items.end(), [](const ItemRecord& a, const ItemRecord& b) { return a.name < b.name; });
  return items;
}

std::vector<FailureRecord> read_failures(const fs::path& out, const std::vector<std::string>& names) {
  std::vector<FailureRecord> failures;
  for (const auto& name : names) {
    const auto j = read_json(out / "failed" / (record_key(name) + ".json"));
    if (j.is_discarded() || !j.is_object() || j.value("name", "") != name) continue;
    failures.push_back({name, j.value("path", ""), j.value("code", ""), j.value("message", "")});
  }
  std::sort(failures.begin(), failures.end(), [](const FailureRecord& a, const FailureRecord& b) { return a.name < b.name; });
  return failures;
}

std::vector<Polygon> instance_polygons(const LabeledInstance& inst, double simplify) {
  const auto& c = inst.mask;
  auto polys = mask_to_polygons(Mask::from_raster(c.width, c.height, c.data), simplify);
  for (auto& p : polys) {
    for (auto& pt : p.outer) pt.x += c.x0, pt.y += c.y0;
    for (auto& h : p.holes)
      for (auto& pt : h) pt.x += c.x0, pt.y += c.y0;
  }
  return polys;
}

}  // namespace sam3::label
