// Decoder outputs -> instances at the original image size, as SAM3's processor does it.
#pragma once

#include <cstdint>
#include <vector>

#include "sam3/types.h"

namespace sam3::predictor {

// Raw heads (usls layout, newer samexporter): one entry per query.
struct RawHeads {
  int queries = 0, mask_h = 0, mask_w = 0;
  const float* logits = nullptr;  // [Q]
  const float* boxes = nullptr;   // [Q,4] normalized x0,y0,x1,y1
  const float* masks = nullptr;   // [Q,mask_h,mask_w] logits
  float presence_logit = 0;
  bool has_presence = true;  // false: no presence head (the score is sigmoid(logit) alone)
  // Resize sigmoid(logits) and cut them at mask_threshold (geti-instant-learn's processor),
  // instead of resizing the logits and cutting at logit(mask_threshold) (SAM3's).
  bool resize_probabilities = false;
};

// Results the graph already thresholded (samexporter and osam decoders).
struct FinalDetections {
  int count = 0, mask_h = 0, mask_w = 0;
  const float* scores = nullptr;         // [N], presence applied
  const float* boxes = nullptr;          // [N,4] x0,y0,x1,y1: pixels, or normalized
  bool normalized_boxes = false;         // osam's decoder has no image size, so its boxes are 0..1
  const std::uint8_t* masks = nullptr;   // [N,mask_h,mask_w] booleans (samexporter: original size), or
  const float* probabilities = nullptr;  // sigmoid probabilities at the model's resolution (osam)
  // Image sides a box scale may have been frozen at when the graph was traced (1008, the
  // input size): a box that disagrees with its mask is tried rescaled by (W/S, H/S).
  std::vector<int> export_sides;
};

// Whether a box and a mask's bounds describe the same extent: every edge within 10% of the
// bounds' size on its axis (at least 2 px). Stricter than IoU, which still passes a box
// scaled at 1008 px that covers its mask by more than half.
bool boxes_agree(const Box& box, const Box& bounds);

float sigmoid(float x);

// score = sigmoid(logit) * sigmoid(presence) (or sigmoid(logit) without a presence head) > threshold; kept masks' logits are upsampled
// bilinearly (align_corners=False) and cut at logit(mask_threshold); boxes scaled, clamped.
std::vector<Instance> instances_from_raw_heads(const RawHeads& heads, int width, int height, const SegmentOptions& options);

// Boxes that disagree with their mask (a scale frozen at export time) are replaced by the box
// rescaled from an export side when that agrees, else by the mask's bounds; *corrected counts
// them. Probability masks are resized bilinearly and cut at mask_threshold.
std::vector<Instance> instances_from_final(const FinalDetections& det, int width, int height, const SegmentOptions& options,
                                           int* corrected);

// Min area, score sort, optional mask-IoU NMS, max instances.
void finalize_instances(std::vector<Instance>& instances, const SegmentOptions& options);

// Bilinear resize of one logit plane (PyTorch align_corners=False), thresholded (> cut).
void upsample_threshold(const float* src, int src_h, int src_w, int dst_h, int dst_w, float cut, std::uint8_t* dst);
// The same as a Mask of a dst_w x dst_h image: only the window that can pass the cut is computed and held.
Mask upsample_mask(const float* src, int src_h, int src_w, int dst_h, int dst_w, float cut);
// The pixels of a width x height plane above the cut.
Mask mask_above(const float* plane, int width, int height, float cut);

// Bilinear resize of one float plane (PyTorch align_corners=False, ONNX Resize linear half_pixel,
// no antialiasing when shrinking): what transformers.js's interpolate_4d does.
void resize_bilinear(const float* src, int src_h, int src_w, int dst_h, int dst_w, float* dst);

Box mask_bounds(const Mask& mask);  // {0,0,0,0} for an empty mask
float box_iou(const Box& a, const Box& b);
// Pixels in both masks (0 for masks of images of different sizes).
std::int64_t mask_intersection(const Mask& a, const Mask& b);
float mask_iou(const Mask& a, const Mask& b);

}  // namespace sam3::predictor
