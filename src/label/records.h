// The files of a label output folder: config.json and the per-image records.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "label/label_image.h"
#include "sam3/labeler.h"
#include "sam3/polygons.h"

namespace sam3::label {

// What a record was made from, to tell on resume whether the image changed since.
struct SourceIdentity {
  std::int64_t size = -1, mtime_ns = 0;
  std::string hash;  // of the file's bytes
};
SourceIdentity source_identity_of_bytes(const std::filesystem::path& path, std::span<const std::uint8_t> bytes);

struct ItemRecord {
  std::string name;
  std::filesystem::path path;
  int width = 0, height = 0;
  std::vector<LabeledInstance> instances;
  SourceIdentity source;
  std::string stem;  // output file stem, assigned by assign_output_stems
};

struct FailureRecord {
  std::string name;
  std::filesystem::path path;
  std::string code, message;
};

std::string record_key(const std::string& name);  // file-system-safe, unique per name

nlohmann::ordered_json config_json(const LabelConfig& config, const Model& model);
// Sizes and sampled contents of the model's files: another model of the same layout differs.
std::string model_fingerprint(const Model& model);
// Hash of the settings that change results (categories, thresholds, tiling, the model).
std::string config_hash(const nlohmann::ordered_json& config);
void write_config(const std::filesystem::path& out, const nlohmann::ordered_json& config);
nlohmann::json read_config(const std::filesystem::path& out);  // throws kInvalidArgument if absent

void write_item(const std::filesystem::path& out, const ItemRecord& item, const std::string& hash);
void write_failure(const std::filesystem::path& out, const FailureRecord& failure);
void remove_failure(const std::filesystem::path& out, const std::string& name);
// A record of this configuration exists for the input and the file is unchanged since (same
// size and mtime, or, when only the mtime differs, the same bytes).
bool has_item(const std::filesystem::path& out, const LabelInput& input, const std::string& hash);

// The names of the run's inputs (out/inputs.json): the combined outputs cover exactly these.
void write_input_names(const std::filesystem::path& out, const std::vector<std::string>& names);
std::vector<std::string> read_input_names(const std::filesystem::path& out);

// The share of a run a folder holds (shard.json); nullopt when there is none (a folder of a
// sam3 before shards were recorded) or it is damaged.
void write_shard(const std::filesystem::path& out, const LabelShard& shard);
std::optional<LabelShard> read_shard(const std::filesystem::path& out);
// An identity of a list of input names, whatever their order.
std::string input_list_id(std::vector<std::string> names);

// Records of this configuration for the given names, sorted by name; throws kInvalidArgument
// naming a damaged record (a category index must be below `categories`).
std::vector<ItemRecord> read_items(const std::filesystem::path& out, const std::string& hash, const std::vector<std::string>& names,
                                   size_t categories);
std::vector<FailureRecord> read_failures(const std::filesystem::path& out, const std::vector<std::string>& names);

// Writers of the combined outputs.
struct OutputContext {
  std::filesystem::path out;   // where the outputs are written (staged)
  std::filesystem::path root;  // the output folder they are swapped into
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
// Output file stems, distinct for every item (see the README's naming rule): the name without
// extension, '/' as "__", other characters outside [A-Za-z0-9._-] as '_'; a stem that had to be
// changed, or that two items share (without regard to case), gets "-" and 8 hex digits of a
// hash of the full name.
void assign_output_stems(std::vector<ItemRecord>& items);

}  // namespace sam3::label
