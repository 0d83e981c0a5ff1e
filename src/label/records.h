// The files of a label output folder: config.json and the per-image records.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sam3/labeler.h"
#include "sam3/polygons.h"

namespace sam3::label {

struct ItemRecord {
  std::string name;
  std::filesystem::path path;
  int width = 0, height = 0;
  std::vector<LabeledInstance> instances;
};

struct FailureRecord {
  std::string name;
  std::filesystem::path path;
  std::string code, message;
};

std::string record_key(const std::string& name);  // file-system-safe, unique per name

nlohmann::ordered_json config_json(const LabelConfig& config, const Model& model);
// Hash of the settings that change results (categories, thresholds, tiling, model input).
std::string config_hash(const nlohmann::ordered_json& config);
void write_config(const std::filesystem::path& out, const nlohmann::ordered_json& config);
nlohmann::json read_config(const std::filesystem::path& out);  // throws kInvalidArgument if absent

void write_item(const std::filesystem::path& out, const ItemRecord& item, const std::string& hash);
void write_failure(const std::filesystem::path& out, const FailureRecord& failure);
void remove_failure(const std::filesystem::path& out, const std::string& name);
bool has_item(const std::filesystem::path& out, const std::string& name, const std::string& hash);

// Records of this configuration, sorted by name.
std::vector<ItemRecord> read_items(const std::filesystem::path& out, const std::string& hash);
std::vector<FailureRecord> read_failures(const std::filesystem::path& out);

// Writers of the combined outputs.
struct OutputContext {
  std::filesystem::path out;
  std::vector<std::string> category_names;
  unsigned formats = 0;
  bool coco_polygons = false;
  double simplify = 1.0;
  bool semantic = false;
};
void write_coco(const OutputContext& ctx, const std::vector<ItemRecord>& items);
void write_yolo(const OutputContext& ctx, const std::vector<ItemRecord>& items);
void write_masks(const OutputContext& ctx, const std::vector<ItemRecord>& items);
void write_geojson(const OutputContext& ctx, const std::vector<ItemRecord>& items);

// Polygons of an instance in image coordinates.
std::vector<Polygon> instance_polygons(const LabeledInstance& inst, double simplify);
// Output file stem for an image name ("sub/dir/img.jpg" -> "sub__dir__img").
std::string output_stem(const std::string& name);

}  // namespace sam3::label
