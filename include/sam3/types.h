// Prompts, options and results of text/box-prompted segmentation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sam3/stop_token.h"

namespace sam3 {

// Pixel coordinates in the original image, x0,y0 top-left, x1,y1 bottom-right.
struct Box {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

// A window of whole pixels: columns x0..x1-1, rows y0..y1-1 (a tile, a raster read).
struct TileRect {
  int x0, y0, x1, y1;
};

struct BoxPrompt {
  Box box;
  bool positive = true;  // false: a negative exemplar ("not like this")
};

// How every front spells a box's or a point's polarity: "pos"/"positive" -> true,
// "neg"/"negative" -> false, in any case; nullopt for anything else.
std::optional<bool> parse_polarity(std::string_view word) noexcept;

// A concept: a noun phrase, exemplar boxes, or both. Box-only prompts use the text "visual"
// as SAM3 does.
struct Prompt {
  std::string text;
  std::vector<BoxPrompt> boxes;
};

struct SegmentOptions {
  float score_threshold = 0.5f;  // keep sigmoid(logit) * sigmoid(presence) > this
  float mask_threshold = 0.5f;   // mask probability cut (raw-head decoders only)
  std::int64_t min_area = 0;     // drop instances with fewer mask pixels
  int max_instances = 0;         // keep the best N; 0 keeps all
  float nms_iou = 0.0f;          // mask-IoU NMS when > 0 (the official processor has none)
  StopToken stop;                // stops the text encode and decode mid-run (sam3/stop_token.h)
};

// Binary mask at the original image size, row-major, one byte per pixel (0 or 1).
struct Mask {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> data;
};

struct Instance {
  float score = 0;
  Box box;
  Mask mask;
  std::int64_t area = 0;  // mask pixels
};

struct PromptTimings {
  double encode_text_ms = 0;  // 0 when the text features came from the cache
  double decode_ms = 0;
  double postprocess_ms = 0;
  bool text_cached = false;
};

struct PromptResult {
  Prompt prompt;
  std::vector<Instance> instances;  // sorted by score, best first
  PromptTimings timings;
};

}  // namespace sam3
