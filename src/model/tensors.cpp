#include "model/tensors.h"

#include <algorithm>

#include "predictor/postprocess.h"
#include "sam3/error.h"
#include "sam3/log.h"

namespace sam3::detail {

IntInput::IntInput(ONNXTensorElementDataType type, const std::vector<std::int64_t>& values)
    : type_(type), i64_(values) {
  if (type_ == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32) i32_.assign(values.begin(), values.end());
}

Ort::Value IntInput::view(const std::vector<std::int64_t>& shape) {
  if (type_ == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32) return rt::view(i32_.data(), i32_.size(), shape);
  return rt::view(i64_.data(), i64_.size(), shape);
}

std::array<float, 4> normalized_cxcywh(const Box& b, int width, int height) {
  const float w = static_cast<float>(width), h = static_cast<float>(height);
  return {(b.x0 + b.x1) / 2.f / w, (b.y0 + b.y1) / 2.f / h, (b.x1 - b.x0) / w, (b.y1 - b.y0) / h};
}

namespace {

Ort::Value& need(std::map<std::string, Ort::Value>& outputs, const std::string& name) {
  auto it = outputs.find(name);
  if (it == outputs.end()) throw Error(ErrorCode::kRuntime, "decoder produced no '" + name + "' output");
  return it->second;
}

std::vector<Instance> from_raw_heads(std::map<std::string, Ort::Value>& outputs, int width, int height,
                                     const SegmentOptions& options) {
  auto& masks = need(outputs, "pred_masks");
  const auto mshape = rt::shape_of(masks);  // [1,Q,h,w]
  if (mshape.size() != 4) throw Error(ErrorCode::kRuntime, "pred_masks is not of rank 4");
  RawHeads heads;
  heads.queries = static_cast<int>(mshape[1]);
  heads.mask_h = static_cast<int>(mshape[2]);
  heads.mask_w = static_cast<int>(mshape[3]);
  heads.masks = masks.GetTensorData<float>();
  heads.logits = need(outputs, "pred_logits").GetTensorData<float>();
  heads.boxes = need(outputs, "pred_boxes").GetTensorData<float>();
  heads.presence_logit = need(outputs, "presence_logits").GetTensorData<float>()[0];
  return instances_from_raw_heads(heads, width, height, options);
}

std::vector<Instance> from_final(std::map<std::string, Ort::Value>& outputs, int width, int height,
                                 const SegmentOptions& options, int* corrected) {
  auto& masks = need(outputs, "masks");
  const auto mshape = rt::shape_of(masks);  // [N,1,H,W] or [N,H,W]
  FinalDetections d;
  d.count = static_cast<int>(mshape.empty() ? 0 : mshape[0]);
  d.mask_h = static_cast<int>(mshape.size() >= 2 ? mshape[mshape.size() - 2] : 0);
  d.mask_w = static_cast<int>(mshape.size() >= 1 ? mshape.back() : 0);
  d.scores = need(outputs, "scores").GetTensorData<float>();
  d.boxes = need(outputs, "boxes").GetTensorData<float>();
  d.masks = reinterpret_cast<const std::uint8_t*>(masks.GetTensorData<bool>());
  if (d.count > 0 && (d.mask_h <= 0 || d.mask_w <= 0)) throw Error(ErrorCode::kRuntime, "masks output is empty");
  if (options.score_threshold < 0.5f) {
    log(LogLevel::kDebug, "this decoder keeps only scores > 0.5 in the graph; a lower threshold has no effect");
  }
  return instances_from_final(d, width, height, options, corrected);
}

}  // namespace

std::vector<Instance> instances_from_outputs(std::map<std::string, Ort::Value>& outputs, int width,
                                             int height, const SegmentOptions& options, int* corrected) {
  if (corrected) *corrected = 0;
  if (outputs.contains("pred_logits")) return from_raw_heads(outputs, width, height, options);
  return from_final(outputs, width, height, options, corrected);
}

}  // namespace sam3::detail
