// Decoder outputs -> instances at the original image size, as SAM3's processor does it.
#pragma once

#include <cstdint>
#include <vector>

#include "sam3/types.h"

namespace sam3 {

// Raw heads (usls layout, newer samexporter): one entry per query.
struct RawHeads {
  int queries = 0, mask_h = 0, mask_w = 0;
  const float* logits = nullptr;  // [Q]
  const float* boxes = nullptr;   // [Q,4] normalized x0,y0,x1,y1
  const float* masks = nullptr;   // [Q,mask_h,mask_w] logits
  float presence_logit = 0;
};

// Results the graph already thresholded and upsampled (samexporter layout).
struct FinalDetections {
  int count = 0, mask_h = 0, mask_w = 0;
  const float* scores = nullptr;       // [N], presence applied
  const float* boxes = nullptr;        // [N,4] pixel x0,y0,x1,y1
  const std::uint8_t* masks = nullptr; // [N,mask_h,mask_w] booleans
};

float sigmoid(float x);

// score = sigmoid(logit) * sigmoid(presence) > threshold; kept masks' logits are upsampled
// bilinearly (align_corners=False) and cut at logit(mask_threshold); boxes scaled, clamped.
std::vector<Instance> instances_from_raw_heads(const RawHeads& heads, int width, int height,
                                               const SegmentOptions& options);

// Boxes that disagree with their mask (IoU < 0.5: a scale frozen at export time) are
// replaced by the mask's bounds; *corrected counts them.
std::vector<Instance> instances_from_final(const FinalDetections& det, int width, int height,
                                           const SegmentOptions& options, int* corrected);

// Min area, score sort, optional mask-IoU NMS, max instances.
void finalize_instances(std::vector<Instance>& instances, const SegmentOptions& options);

// Bilinear resize of one logit plane (PyTorch align_corners=False), thresholded (> cut).
void upsample_threshold(const float* src, int src_h, int src_w, int dst_h, int dst_w, float cut,
                        std::uint8_t* dst);

Box mask_bounds(const Mask& mask);  // {0,0,0,0} for an empty mask
float box_iou(const Box& a, const Box& b);
float mask_iou(const Mask& a, const Mask& b);

}  // namespace sam3
