// Prompts, options and results of text/box-prompted segmentation.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
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

// A binary mask of one image. It knows the image's size but holds a byte (0 or 1) only for each
// pixel of its bounds, the smallest window that holds its pixels: a small object on a large
// image costs its own area, not the image's (a full-size byte per pixel was 5 MB an instance
// on a 2000x2000 image, and "everything" found hundreds). Read it with at() or row by row over
// bounds(); to_raster() gives the full image-sized raster a front may need.
class Mask {
 public:
  Mask() = default;  // of a 0 x 0 image
  // An empty mask of a width x height image; throws kInvalidArgument for a negative side.
  Mask(int width, int height);
  // The pixels that are nonzero in `raster` (width * height bytes, row-major); throws
  // kInvalidArgument when its size is not width * height.
  static Mask from_raster(int width, int height, std::span<const std::uint8_t> raster);
  // The pixels that are nonzero in `bytes`, the rows of `window` (its width * height bytes,
  // row-major), and none outside it; throws kInvalidArgument unless the window lies inside the image.
  static Mask from_window(int width, int height, TileRect window, std::span<const std::uint8_t> bytes);

  int width() const noexcept { return width_; }  // the image's
  int height() const noexcept { return height_; }
  // The smallest window holding every pixel of the mask; {0, 0, 0, 0} when it has none.
  TileRect bounds() const noexcept { return bounds_; }
  bool empty() const noexcept { return area_ == 0; }
  std::int64_t area() const noexcept { return area_; }  // pixels in the mask
  // Whether (x, y) of the image is in the mask; false outside the image.
  bool at(int x, int y) const noexcept;
  // Row y's bytes over the bounds' columns (bounds().x0 .. x1 - 1); empty outside the bounds' rows.
  std::span<const std::uint8_t> row(int y) const noexcept;
  // The full raster: width * height bytes, row-major, 1 in the mask and 0 elsewhere.
  std::vector<std::uint8_t> to_raster() const;
  // Sets `value` at the mask's pixels of a width * height raster; throws kInvalidArgument for another size.
  void paint(std::span<std::uint8_t> raster, std::uint8_t value) const;
  // The bytes this mask holds (its bounds' area and its own size), for memory bounds and tests.
  std::size_t bytes() const noexcept { return sizeof *this + bits_.capacity(); }

  friend bool operator==(const Mask& a, const Mask& b) noexcept {
    return a.width_ == b.width_ && a.height_ == b.height_ && a.bits_ == b.bits_ && a.bounds_.x0 == b.bounds_.x0 &&
           a.bounds_.y0 == b.bounds_.y0 && a.bounds_.x1 == b.bounds_.x1 && a.bounds_.y1 == b.bounds_.y1;
  }

 private:
  int width_ = 0, height_ = 0;
  TileRect bounds_{0, 0, 0, 0};
  std::int64_t area_ = 0;
  std::vector<std::uint8_t> bits_;  // the bounds' rows, 0 or 1
};

struct Instance {
  float score = 0;
  Box box;
  Mask mask;
  std::int64_t area = 0;  // mask pixels (mask.area())
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
