#include "label/records.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <fstream>
#include <type_traits>

#include "core/hash.h"
#include "core/json_integer.h"
#include "label/instance_record.h"
#include "sam3/error.h"
#include "sam3/export.h"
#include "pure/result_document.h"

namespace sam3::label {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in, nullptr, false);
}

// A record's field of type T, or `fallback` when it is missing or of another type (records are
// read back from disk: a damaged one is redone or named, never an exception from the parser).
template <typename T>
T field_or(const nlohmann::json& j, const char* key, T fallback) {
  if (!j.is_object() || !j.contains(key)) return fallback;
  const auto& v = j[key];
  if constexpr (std::is_same_v<T, std::string>) {
    return v.is_string() ? v.get<std::string>() : fallback;
  } else {
    return v.is_number_integer() ? v.get<T>() : fallback;
  }
}

// A record's fields checked in their own types: records are read back from disk.
ItemRecord item_of(const nlohmann::json& j, const std::string& name, size_t categories) {
  const auto bad = [](const std::string& what) { throw Error(ErrorCode::kInvalidArgument, "a damaged record: " + what); };
  ItemRecord r;
  r.name = name;
  if (!j.contains("path") || !j["path"].is_string()) bad("no \"path\"");
  r.path = j["path"].get<std::string>();
  for (const auto& [key, side] : {std::pair{"width", &r.width}, std::pair{"height", &r.height}}) {
    const auto n = j.contains(key) ? core::json_integer_in(j[key], 0, 1 << 30) : std::nullopt;
    if (!n) bad(std::string("no valid \"") + key + "\"");
    *side = static_cast<int>(*n);
  }
  if (const auto src = j.find("source"); src != j.end() && src->is_object()) {
    r.source = {field_or<std::int64_t>(*src, "size", -1), field_or<std::int64_t>(*src, "mtime_ns", 0),
                field_or<std::string>(*src, "hash", "")};
  }
  if (!j.contains("instances") || !j["instances"].is_array()) bad("no \"instances\" list");
  for (const auto& ij : j["instances"]) r.instances.push_back(instance_from_record(ij, r.width, r.height, categories));
  return r;
}

}  // namespace

std::string record_key(const std::string& name) {
  std::string stem;
  for (char c : fs::path(name).replace_extension().generic_string()) {
    stem += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
    if (stem.size() >= 100) break;  // file names stay far below 255 bytes
  }
  return stem + "-" + core::hex64(core::fnv1a64(name)).substr(0, 8);
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
    if (stem != plain) items[i].stem.append("-").append(core::hex64(core::fnv1a64(items[i].name)), 0, 8);
    ++uses[lower(items[i].stem)];
  }
  for (auto& item : items) {
    if (uses[lower(item.stem)] > 1) item.stem.append("-").append(core::hex64(core::fnv1a64(item.name)), 0, 8);
  }
}

SourceIdentity source_identity_of_bytes(const fs::path& path, std::span<const std::uint8_t> bytes) {
  SourceIdentity id;
  id.size = static_cast<std::int64_t>(bytes.size());
  std::error_code ec;
  const auto mtime = fs::last_write_time(path, ec);
  if (!ec) id.mtime_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(mtime.time_since_epoch()).count();
  id.hash = core::hex64(core::fnv1a64({reinterpret_cast<const char*>(bytes.data()), bytes.size()}));
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
    all += core::hex64(core::fnv1a64(std::string_view(chunk.data(), static_cast<size_t>(in.gcount()))));
    if (!ec && size > chunk.size()) {
      in.clear();
      in.seekg(static_cast<std::streamoff>(size - chunk.size()));
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      all += core::hex64(core::fnv1a64(std::string_view(chunk.data(), static_cast<size_t>(in.gcount()))));
    }
    all += ";";
  }
  return core::hex64(core::fnv1a64(all));
}

