#include "pure/decoded.h"

#include <optional>

#include "predictor/postprocess.h"
#include "sam3/error.h"
#include "sam3/log.h"

namespace sam3::pure {
namespace {

const TensorView& need(const TensorViews& outputs, const std::string& name) {
  auto it = outputs.find(name);
  if (it == outputs.end()) throw Error(ErrorCode::kRuntime, "decoder produced no '" + name + "' output");
  return it->second;
}

// float32 data of a view: borrowed when it already is float32, else converted.
class Floats {
 public:
  Floats(const TensorView& v, const std::string& name) {
    if (v.type == DType::kFloat) {
      data_ = static_cast<const float*>(v.data);
    } else {
      owned_ = to_float32(v, name);
      data_ = owned_->data();
    }
  }
  const float* data() const { return data_; }

 private:
  const float* data_ = nullptr;
  std::optional<std::vector<float>> owned_;
};

// A decoder whose outputs disagree with each other (a broken or foreign export) must fail
// with a message, never read past a buffer.
void expect_count(const TensorView& v, const std::string& name, std::int64_t expected, const std::string& why) {
  if (static_cast<std::int64_t>(v.count) != expected) {
    throw Error(ErrorCode::kModelMismatch, "decoder output '" + name + "' has shape " + shape_string(v.shape) + ", which does not fit " +
                                               why + "; is this a SAM3 decoder?");
  }
}

void expect_mask_size(std::int64_t h, std::int64_t w, const std::string& name) {
  if (h <= 0 || w <= 0 || h > 8192 || w > 8192) {
    throw Error(ErrorCode::kModelMismatch, "decoder output '" + name + "' has a mask size of " + std::to_string(h) + "x" +
                                               std::to_string(w) + "; is this a SAM3 decoder?");
  }
}

std::vector<Instance> from_raw_heads(const TensorViews& outputs, int width, int height, const SegmentOptions& options,
                                     const OutputFormat& format) {
  const auto& masks = need(outputs, "pred_masks");
  const auto& mshape = masks.shape;  // [1,Q,h,w]
  if (mshape.size() != 4 || mshape[0] != 1) {
    throw Error(ErrorCode::kModelMismatch,
                "decoder output 'pred_masks' has shape " + shape_string(mshape) + ", expected [1, queries, h, w]; is this a SAM3 decoder?");
  }
  expect_mask_size(mshape[2], mshape[3], "pred_masks");
  const std::int64_t queries = mshape[1];
  const std::string per_query = std::to_string(queries) + " queries of pred_masks " + shape_string(mshape);
  const auto &logits = need(outputs, "pred_logits"), &boxes = need(outputs, "pred_boxes");
  expect_count(logits, "pred_logits", queries, "one score per query: " + per_query);
  expect_count(boxes, "pred_boxes", queries * 4, "four box numbers per query: " + per_query);
  const Floats m(masks, "pred_masks"), l(logits, "pred_logits"), b(boxes, "pred_boxes");
  predictor::RawHeads heads;
  heads.has_presence = !format.presence.empty();
  heads.resize_probabilities = format.resize_probabilities;
  if (heads.has_presence) {
    const auto& presence = need(outputs, format.presence);
    expect_count(presence, format.presence, 1, "one presence score");
    heads.presence_logit = Floats(presence, format.presence).data()[0];
  }
  std::vector<float> xyxy;  // pred_boxes as x0,y0,x1,y1 where the decoder gives cx,cy,w,h
  if (format.cxcywh_boxes) {
    xyxy.assign(b.data(), b.data() + queries * 4);
    for (size_t q = 0; q < static_cast<size_t>(queries); ++q) {
      float* r = xyxy.data() + q * 4;
      const float cx = r[0], cy = r[1], w = r[2], h = r[3];
      r[0] = cx - w / 2, r[1] = cy - h / 2, r[2] = cx + w / 2, r[3] = cy + h / 2;
    }
  }
  heads.queries = static_cast<int>(queries);
  heads.mask_h = static_cast<int>(mshape[2]);
  heads.mask_w = static_cast<int>(mshape[3]);
  heads.masks = m.data();
  heads.logits = l.data();
  heads.boxes = format.cxcywh_boxes ? xyxy.data() : b.data();
  return predictor::instances_from_raw_heads(heads, width, height, options);
}

std::vector<Instance> from_final(const TensorViews& outputs, int width, int height, const SegmentOptions& options, int* corrected,
                                 const OutputFormat& format) {
  const auto& masks = need(outputs, "masks");
  const auto& mshape = masks.shape;  // [N,1,H,W] or [N,H,W]
  if (mshape.size() != 3 && !(mshape.size() == 4 && mshape[1] == 1)) {
    throw Error(ErrorCode::kModelMismatch, "decoder output 'masks' has shape " + shape_string(mshape) +
                                               ", expected [N, 1, H, W] or [N, H, W]; is this a SAM3 decoder?");
  }
  predictor::FinalDetections d;
  d.count = static_cast<int>(mshape[0]);
  d.mask_h = static_cast<int>(mshape[mshape.size() - 2]);
  d.mask_w = static_cast<int>(mshape.back());
  const auto &scores = need(outputs, "scores"), &boxes = need(outputs, "boxes");
  const std::string per_mask = std::to_string(d.count) + " masks " + shape_string(mshape);
  expect_count(scores, "scores", d.count, "one score per mask: " + per_mask);
  expect_count(boxes, "boxes", std::int64_t{d.count} * 4, "four box numbers per mask: " + per_mask);
  if (d.count > 0) expect_mask_size(d.mask_h, d.mask_w, "masks");
  const Floats s(scores, "scores"), b(boxes, "boxes");
  d.scores = s.data();
  d.boxes = b.data();
  d.normalized_boxes = format.normalized_boxes;
  d.export_sides = format.export_sides;
  std::optional<Floats> probabilities;
  if (masks.type == DType::kBool || masks.type == DType::kUint8) {
    d.masks = static_cast<const std::uint8_t*>(masks.data);
  } else {
    probabilities.emplace(masks, "masks");
    d.probabilities = probabilities->data();
  }
  if (options.score_threshold < 0.5f) {
    log(LogLevel::kDebug, "this decoder keeps only scores > 0.5 in the graph; a lower threshold has no effect");
  }
  return predictor::instances_from_final(d, width, height, options, corrected);
}

}  // namespace

std::vector<Instance> instances_from_outputs(const TensorViews& outputs, int width, int height, const SegmentOptions& options,
                                             int* corrected, const OutputFormat& format) {
  if (corrected) *corrected = 0;
  if (outputs.contains("pred_logits")) return from_raw_heads(outputs, width, height, options, format);
  return from_final(outputs, width, height, options, corrected, format);
}

}  // namespace sam3::pure
