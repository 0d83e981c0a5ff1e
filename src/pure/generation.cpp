#include "pure/generation.h"

#include <algorithm>
#include <cstring>

#include "predictor/preprocess.h"
#include "pure/contract.h"
#include "sam3/error.h"
#include "sam3/log.h"

namespace sam3::pure {
namespace {

const char* const kUslsImageFeatures[] = {"fpn_feat_0", "fpn_feat_1", "fpn_feat_2", "fpn_pos_2"};

bool is_usls_feature(const std::string& name) {
  return std::find(std::begin(kUslsImageFeatures), std::end(kUslsImageFeatures), name) != std::end(kUslsImageFeatures);
}

// Pixel x0,y0,x1,y1 -> normalized cx,cy,w,h (SAM3's geometry prompt format), into slot i.
void put_box(const Box& b, int width, int height, std::vector<float>& coords, size_t i) {
  const float w = static_cast<float>(width), h = static_cast<float>(height);
  const float c[4] = {(b.x0 + b.x1) / 2.f / w, (b.y0 + b.y1) / 2.f / h, (b.x1 - b.x0) / w, (b.y1 - b.y0) / h};
  std::copy(std::begin(c), std::end(c), coords.begin() + static_cast<std::ptrdiff_t>(i * 4));
}

// Sequences [1, La, D] and [1, Lb, D] (or masks [1, La], [1, Lb]) joined along axis 1.
Tensor concat_sequences(const std::string& name, int onnx_type, const TensorView& a, const TensorView* b,
                        const std::string& what) {
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

}  // namespace

Generation Generation::usls(const PartSpec& image, const PartSpec& text, const PartSpec& decoder, const PartSpec* geometry) {
  require_inputs(image, {{"images", kFloatOrHalf, {4}}});
  std::vector<Expected> features;
  for (const char* name : kUslsImageFeatures) features.push_back({name, kFloatOrHalf, {4}});
  require_outputs(image, features);
  require_inputs(text, {{"input_ids", kIntTypes, {2}}});
  require_outputs(text, {{"text_features", kFloatOrHalf, {3}}, {"text_mask", kBool, {2}}});
  if (geometry) {
    // The first generation: boxes go through their own encoder, and the decoder takes the
    // text and geometry features as one prompt sequence.
    require_inputs(*geometry, {{"input_boxes", kFloatOrHalf, {3}}, {"input_boxes_labels", kIntTypes, {2}},
                               {"fpn_feat", kFloatOrHalf, {4}}, {"fpn_pos", kFloatOrHalf, {4}}});
    require_outputs(*geometry, {{"geometry_features", kFloatOrHalf, {3}}, {"geometry_mask", kBool, {2}}});
    require_inputs(decoder, {{"prompt_features", kFloatOrHalf, {3}}, {"prompt_mask", kBool, {2}}});
  } else {
    require_inputs(decoder, {{"input_boxes", kFloatOrHalf, {3}}, {"input_boxes_labels", kIntTypes, {2}}});
  }
  require_outputs(decoder, {{"pred_masks", kFloatOrHalf, {4}}, {"pred_boxes", kFloatOrHalf, {3}},
                            {"pred_logits", kFloatOrHalf, {2}}, {"presence_logits", kFloatOrHalf, {2}}});
  Generation g;
  g.family_ = Family::kUsls;
  g.image_ = image;
  g.text_ = text;
  g.decoder_ = decoder;
  if (geometry) g.geometry_ = *geometry;
  // Any export size (usls's export_v2.py defaults to 504 x 896): the image is stretched to it.
  const auto& shape = image.input("images")->shape;
  g.height_ = shape.size() == 4 && shape[2] > 0 ? static_cast<int>(shape[2]) : 1008;
  g.width_ = shape.size() == 4 && shape[3] > 0 ? static_cast<int>(shape[3]) : 1008;
  g.half_ = image.input("images")->type == static_cast<int>(DType::kFloat16) ||
            decoder.output("pred_masks")->type == static_cast<int>(DType::kFloat16);
  g.raw_heads_ = true;
  return g;
}

Generation Generation::samexporter(const PartSpec& image, const PartSpec& text, const PartSpec& decoder) {
  // uint8 (normalized in the graph), or float [1,3,S,S] normalized by the caller.
  require_inputs(image, {{"image", {static_cast<int>(DType::kUint8), static_cast<int>(DType::kFloat)}, {3, 4}}});
  require_outputs(image, {{"backbone_fpn_0", kFloat, {4}}, {"vision_pos_enc_2", kFloat, {4}}});
  require_inputs(text, {{"tokens", kIntTypes, {2}}});
  require_outputs(text, {{"text_attention_mask", kBool, {2}}, {"text_memory", kFloat, {3}}});
  require_inputs(decoder, {{"box_coords", kFloat, {3}}, {"box_labels", kIntTypes, {2}}});
  Generation g;
  g.family_ = Family::kSamexporter;
  g.image_ = image;
  g.text_ = text;
  g.decoder_ = decoder;
  g.raw_heads_ = decoder.output("pred_logits") != nullptr;
  if (g.raw_heads_) {
    require_outputs(decoder, {{"pred_masks", kFloat, {4}}, {"pred_boxes", kFloat, {3}},
                              {"pred_logits", kFloat, {2}}, {"presence_logits", kFloat, {2}}});
  } else {
    // samexporter: boolean masks at the size given; osam's newer decoder: no size inputs,
    // probabilities at the model's resolution and normalized boxes.
    g.format_.normalized_boxes = !decoder.input("original_height") && !decoder.input("original_width");
    require_outputs(decoder, {{"boxes", kFloat, {2}}, {"scores", kFloat, {1}},
                              {"masks", g.format_.normalized_boxes ? kFloat : kBool, {3, 4}}});
  }
  const auto& shape = image.input("image")->shape;
  g.image_rank_ = static_cast<int>(shape.size());
  g.float_image_ = image.input("image")->type == static_cast<int>(DType::kFloat);
  g.width_ = g.height_ = square_side(shape, 1008);
  g.format_.export_sides = {1008};
  if (g.width_ != 1008) g.format_.export_sides.push_back(g.width_);
  // Box slots: [1,K,4] batch first, or SAM3's sequence-first [K,1,4] (labels [K,1]); the
  // flattened data is the same, only the shapes differ.
  const auto& slots = decoder.input("box_coords")->shape;
  g.sequence_first_ = slots.size() == 3 && slots[1] == 1 && slots[0] != 1;
  const std::int64_t k = g.sequence_first_ ? slots[0] : (slots.size() == 3 ? slots[1] : 0);
  g.box_slots_ = k > 0 ? k : 0;
  return g;
}

std::string Generation::name() const {
  if (family_ == Family::kUsls) return has_geometry() ? "usls v1 (separate geometry encoder)" : "usls";
  if (raw_heads_) return "samexporter (raw heads)";
  return format_.normalized_boxes ? "osam" : "samexporter";
}

std::vector<std::string> Generation::quirks() const {
  std::vector<std::string> q;
  if (family_ == Family::kUsls) {
    q = {"image normalized outside the graph (x/127.5 - 1)",
         "Hugging Face attention mask (\"!\" is a real token), end-token padding",
         "raw decoder heads: scores, mask upsampling and thresholds in sam3"};
    if (width_ != height_) q.push_back("not square: the image is stretched to " + std::to_string(width_) + "x" + std::to_string(height_));
    if (half_) q.push_back("float16 inputs and outputs, converted at the edges");
    if (has_geometry()) q.push_back("exemplar boxes encoded by geometry-encoder.onnx, joined to the text features");
    return q;
  }
  q = {float_image_ ? "float image normalized by sam3 (x/127.5 - 1)" : "image normalized inside the graph (uint8 input)",
       "text mask computed by the graph (tokens != 0)"};
  if (sequence_first_) q.push_back("sequence-first box inputs (box_coords [K,1,4])");
  if (!raw_heads_) {
    q.push_back("score threshold 0.5 inside the graph (lower thresholds have no effect)");
    if (format_.normalized_boxes) {
      q.push_back("no image size inputs: normalized boxes, probability masks resized and cut at mask_threshold");
    } else {
      q.push_back("boxes checked against their masks (a box scale frozen at export): rescaled or replaced");
    }
  }
  q.push_back(std::to_string(box_slots_or_one()) + " exemplar box slot(s) per prompt");
  return q;
}

std::vector<Tensor> Generation::image_inputs(std::vector<float>& planes) const {
  if (planes.size() != static_cast<size_t>(3) * width_ * height_) {
    throw Error(ErrorCode::kInvalidArgument, "the prepared image was made for another model input size");
  }
  if (family_ == Family::kUsls) {
    normalize_sam3(planes);
    return {float_tensor("images", image_.input("images")->type, {1, 3, height_, width_}, planes)};
  }
  std::vector<std::int64_t> shape = {3, height_, width_};
  if (image_rank_ == 4) shape.insert(shape.begin(), 1);
  if (float_image_) {
    normalize_sam3(planes);
    return {float_tensor("image", static_cast<int>(DType::kFloat), shape, planes)};
  }
  return {uint8_tensor("image", shape, to_uint8(planes))};
}

bool Generation::keeps_image_output(const std::string& name) const {
  // usls: the first generation also gives fpn_feat_3 and fpn_pos_0/1/3, which nothing takes.
  return family_ == Family::kSamexporter || is_usls_feature(name);
}

std::vector<Tensor> Generation::text_inputs(const TokenizedText& tokens) const {
  const std::vector<std::int64_t> shape = {1, kContextLength};
  if (family_ == Family::kSamexporter) {
    return {int_tensor("tokens", text_.input("tokens")->type, shape, {tokens.ids.begin(), tokens.ids.end()})};
  }
  // As Hugging Face's CLIP tokenizer gives them (what the usls exports were traced with): every
  // real token has mask 1, "!" (id 0) included, and the padding is the end token. SAM3's own
  // rule (TokenizedText::mask, ids != 0) would mask a "!".
  std::vector<std::int64_t> ids(kContextLength, kEndOfText), mask(kContextLength, 0);
  for (int i = 0; i < tokens.length && i < kContextLength; ++i) {
    ids[static_cast<size_t>(i)] = tokens.ids[static_cast<size_t>(i)];
    mask[static_cast<size_t>(i)] = 1;
  }
  std::vector<Tensor> out = {int_tensor("input_ids", text_.input("input_ids")->type, shape, ids)};
  if (const auto* m = text_.input("attention_mask")) out.push_back(int_tensor("attention_mask", m->type, shape, mask));
  return out;
}

std::vector<Tensor> Generation::decoder_inputs(const std::vector<BoxPrompt>& boxes, int width, int height) const {
  if (family_ == Family::kUsls) {
    if (has_geometry()) return {};  // the boxes go to the geometry encoder, the prompt to prompt_inputs
    // Text-only prompting is one padding box (0,0,0,0) labelled -10.
    const std::int64_t n = std::max<std::int64_t>(1, static_cast<std::int64_t>(boxes.size()));
    std::vector<float> coords(static_cast<size_t>(n) * 4, 0.f);
    std::vector<std::int64_t> labels(static_cast<size_t>(n), -10);
    for (size_t i = 0; i < boxes.size(); ++i) {
      put_box(boxes[i].box, width, height, coords, i);
      labels[i] = boxes[i].positive ? 1 : 0;
    }
    return {float_tensor("input_boxes", decoder_.input("input_boxes")->type, {1, n, 4}, coords),
            int_tensor("input_boxes_labels", decoder_.input("input_boxes_labels")->type, {1, n}, labels)};
  }
  const std::int64_t n = box_slots_ > 0 ? box_slots_ : std::max<std::int64_t>(1, static_cast<std::int64_t>(boxes.size()));
  if (static_cast<std::int64_t>(boxes.size()) > n) {
    throw Error(ErrorCode::kInvalidArgument,
                "this samexporter model takes at most " + std::to_string(n) + " exemplar box" + (n == 1 ? "" : "es") +
                    " per prompt, got " + std::to_string(boxes.size()) +
                    "; split the boxes over several prompts or use a usls-layout model");
  }
  // Unused slots: coords 0, label 1, masked out (box_masks True).
  std::vector<float> coords(static_cast<size_t>(n) * 4, 0.f);
  std::vector<std::int64_t> labels(static_cast<size_t>(n), 1);
  std::vector<std::uint8_t> masked(static_cast<size_t>(n), 1);
  for (size_t i = 0; i < boxes.size(); ++i) {
    put_box(boxes[i].box, width, height, coords, i);
    labels[i] = boxes[i].positive ? 1 : 0;
    masked[i] = 0;
  }
  std::vector<Tensor> out = {
      float_tensor("box_coords", static_cast<int>(DType::kFloat),
                   sequence_first_ ? std::vector<std::int64_t>{n, 1, 4} : std::vector<std::int64_t>{1, n, 4}, coords),
      int_tensor("box_labels", decoder_.input("box_labels")->type,
                 sequence_first_ ? std::vector<std::int64_t>{n, 1} : std::vector<std::int64_t>{1, n}, labels)};
  if (decoder_.input("box_masks")) out.push_back(bool_tensor("box_masks", {1, n}, masked));
  for (auto [name, value] : {std::pair{"original_height", height}, std::pair{"original_width", width}}) {
    const auto* spec = decoder_.input(name);
    if (!spec) continue;
    out.push_back(int_tensor(name, spec->type, spec->shape.empty() ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{1},
                             {value}));
  }
  return out;
}

std::map<std::string, std::string> Generation::text_feeds() const {
  std::map<std::string, std::string> out;
  if (has_geometry()) return out;  // the text reaches the decoder through prompt_inputs
  // The decoder's names for samexporter's language encoder outputs.
  const std::map<std::string, std::string> renamed = {
      {"language_mask", "text_attention_mask"}, {"language_features", "text_memory"}, {"language_embeds", "text_embeds"}};
  for (const auto& input : decoder_.inputs) {
    auto it = renamed.find(input.name);
    const std::string source = family_ == Family::kSamexporter && it != renamed.end() ? it->second : input.name;
    if (text_.output(source)) out[input.name] = source;
  }
  return out;
}

std::vector<std::string> Generation::image_feeds() const {
  std::vector<std::string> out;
  for (const auto& input : decoder_.inputs) {
    if (image_.output(input.name) && keeps_image_output(input.name)) out.push_back(input.name);
  }
  return out;
}

std::vector<Tensor> Generation::geometry_inputs(const std::vector<BoxPrompt>& boxes, int width, int height) const {
  if (!has_geometry() || boxes.empty()) return {};
  const auto n = static_cast<std::int64_t>(boxes.size());
  std::vector<float> coords(static_cast<size_t>(n) * 4, 0.f);
  std::vector<std::int64_t> labels(static_cast<size_t>(n), 0);
  for (size_t i = 0; i < boxes.size(); ++i) {
    put_box(boxes[i].box, width, height, coords, i);
    labels[i] = boxes[i].positive ? 1 : 0;
  }
  return {float_tensor("input_boxes", geometry_.input("input_boxes")->type, {1, n, 4}, coords),
          int_tensor("input_boxes_labels", geometry_.input("input_boxes_labels")->type, {1, n}, labels)};
}

std::map<std::string, std::string> Generation::geometry_image_feeds() const {
  if (!has_geometry()) return {};
  return {{"fpn_feat", "fpn_feat_2"}, {"fpn_pos", "fpn_pos_2"}};
}

std::vector<Tensor> Generation::prompt_inputs(const TensorViews& text, const TensorViews* geometry) const {
  if (!has_geometry()) return {};
  const auto& features = need(text, "text_features", "the text encoder");
  const auto& mask = need(text, "text_mask", "the text encoder");
  const TensorView* geo_features = geometry ? &need(*geometry, "geometry_features", "the geometry encoder") : nullptr;
  const TensorView* geo_mask = geometry ? &need(*geometry, "geometry_mask", "the geometry encoder") : nullptr;
  return {concat_sequences("prompt_features", decoder_.input("prompt_features")->type, features, geo_features,
                           "text and geometry features"),
          concat_sequences("prompt_mask", static_cast<int>(DType::kBool), mask, geo_mask, "text and geometry masks")};
}

std::vector<Instance> Generation::instances(const TensorViews& outputs, int width, int height,
                                            const SegmentOptions& options) const {
  int corrected = 0;
  auto found = instances_from_outputs(outputs, width, height, options, &corrected, format_);
  if (corrected > 0) {
    log(LogLevel::kInfo, std::to_string(corrected) + " box(es) disagreed with their masks (a box scale "
                         "frozen at export time) and were rescaled or replaced by the mask bounds");
  }
  return found;
}

}  // namespace sam3::pure
