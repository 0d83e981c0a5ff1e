// SAM's crop layers for "segment everything" (its automatic mask generator's crop_n_layers):
// which crops, which masks a crop may keep, and how the crops' masks become one answer.
#pragma once

#include <vector>

#include "pure/compact_mask.h"
#include "sam3/interactive.h"
#include "sam3/types.h"

namespace sam3::pure {

struct EverythingCrop {
  TileRect window;
  int layer = 0;  // 0: the whole image
};

// The whole image, then for each layer i >= 1, 2^i x 2^i crops overlapping by
// overlap_ratio * short side * 2 / 2^i pixels (SAM's generate_crop_boxes).
std::vector<EverythingCrop> everything_crops(int width, int height, int layers, float overlap_ratio);

// A mask whose box (in the image's pixels) lies within 20 pixels of an edge of its crop that
// is not an edge of the image is cut by the crop: another layer sees that object whole.
bool cut_by_crop(const Box& box, const TileRect& crop, int image_width, int image_height);

// The crop's instances moved into the image: masks of the image's size, boxes shifted.
void move_into_image(std::vector<CompactInstance>& instances, const TileRect& crop, int image_width, int image_height);

// Masks of all crops, one per object: between two whose boxes overlap by more than
// nms_threshold, the one from the smaller crop stays (it saw the object at a finer scale).
// Returned best predicted IoU first.
// The masks stay compact (expand() gives the survivors' full masks).
std::vector<CompactInstance> merge_crops(std::vector<std::pair<EverythingCrop, std::vector<CompactInstance>>> per_crop,
                                         float nms_threshold);

}  // namespace sam3::pure
