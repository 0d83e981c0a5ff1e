// The interactive task's prompts, options and results: clicks and boxes -> one object each,
// with SAM3's interactive (tracker) model, and "segment everything" (SAM's automatic mask
// generator) on the same model. The calls are sam3::InteractiveSegmenter's
// (sam3/interactive_segmenter.h).
//
// Semantics are those of SAM3's tracker processor (transformers' Sam2 processor): the image is
// stretched to 1008 x 1008, points and boxes are scaled to it, each candidate mask is upsampled
// to 1008 x 1008 and then to the image size (bilinear) and cut at logit 0.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sam3/types.h"

namespace sam3 {

// A click in pixels of the original image; positive = "this object", negative = "not this".
struct PointPrompt {
  float x = 0, y = 0;
  bool positive = true;
};

// One object: clicks, a box around it, or both (at least one positive point or the box).
struct InteractivePrompt {
  std::vector<PointPrompt> points;
  std::optional<Box> box;
};

// Limits the library enforces on one call (errors name the object and point).
inline constexpr int kMaxPointsPerObject = 64;
inline constexpr int kMaxObjectsPerCall = 256;
inline constexpr int kMaxCropLayers = 3;  // 1 + 4 + 16 + 64 encodes

struct InteractiveOptions {
  bool multimask = false;  // all three candidate masks, best first, instead of the best one
  StopToken stop;          // stops the decode mid-run (sam3/stop_token.h)
};

struct ObjectTimings {
  double decode_ms = 0, postprocess_ms = 0;  // of the whole call (objects are decoded together)
};

struct ObjectResult {
  InteractivePrompt prompt;
  std::vector<Instance> masks;  // best predicted IoU first; score = the predicted IoU
  float object_score = 0;       // sigmoid of the model's object-score logit: is there an object at all
  ObjectTimings timings;
};

// SAM's automatic mask generator on the interactive model: a grid of single positive clicks,
// each giving three candidates, kept when confident and stable, then deduplicated.
struct EverythingOptions {
  int points_per_side = 32;           // grid of points_per_side^2 clicks over the image
  int points_per_batch = 64;          // clicks decoded per decoder run
  float pred_iou_threshold = 0.88f;   // keep candidates whose predicted IoU exceeds this
  float stability_threshold = 0.95f;  // IoU of the mask cut at +offset and at -offset
  float stability_offset = 1.0f;
  float box_nms_threshold = 0.7f;       // drop a mask whose box overlaps a better one more
  float object_score_threshold = 0.5f;  // SAM2's "no object here" cut (sigmoid of its logit)
  std::int64_t min_area = 0;            // drop masks with fewer pixels
  // SAM's crop layers, for small objects: layer i cuts the image into 2^i x 2^i overlapping
  // crops, each encoded and clicked on its own (a grid of points_per_side / downscale^i); masks
  // touching a crop's inner edge are left to the layers that see them whole, and duplicates
  // across crops are resolved in favour of the smaller crop. 0: the whole image only. Needs
  // the image: InteractiveSegmenter::segment_everything(image, embedding, options).
  int crop_layers = 0;
  float crop_overlap_ratio = 512.f / 1500.f;  // overlap of neighbouring crops, share of the short side
  int crop_points_downscale = 1;              // points per side divided by this for each layer
  float crop_nms_threshold = 0.7f;            // box IoU above which masks of two crops are one object
  StopToken stop;                             // stops between and inside decoder runs (sam3/stop_token.h)
};

}  // namespace sam3
