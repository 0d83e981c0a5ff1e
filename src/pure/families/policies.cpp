#include "pure/families/policies.h"

#include <algorithm>
#include <cmath>

#include "predictor/postprocess.h"
#include "predictor/preprocess.h"
#include "sam3/error.h"
#include "sam3/log.h"

namespace sam3::pure::policy {

Tensor image_tensor(const std::string& name, int onnx_type, std::vector<float>& planes, int width, int height, Pixels rule, bool batch) {
  if (rule != Pixels::kSam3) {
    const auto pixels = predictor::to_uint8(planes);  // a uint8 resize: rounded and clamped
    std::copy(pixels.begin(), pixels.end(), planes.begin());
  }
  if (rule == Pixels::kHalfSam3) {
    // x/255 stored as float16, then (x - 0.5)/0.5 computed in float16, each step rounded.
    const auto half = [](float v) { return half_to_float(float_to_half(v)); };
    const float h05 = half(0.5f);
    for (auto& v : planes) v = half(half(half(v / 255.f) - h05) / h05);
  } else {
    predictor::normalize_sam3(planes);
  }
  std::vector<std::int64_t> shape = {3, height, width};
  if (batch) shape.insert(shape.begin(), 1);
  return float_tensor(name, onnx_type, shape, planes);
}

void input_size(const std::vector<std::int64_t>& shape, int& width, int& height) {
  height = shape.size() == 4 && shape[2] > 0 ? static_cast<int>(shape[2]) : 1008;
  width = shape.size() == 4 && shape[3] > 0 ? static_cast<int>(shape[3]) : 1008;
}

std::vector<Tensor> hf_text_inputs(const PartSpec& text, const TokenizedText& tokens, std::int64_t pad_id) {
  const std::vector<std::int64_t> shape = {1, kContextLength};
  std::vector<std::int64_t> ids(kContextLength, pad_id), mask(kContextLength, 0);
  for (int i = 0; i < tokens.length && i < kContextLength; ++i) {
    ids[static_cast<size_t>(i)] = tokens.ids[static_cast<size_t>(i)];
    mask[static_cast<size_t>(i)] = 1;
  }
  std::vector<Tensor> out = {int_tensor("input_ids", text.input("input_ids")->type, shape, ids)};
  if (const auto* m = text.input("attention_mask")) out.push_back(int_tensor("attention_mask", m->type, shape, mask));
  return out;
}

Tensor sam3_ids(const std::string& name, int onnx_type, const TokenizedText& tokens) {
  return int_tensor(name, onnx_type, {1, kContextLength}, {tokens.ids.begin(), tokens.ids.end()});
}

BoxRows box_rows(const std::vector<BoxPrompt>& boxes, int width, int height, std::int64_t min_rows, std::int64_t pad_label) {
  BoxRows r;
  r.n = std::max<std::int64_t>(min_rows, static_cast<std::int64_t>(boxes.size()));
  r.coords.assign(static_cast<size_t>(r.n) * 4, 0.f);
  r.labels.assign(static_cast<size_t>(r.n), pad_label);
  r.padding.assign(static_cast<size_t>(r.n), 1);
  const float w = static_cast<float>(width), h = static_cast<float>(height);
  for (size_t i = 0; i < boxes.size(); ++i) {
    const Box& b = boxes[i].box;
    const float c[4] = {(b.x0 + b.x1) / 2.f / w, (b.y0 + b.y1) / 2.f / h, (b.x1 - b.x0) / w, (b.y1 - b.y0) / h};
    std::copy(std::begin(c), std::end(c), r.coords.begin() + static_cast<std::ptrdiff_t>(i * 4));
    r.labels[i] = boxes[i].positive ? 1 : 0;
    r.padding[i] = 0;
  }
  return r;
}

Tensor concat_sequences(const std::string& name, int onnx_type, const TensorView& a, const TensorView* b, const std::string& what) {
  if (a.shape.size() < 2 || (b && (b->shape.size() != a.shape.size()))) {
    throw Error(ErrorCode::kModelMismatch, what + " of shapes " + shape_string(a.shape) +
                                               (b ? " and " + shape_string(b->shape) : std::string()) + " cannot be joined");
  }
  std::vector<std::int64_t> shape = a.shape;
  if (b) shape[1] += b->shape[1];
  if (a.type == DType::kBool) {
    std::vector<std::uint8_t> v(static_cast<const std::uint8_t*>(a.data), static_cast<const std::uint8_t*>(a.data) + a.count);
    if (b) v.insert(v.end(), static_cast<const std::uint8_t*>(b->data), static_cast<const std::uint8_t*>(b->data) + b->count);
    return bool_tensor(name, shape, v);
  }
  std::vector<float> v = to_float32(a, what);
  if (b) {
    const auto more = to_float32(*b, what);
    v.insert(v.end(), more.begin(), more.end());
  }
  return float_tensor(name, onnx_type, shape, v);
}

const TensorView& need(const TensorViews& views, const std::string& name, const std::string& part) {
  auto it = views.find(name);
  if (it == views.end()) throw Error(ErrorCode::kRuntime, part + " produced no '" + name + "' output");
  return it->second;
}

std::vector<Tensor> text_then_geometry(const PartSpec& decoder, const TensorViews& text, const TensorViews* geometry) {
  const auto& features = need(text, "text_features", "the text encoder");
  const auto& mask = need(text, "text_mask", "the text encoder");
  const TensorView* geo_features = geometry ? &need(*geometry, "geometry_features", "the geometry encoder") : nullptr;
  const TensorView* geo_mask = geometry ? &need(*geometry, "geometry_mask", "the geometry encoder") : nullptr;
  return {concat_sequences("prompt_features", decoder.input("prompt_features")->type, features, geo_features, "text and geometry features"),
          concat_sequences("prompt_mask", static_cast<int>(DType::kBool), mask, geo_mask, "text and geometry masks")};
}

std::vector<Instance> decoded_instances(const TensorViews& outputs, int width, int height, const SegmentOptions& options,
                                        const OutputFormat& format) {
  int corrected = 0;
  auto found = instances_from_outputs(outputs, width, height, options, &corrected, format);
  if (corrected > 0) {
    log(LogLevel::kInfo, std::to_string(corrected) +
                             " box(es) disagreed with their masks (a box scale "
                             "frozen at export time) and were rescaled or replaced by the mask bounds");
  }
  return found;
}

namespace {

float box_area(const Box& b) { return std::max(0.f, b.x1 - b.x0) * std::max(0.f, b.y1 - b.y0); }

float box_iom(const Box& a, const Box& b) {
  const Box i{std::max(a.x0, b.x0), std::max(a.y0, b.y0), std::min(a.x1, b.x1), std::min(a.y1, b.y1)};
  const float smaller = std::min(box_area(a), box_area(b));
  return smaller > 0 ? box_area(i) / smaller : 0.f;
}

float mask_iom(const Instance& a, const Instance& b) {
  const std::int64_t both = predictor::mask_intersection(a.mask, b.mask);
  const std::int64_t smaller = std::min(a.area, b.area);
  return smaller > 0 ? static_cast<float>(both) / static_cast<float>(smaller) : 0.f;
}

}  // namespace

std::vector<bool> iom_suppressed(const std::vector<const Instance*>& instances, float mask_threshold, float box_threshold) {
  std::vector<size_t> order(instances.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return instances[a]->score > instances[b]->score; });
  // The box test is on each mask's bounds as the reference derives them (the last pixel's
  // index, not one past it: masks_to_boxes).
  std::vector<Box> bounds;
  if (box_threshold > 0) {
    for (const auto* inst : instances) {
      Box b = predictor::mask_bounds(inst->mask);
      if (b.x1 > b.x0) b.x1 -= 1, b.y1 -= 1;
      bounds.push_back(b);
    }
  }
  std::vector<bool> dropped(instances.size(), false);
  std::vector<size_t> kept;
  for (size_t i : order) {
    for (size_t k : kept) {
      if ((mask_threshold > 0 && mask_iom(*instances[k], *instances[i]) > mask_threshold) ||
          (box_threshold > 0 && box_iom(bounds[k], bounds[i]) > box_threshold)) {
        dropped[i] = true;
        break;
      }
    }
    if (!dropped[i]) kept.push_back(i);
  }
  return dropped;
}

void suppress_by_iom(std::vector<Instance>& instances, float mask_threshold, float box_threshold) {
  std::vector<const Instance*> all;
  for (const auto& inst : instances) all.push_back(&inst);
  const auto dropped = iom_suppressed(all, mask_threshold, box_threshold);
  std::vector<Instance> out;
  for (size_t i = 0; i < instances.size(); ++i) {
    if (!dropped[i]) out.push_back(std::move(instances[i]));
  }
  instances = std::move(out);
}

}  // namespace sam3::pure::policy
