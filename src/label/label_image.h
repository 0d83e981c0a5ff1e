// Labeling one image with several categories, optionally in overlapping tiles for images much
// larger than the model input (maps, aerial photos). Instances crossing tile seams are merged.
// Masks are kept as crops so an 8000x8000 image with many instances stays small in memory.
// Internal to the label and geo modules: users call Labeler and MapLabeler (sam3/labeler.h,
// sam3/map_labeler.h), whose outputs hold full masks and RLE.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sam3/labeler.h"
#include "sam3/model.h"
#include "sam3/types.h"

namespace sam3::label {

// A binary mask stored as its bounding crop inside an image of full_width x full_height.
struct MaskCrop {
  int x0 = 0, y0 = 0, width = 0, height = 0;  // crop rectangle in image pixels
  int full_width = 0, full_height = 0;
  std::vector<std::uint8_t> data;  // width*height, row-major, 0/1

  std::int64_t area() const;
  bool at(int x, int y) const;  // image coordinates
  Mask to_mask() const;         // full size
};

MaskCrop crop_mask(const Mask& mask);  // crop to the mask's bounds (empty crop if no pixel)
// COCO RLE of the full-size mask, computed from the crop without expanding it.
std::vector<std::uint32_t> rle_counts(const MaskCrop& mask);

// Throws kInvalidArgument unless the model answers these categories: "everything" needs the
// interactive model, which takes no text or exemplar boxes.
void check_categories_fit(const Model& model, const std::vector<LabelCategory>& categories);
// Throws kInvalidArgument naming a category given twice (a repeated --prompt).
void check_categories_distinct(const std::vector<LabelCategory>& categories);

struct LabeledInstance {
  int category = 0;  // index into the categories
  float score = 0;
  Box box;
  MaskCrop mask;
};

struct LabelTimings {
  double encode_ms = 0, segment_ms = 0, merge_ms = 0;
  int tiles = 1;
};

// Tiles when asked (kAuto: only if a side exceeds twice the model input), runs every
// category on every tile's embedding, maps results to image coordinates and merges seams.
// `prepared` (from model.prepare(image)) skips the resize when the image is not tiled. Text and
// box categories run on the model's ImageSegmenter, "everything" on its InteractiveSegmenter.
std::vector<LabeledInstance> label_image(const std::shared_ptr<const Model>& model, const Image& image,
                                         const std::vector<LabelCategory>& categories, const SegmentOptions& options,
                                         const TileOptions& tiles, LabelTimings* timings = nullptr, PreparedImage* prepared = nullptr);

// Whether label_image will tile an image of this size.
bool will_tile(const Model& model, int width, int height, const TileOptions& tiles);

// Tiles of side `tile` covering width x height with at least `overlap` shared pixels, row by
// row; the last row/column is shifted inward so every tile is full size when the image allows.
// Computed on demand, never listed: a grid of billions of tiles costs a few integers, so
// memory never grows with a raster's declared size. A value type, cheap to copy.
class TileGrid {
 public:
  TileGrid() = default;
  // Throws kInvalidArgument unless tile >= 1 and 0 <= overlap < tile.
  TileGrid(int width, int height, int tile, int overlap);

  int width() const { return width_; }
  int height() const { return height_; }
  int tile() const { return tile_; }
  int overlap() const { return overlap_; }
  int columns() const { return columns_; }
  int rows() const { return rows_; }
  std::int64_t size() const { return static_cast<std::int64_t>(columns_) * rows_; }
  TileRect operator[](std::int64_t index) const;
  // The part of the tile that no earlier tile covers: every pixel belongs to exactly one tile.
  TileRect own_part(std::int64_t index) const;
  // The first tile holding the point, or 0 when none does.
  std::int64_t tile_at(double x, double y) const;
  // The later tiles (higher index) that share pixels with this one, in increasing order.
  std::vector<std::int64_t> later_neighbours(std::int64_t index) const;

 private:
  int width_ = 0, height_ = 0, tile_ = 0, overlap_ = 0, columns_ = 0, rows_ = 0;
};

// Merges instances of the same category that overlap where their tiles overlap. Only tiles
// that hold instances and their neighbours are compared, so the cost follows the instances,
// not the grid.
std::vector<LabeledInstance> merge_across_tiles(std::vector<LabeledInstance> instances, const std::vector<int>& tile_of_instance,
                                                const TileGrid& tiles, const TileOptions& options);

// Union of the category's instance masks (a "semantic" mask), full size.
Mask semantic_mask(const std::vector<LabeledInstance>& instances, int category, int width, int height);

}  // namespace sam3::label
