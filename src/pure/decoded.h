// Decoder outputs -> instances at the original image size: which heads a decoder gave (raw
// heads or in-graph results, by name and type), checked against each other, then
// predictor/postprocess's rules. Pure: the outputs are borrowed bytes from any runtime.
#pragma once

#include <string>
#include <vector>

#include "pure/tensor.h"
#include "sam3/types.h"

namespace sam3::pure {

// What a decoder's outputs mean beyond their names. Raw heads: the presence output's name
// (empty: no presence head, scores are sigmoid(logit) alone) and whether pred_boxes are
// cx,cy,w,h. In-graph results: osam's decoder (no image size inputs) gives normalized boxes;
// samexporter's may scale boxes by a side frozen at export.
struct OutputFormat {
  std::string presence = "presence_logits";
  bool cxcywh_boxes = false;
  bool resize_probabilities = false;  // masks: sigmoid, resize, cut at mask_threshold
  bool normalized_boxes = false;
  std::vector<int> export_sides;
};

// Raw heads (pred_logits, pred_boxes, pred_masks, presence_logits) or in-graph results
// (scores, boxes, masks: booleans at the image size or float probabilities at the model's).
// Unsorted, unfiltered by area. *corrected: boxes that disagreed with their masks.
std::vector<Instance> instances_from_outputs(const TensorViews& outputs, int width, int height, const SegmentOptions& options,
                                             int* corrected, const OutputFormat& format = {});

}  // namespace sam3::pure
