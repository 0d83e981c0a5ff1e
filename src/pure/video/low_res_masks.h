// Binary masks at the models' low resolution (288 x 288 for SAM 3.1) and the overlap measures
// the video heuristics use on them (official SAM3: sam3/train/masks_ops.py mask_iou, mask_iom).
#pragma once

#include <cstdint>
#include <vector>

namespace sam3::pure::video {

struct BinaryMask {
  int height = 0, width = 0;
  std::vector<std::uint8_t> bits;  // 0 or 1, row-major
  std::int64_t area() const;
  bool empty() const { return area() == 0; }
};

// logits > 0.
BinaryMask binarize(const float* logits, int height, int width);

// Intersection over the smaller area (0 when either is empty), and over the union.
float mask_iom(const BinaryMask& a, const BinaryMask& b);
float mask_iou(const BinaryMask& a, const BinaryMask& b);

// Greedy NMS by IoM, best score first: indices kept, best first. A mask is dropped when its
// IoM with a kept better one is above `threshold` (sam3_multiplex_detector_utils nms_masks
// with nms_use_iom).
std::vector<int> nms_by_iom(const std::vector<BinaryMask>& masks, const std::vector<float>& scores, float threshold);

}  // namespace sam3::pure::video
