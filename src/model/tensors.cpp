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

std::int64_t element_count(const Ort::Value& v) { return static_cast<std::int64_t>(v.GetTensorTypeAndShapeInfo().GetElementCount()); }

// A decoder whose outputs disagree with each other (a broken or foreign export) must fail
// with a message, never read past a buffer.
void expect_count(const Ort::Value& v, const std::string& name, std::int64_t expected, const std::string& why) {
  if (element_count(v) != expected) {
    throw Error(ErrorCode::kModelMismatch, "decoder output '" + name + "' has shape " + rt::shape_string(rt::shape_of(v)) +
                                               ", which does not fit " + why + "; is this a SAM3 decoder?");
  }
}

void expect_mask_size(std::int64_t h, std::int64_t w, const std::string& name) {
  if (h <= 0 || w <= 0 || h > 8192 || w > 8192) {
    throw Error(ErrorCode::kModelMismatch, "decoder output '" + name + "' has a mask size of " + std::to_string(h) + "x" +
                                               std::to_string(w) + "; is this a SAM3 decoder?");
  }
}

std::vector<Instance> from_raw_heads(std::map<std::string, Ort::Value>& outputs, int width, int height,
                                     const SegmentOptions& options) {
  auto& masks = need(outputs, "pred_masks");
  const auto mshape = rt::shape_of(masks);  // [1,Q,h,w]
  if (mshape.size() != 4 || mshape[0] != 1) {
    throw Error(ErrorCode::kModelMismatch, "decoder output 'pred_masks' has shape " + rt::shape_string(mshape) +
                                               ", expected [1, queries, h, w]; is this a SAM3 decoder?");
  }
  expect_mask_size(mshape[2], mshape[3], "pred_masks");
  const std::int64_t queries = mshape[1];
  const std::string per_query = std::to_string(queries) + " queries of pred_masks " + rt::shape_string(mshape);
  auto &logits = need(outputs, "pred_logits"), &boxes = need(outputs, "pred_boxes"), &presence = need(outputs, "presence_logits");
  expect_count(logits, "pred_logits", queries, "one score per query: " + per_query);
  expect_count(boxes, "pred_boxes", queries * 4, "four box numbers per query: " + per_query);
  expect_count(presence, "presence_logits", 1, "one presence score");
  RawHeads heads;
  heads.queries = static_cast<int>(queries);
  heads.mask_h = static_cast<int>(mshape[2]);
  heads.mask_w = static_cast<int>(mshape[3]);
  heads.masks = masks.GetTensorData<float>();
  heads.logits = logits.GetTensorData<float>();
  heads.boxes = boxes.GetTensorData<float>();
  heads.presence_logit = presence.GetTensorData<float>()[0];
  return instances_from_raw_heads(heads, width, height, options);
}

std::vector<Instance> from_final(std::map<std::string, Ort::Value>& outputs, int width, int height,
                                 const SegmentOptions& options, int* corrected, const FinalOutputFormat& format) {
  auto& masks = need(outputs, "masks");
  const auto mshape = rt::shape_of(masks);  // [N,1,H,W] or [N,H,W]
  if (mshape.size() != 3 && !(mshape.size() == 4 && mshape[1] == 1)) {
    throw Error(ErrorCode::kModelMismatch, "decoder output 'masks' has shape " + rt::shape_string(mshape) +
                                               ", expected [N, 1, H, W] or [N, H, W]; is this a SAM3 decoder?");
  }
  FinalDetections d;
  d.count = static_cast<int>(mshape[0]);
  d.mask_h = static_cast<int>(mshape[mshape.size() - 2]);
  d.mask_w = static_cast<int>(mshape.back());
  auto &scores = need(outputs, "scores"), &boxes = need(outputs, "boxes");
  const std::string per_mask = std::to_string(d.count) + " masks " + rt::shape_string(mshape);
  expect_count(scores, "scores", d.count, "one score per mask: " + per_mask);
  expect_count(boxes, "boxes", std::int64_t{d.count} * 4, "four box numbers per mask: " + per_mask);
  if (d.count > 0) expect_mask_size(d.mask_h, d.mask_w, "masks");
  d.scores = scores.GetTensorData<float>();
  d.boxes = boxes.GetTensorData<float>();
  d.normalized_boxes = format.normalized_boxes;
  d.export_sides = format.export_sides;
  if (masks.GetTensorTypeAndShapeInfo().GetElementType() == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) {
    d.probabilities = masks.GetTensorData<float>();
  } else {
    d.masks = reinterpret_cast<const std::uint8_t*>(masks.GetTensorData<bool>());
  }
  if (options.score_threshold < 0.5f) {
    log(LogLevel::kDebug, "this decoder keeps only scores > 0.5 in the graph; a lower threshold has no effect");
  }
  return instances_from_final(d, width, height, options, corrected);
}

}  // namespace

std::vector<Instance> instances_from_outputs(std::map<std::string, Ort::Value>& outputs, int width,
                                             int height, const SegmentOptions& options, int* corrected,
                                             const FinalOutputFormat& format) {
  if (corrected) *corrected = 0;
  if (outputs.contains("pred_logits")) return from_raw_heads(outputs, width, height, options);
  return from_final(outputs, width, height, options, corrected, format);
}

}  // namespace sam3::detail
