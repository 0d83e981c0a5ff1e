// SAM3's interactive (tracker) generation as data, mirroring pure::Generation for the text
// families: what its files must take and give, the image encoder's input, prompt checks, the
// decoder runs for a set of clicked objects or for "segment everything" (points and boxes in
// the model's input pixels, objects grouped by their inputs' shapes), the decoder's tensors,
// and its outputs -> objects (candidate choice, mask upsampling) or everything's candidates
// (object score, predicted IoU, stability, box NMS). Semantics are transformers' Sam2
// processor and SAM's automatic mask generator (docs/clicks.md). The native backend
// (model/tracker_backend.cpp, model/interactive.cpp) runs it on ONNX Runtime, the WebAssembly
// module (apps/web) on ONNX Runtime Web. Pure: standard library only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pure/compact_mask.h"
#include "pure/tensor.h"
#include "sam3/interactive.h"
#include "sam3/types.h"

namespace sam3::pure {

// Objects decoded per decoder run: the masks of 64 objects are 64 * 3 * 288 * 288 floats (64 MB).
inline constexpr int kTrackerObjectsPerRun = 64;

// One decoder run's prompts, in the model's input pixels.
struct TrackerBatch {
  int objects = 0, point_rows = 0, points_per_object = 0;
  std::vector<float> points;         // point_rows * points_per_object * 2
  std::vector<std::int64_t> labels;  // objects * points_per_object: 1 positive, 0 negative
  std::vector<float> boxes;          // x0,y0,x1,y1 per box
};

// A run of clicked objects: which of the call's objects (indices) it decodes, and how.
struct TrackerRun {
  std::vector<size_t> members;
  TrackerBatch batch;
};

// The decoder's answer for a batch, float32: per object `candidates` masks.
struct TrackerDecoded {
  int objects = 0, candidates = 0, mask_h = 0, mask_w = 0;
  std::vector<float> iou;            // [objects, candidates]
  std::vector<float> masks;          // [objects, candidates, mask_h, mask_w] logits
  std::vector<float> object_logits;  // [objects]
};

class Tracker {
 public:
  // The two graphs' I/O; throws kModelMismatch naming the file, tensor, expected and found.
  Tracker(const PartSpec& image, const PartSpec& decoder);

  std::string name() const { return "sam3-tracker (interactive: points and boxes)"; }
  std::vector<std::string> quirks() const;
  int input_width() const { return width_; }
  int input_height() const { return height_; }
  // The image encoder outputs an embedding keeps; each feeds the decoder input of its name.
  static const std::vector<std::string>& embedding_names();

  // [3,H,W] planes in 0..255 at the input size, normalized here -> pixel_values.
  std::vector<Tensor> image_inputs(std::vector<float>& planes) const;

  // Clicked objects: every prompt checked (errors name the object and point, kInvalidArgument),
  // then the decoder runs: objects with points only grouped by point count, boxes alone (zero
  // points, as transformers.js sends them), a box with points alone; at most 64 per run.
  std::vector<TrackerRun> object_runs(const std::vector<InteractivePrompt>& prompts, int width, int height) const;
  // A run's decoder inputs (input_points, input_labels, input_boxes in the files' types).
  std::vector<Tensor> decoder_inputs(const TrackerBatch& batch) const;
  // The decoder's outputs for `objects` objects, float32, shapes checked (kModelMismatch).
  TrackerDecoded decoded(const TensorViews& outputs, int objects) const;
  // A run's objects -> results[run.members[k]]: the candidates best predicted IoU first (the
  // best only without multimask), each upsampled to the input size, then to the image's, cut at 0.
  void object_results(const TrackerDecoded& decoded, const TrackerRun& run, const std::vector<InteractivePrompt>& prompts,
                      const InteractiveOptions& options, int width, int height, std::vector<ObjectResult>& results) const;

  // "Segment everything": kInvalidArgument for an option out of range.
  static void check_everything_options(const EverythingOptions& options);
  // The grid of single positive clicks (cell centres, as SAM's build_point_grid), in runs of
  // points_per_batch.
  std::vector<TrackerBatch> everything_runs(const EverythingOptions& options, int width, int height) const;
  // A run's candidates kept: predicted IoU, object score, stability, area, keep(box) (a
  // crop's edge rule; null: all), held compact, in the order of the run's objects and candidates.
  std::vector<CompactInstance> everything_candidates(const TrackerDecoded& decoded, const EverythingOptions& options, int width, int height,
                                                     const std::function<bool(const Box&)>& keep = nullptr) const;
  // Box NMS over all runs' candidates, best predicted IoU first (equal scores ordered by box, then
  // mask): the same candidates in any order keep the same instances in the same order.
  static std::vector<CompactInstance> deduplicate(std::vector<CompactInstance> candidates, float box_nms_threshold);

 private:
  PartSpec image_, decoder_;
  int width_ = 1008, height_ = 1008;
  bool half_ = false;
};

// IoU of the mask cut at +offset with the mask cut at -offset (SAM's stability score).
float stability_score(const std::vector<float>& logits, float offset);

}  // namespace sam3::pure