ojson config_json(const LabelConfig& c, const Model& model) {
  ojson categories = ojson::array();
  for (const auto& cat : c.categories) {
    ojson category = {{"name", cat.name}, {"text", cat.prompt.text}, {"boxes", pure::box_prompts_value(cat.prompt.boxes)}};
    if (const auto& e = cat.everything) {  // only then: folders of text prompts keep their hash
      category["everything"] = {{"points_per_side", e->points_per_side},
                                {"pred_iou", e->pred_iou_threshold},
                                {"stability", e->stability_threshold},
                                {"stability_offset", e->stability_offset},
                                {"box_nms", e->box_nms_threshold},
                                {"object_score", e->object_score_threshold},
                                {"min_area", e->min_area}};
      if (e->crop_layers > 0) {  // only then: runs without crops keep their hash
        category["everything"]["crops"] = {{"layers", e->crop_layers},
                                           {"overlap", e->crop_overlap_ratio},
                                           {"points_downscale", e->crop_points_downscale},
                                           {"nms", e->crop_nms_threshold}};
      }
    }
    categories.push_back(std::move(category));
  }
  const char* mode = c.tiles.mode == TileOptions::Mode::kOff ? "off" : c.tiles.mode == TileOptions::Mode::kAuto ? "auto" : "fixed";
  ojson j = {
      {"version", 1},
      {"categories", categories},
      {"segment",
       {{"threshold", c.segment.score_threshold},
        {"mask_threshold", c.segment.mask_threshold},
        {"min_area", c.segment.min_area},
        {"max_instances", c.segment.max_instances},
        {"nms", c.segment.nms_iou}}},
      {"tiles", {{"mode", mode}, {"tile", c.tiles.tile}, {"overlap", c.tiles.overlap}}},
      {"model", {{"layout", layout_name(model.layout())}, {"input_size", model.input_size()}, {"fingerprint", model_fingerprint(model)}}},
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
  return core::hex64(core::fnv1a64(core.dump()));
}

void write_config(const fs::path& out, const ojson& config) { write_file_atomic(out / "config.json", config.dump(2) + "\n"); }

nlohmann::json read_config(const fs::path& out) {
  auto j = read_json(out / "config.json");
  const auto is_named = [](const nlohmann::json& c) { return c.is_object() && c.contains("name") && c["name"].is_string(); };
  if (j.is_discarded() || !j.is_object() || !j.contains("hash") || !j["hash"].is_string() || !j.contains("categories") ||
      !j["categories"].is_array() || j["categories"].empty() || !std::all_of(j["categories"].begin(), j["categories"].end(), is_named) ||
      !j.contains("outputs") || !j["outputs"].is_object()) {
    throw Error(ErrorCode::kInvalidArgument, (out / "config.json").string() + ": missing or damaged; is this a sam3 label folder?");
  }
  return j;
}

void write_item(const fs::path& out, const ItemRecord& item, const std::string& hash) {
  ojson instances = ojson::array();
  for (const auto& inst : item.instances) {
    instances.push_back(instance_record_json(inst));
  }
  const ojson j = {
      {"name", item.name},     {"path", item.path.string()},
      {"width", item.width},   {"height", item.height},
      {"config", hash},        {"source", {{"size", item.source.size}, {"mtime_ns", item.source.mtime_ns}, {"hash", item.source.hash}}},
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
  if (j.is_discarded() || !j.is_object() || field_or<std::string>(j, "config", "") != hash ||
      field_or<std::string>(j, "name", "") != input.name || !j.contains("source") || !j["source"].is_object()) {
    return false;
  }
  const auto& src = j["source"];
  std::error_code ec;
  const auto size = fs::file_size(input.path, ec);
  if (ec || static_cast<std::int64_t>(size) != field_or<std::int64_t>(src, "size", -1)) return false;
  const auto mtime = fs::last_write_time(input.path, ec);
  if (ec) return false;
  const auto mtime_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(mtime.time_since_epoch()).count();
  if (mtime_ns == field_or<std::int64_t>(src, "mtime_ns", 0)) return true;
  // Touched or copied: the same bytes are the same image.
  std::ifstream in(input.path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return core::hex64(core::fnv1a64(bytes)) == field_or<std::string>(src, "hash", "");
}

void write_input_names(const fs::path& out, const std::vector<std::string>& names) {
  write_file_atomic(out / "inputs.json", nlohmann::json(names).dump(0) + "\n");
}

std::vector<std::string> read_input_names(const fs::path& out) {
  const auto j = read_json(out / "inputs.json");
  if (!j.is_array() || !std::all_of(j.begin(), j.end(), [](const nlohmann::json& n) { return n.is_string(); })) {
    throw Error(ErrorCode::kInvalidArgument,
                (out / "inputs.json").string() + ": missing or damaged; rerun sam3 label on this folder to rebuild it");
  }
  return j.get<std::vector<std::string>>();
}

void write_shard(const fs::path& out, const LabelShard& shard) {
  const ojson j = {{"shard", shard.k}, {"shards", shard.n}, {"inputs_id", shard.inputs_id}, {"inputs", shard.inputs}};
  write_file_atomic(out / "shard.json", j.dump(1) + "\n");
}

std::optional<LabelShard> read_shard(const fs::path& out) {
  const auto j = read_json(out / "shard.json");
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  const auto k = j.find("shard"), n = j.find("shards"), id = j.find("inputs_id"), count = j.find("inputs");
  // Each in its own JSON type and range before use: the file is read back from disk.
  if (k == j.end() || n == j.end() || id == j.end() || count == j.end() || !id->is_string()) return std::nullopt;
  const auto n64 = core::json_integer_in(*n, 1, std::numeric_limits<int>::max());
  const auto k64 = n64 ? core::json_integer_in(*k, 1, *n64) : std::nullopt;
  const auto inputs = core::json_integer_in(*count, 0, std::numeric_limits<std::int64_t>::max());
  if (!k64 || !inputs) return std::nullopt;
  return LabelShard{static_cast<int>(*k64), static_cast<int>(*n64), id->get<std::string>(), *inputs};
}

std::string input_list_id(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  std::string all;
  for (const auto& n : names) all += n + '\0';
  return core::hex64(core::fnv1a64(all));
}

std::vector<ItemRecord> read_items(const fs::path& out, const std::string& hash, const std::vector<std::string>& names, size_t categories) {
  std::vector<ItemRecord> items;
  for (const auto& name : names) {
    const fs::path file = out / "items" / (record_key(name) + ".json");
    const nlohmann::json j = read_json(file);
    if (j.is_discarded() || field_or<std::string>(j, "config", "") != hash || field_or<std::string>(j, "name", "") != name) continue;
    try {
      items.push_back(item_of(j, name, categories));
    } catch (const Error& e) {
      throw Error(ErrorCode::kInvalidArgument,
                  file.string() + ": " + e.what() + "; delete it and run sam3 label again on " + "this folder to label " + name + " anew");
    }
  }
  std::sort(items.begin(), items.end(), [](const ItemRecord& a, const ItemRecord& b) { return a.name < b.name; });
  return items;
}

std::vector<FailureRecord> read_failures(const fs::path& out, const std::vector<std::string>& names) {
  std::vector<FailureRecord> failures;
  for (const auto& name : names) {
    const auto j = read_json(out / "failed" / (record_key(name) + ".json"));
    if (j.is_discarded() || field_or<std::string>(j, "name", "") != name) continue;
    failures.push_back(
        {name, field_or<std::string>(j, "path", ""), field_or<std::string>(j, "code", ""), field_or<std::string>(j, "message", "")});
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
