// Helpers shared by the layouts: integer inputs in the element type a session asks for,
// exemplar boxes in the decoder's format, and decoder outputs -> instances.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "runtime/session.h"
#include "sam3/types.h"

namespace sam3::detail {

// Integer values held in the session's element type (int32 or int64) for a non-owning view.
class IntInput {
 public:
  IntInput(ONNXTensorElementDataType type, const std::vector<std::int64_t>& values);
  Ort::Value view(const std::vector<std::int64_t>& shape);

 private:
  ONNXTensorElementDataType type_;
  std::vector<std::int64_t> i64_;
  std::vector<std::int32_t> i32_;
};

// Pixel x0,y0,x1,y1 -> normalized cx,cy,w,h (SAM3's geometry prompt format).
std::array<float, 4> normalized_cxcywh(const Box& box, int width, int height);

// What in-graph results mean beyond their names: osam's decoder (no image size inputs) gives
// normalized boxes; samexporter's may scale boxes by a side frozen at export.
struct FinalOutputFormat {
  bool normalized_boxes = false;
  std::vector<int> export_sides;
};

// Recognises raw heads (pred_logits, pred_boxes, pred_masks, presence_logits) or in-graph
// results (scores, boxes, masks: booleans at the image size or float probabilities at the
// model's) by output name and type. *corrected: boxes that disagreed with their masks.
std::vector<Instance> instances_from_outputs(std::map<std::string, Ort::Value>& outputs, int width,
                                             int height, const SegmentOptions& options, int* corrected,
                                             const FinalOutputFormat& format = {});

}  // namespace sam3::detail
