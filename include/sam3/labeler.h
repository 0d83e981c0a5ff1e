// Batch labeling of folders: one record per image written atomically as it finishes
// (resumable), failures recorded without stopping, deterministic shards, and combined outputs
// (COCO, YOLO-seg, PNG masks, GeoJSON) rebuilt from the records.
//
//   out/config.json          categories and settings of the run
//   out/inputs.json          the names of the run's inputs
//   out/shard.json           which share of which input list the folder holds (--shard K/N)
//   out/items/<key>.json     one finished image: size and instances (mask crops as RLE)
//   out/failed/<key>.json    one failed image: error code and message
//   out/coco.json, out/failures.json, out/yolo/, out/masks/, out/geojson/
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sam3/image.h"
#include "sam3/interactive.h"
#include "sam3/model.h"
#include "sam3/types.h"

namespace sam3 {

class OutputFolderUpdate;

struct LabelCategory {
  std::string name;
  Prompt prompt;  // text and/or exemplar boxes
  // Set: "segment everything" (SAM's automatic mask generator) on the interactive model
  // instead of the prompt; every object found is of this category ("object").
  std::optional<EverythingOptions> everything;
};

// The smallest tile side sam3 takes (image folders and maps): smaller tiles only multiply the
// encodes (the model sees each at its input size) and the seams.
inline constexpr int kMinTile = 64;

struct TileOptions {
  enum class Mode { kOff, kAuto, kFixed } mode = Mode::kOff;
  int tile = 0;                    // tile side in pixels (kFixed); kAuto uses the model input size
  int overlap = 0;                 // pixels shared by neighbouring tiles; kAuto uses tile / 8 when 0
  float merge_iou = 0.5f;          // same object if mask IoU inside the shared strip exceeds this
  float merge_containment = 0.7f;  // ... or one covers this share of the other there
};

enum LabelFormat : unsigned { kFormatCoco = 1, kFormatYolo = 2, kFormatMasks = 4, kFormatGeoJson = 8 };
// "coco,yolo,masks,geojson" -> bit set; throws kInvalidArgument naming an unknown format.
unsigned parse_label_formats(const std::string& list);

// Which share of a run's inputs a folder holds (`--shard K/N`), kept in out/shard.json so that
// merge_label_dirs takes every share of one run, cut from one list of inputs, and nothing else.
struct LabelShard {
  int k = 1, n = 1;
  std::string inputs_id;     // the whole input list the share was cut from ("": the run's own inputs)
  std::int64_t inputs = -1;  // how many names that list has (-1: the run's own inputs)
};

struct LabelConfig {
  std::vector<LabelCategory> categories;
  SegmentOptions segment;
  TileOptions tiles;
  ImageLoadOptions load;
  unsigned formats = kFormatCoco;
  bool coco_polygons = false;  // COCO segmentation as polygons instead of RLE
  double simplify = 1.0;       // polygon simplification tolerance, pixels
  bool semantic = false;       // also one union mask per category (masks format)
  LabelShard shard;            // not a setting (not in the hash): which share of the inputs run() gets
};

struct LabelInput {
  std::filesystem::path path;
  std::string name;  // relative name used in outputs ("sub/dir/img.jpg"); stable across shards
};

// Files, folders (recursive, image extensions) and list files (.txt/.lst: one path per
// line). Sorted by name. A file reached twice is one input; different files with one name
// (img.png in two folders) are named by their paths instead. Folders that sam3 wrote, and
// `exclude` (the output folder), are skipped. A name like an image's that is no regular file
// (a FIFO, a dangling link, a link loop) is an input, to be recorded as a failure. Throws
// kInvalidArgument for a path that does not exist, and when no image is found at all (unless
// `allow_none`).
std::vector<LabelInput> collect_label_inputs(const std::vector<std::string>& inputs, const std::filesystem::path& exclude = {},
                                             bool allow_none = false);
// Deterministic share K of N (1-based K) by a hash of the name: the same on every machine.
std::vector<LabelInput> shard_label_inputs(const std::vector<LabelInput>& inputs, int k, int n);
// What LabelConfig::shard records for share K of N of `all` (throws as shard_label_inputs).
LabelShard label_shard(const std::vector<LabelInput>& all, int k, int n);

struct LabelProgress {
  int total = 0, done = 0, skipped = 0, failed = 0;
  double images_per_second = 0;
  std::string current;
};

struct LabelSummary {
  int total = 0, processed = 0, skipped = 0, failed = 0;
  bool interrupted = false;
};

class Labeler {
 public:
  // Writes out/config.json. Records made with other settings (categories, thresholds, tiling)
  // are ignored by the outputs and redone when their image is in the inputs.
  // Locks the folder for the Labeler's lifetime (kIo naming the holder if another run has it)
  // and refuses a folder whose record folders sam3 did not write.
  Labeler(std::shared_ptr<const Model> model, LabelConfig config, std::filesystem::path out_dir);
  ~Labeler();

  // Skips images whose record exists for the same settings; decodes and resizes the next
  // images on a second thread while the current one is encoded. Stops after the image in
  // flight when *stop becomes true. Rebuilds the combined outputs at the end.
  LabelSummary run(const std::vector<LabelInput>& inputs, const std::function<void(const LabelProgress&)>& progress = {},
                   const std::atomic<bool>* stop = nullptr);

 private:
  std::shared_ptr<const Model> model_;
  LabelConfig config_;
  std::filesystem::path out_;
  std::string config_hash_;
  std::unique_ptr<OutputFolderUpdate> folder_;
};

struct LabelMergeOptions {
  // Let the merge replace a folder whose outputs cover images the shards do not (an earlier
  // merge of a larger input list): they drop out of its outputs. Refused otherwise.
  bool allow_fewer = false;
};

// Combines the shard folders of one run into out_dir: records copied, outputs rebuilt with ids
// in name order, identical to what a single run writes. Refuses (kInvalidArgument, before
// writing anything) shards of other settings, of another input list, of two N, a shard given
// twice or missing (naming them), folders without a shard record, and an out_dir whose outputs
// would lose images (see LabelMergeOptions). Returns how many images failed in the shards (the
// merged failures.json lists them).
std::size_t merge_label_dirs(const std::vector<std::filesystem::path>& shard_dirs, const std::filesystem::path& out_dir,
                             const LabelMergeOptions& options = {});

}  // namespace sam3
