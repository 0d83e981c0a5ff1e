// Layout "usls" (RectLabel sam3_v2): normalization outside the graph, batch dimension,
// any number of exemplar boxes, raw decoder heads.
#include <algorithm>
#include <optional>

#include "core/timer.h"
#include "model/backend.h"
#include "model/contract.h"
#include "model/tensors.h"
#include "model/text_inputs.h"
#include "predictor/postprocess.h"
#include "predictor/preprocess.h"
#include "sam3/error.h"

namespace sam3::detail {
namespace {

const char* const kImageFeatures[] = {"fpn_feat_0", "fpn_feat_1", "fpn_feat_2", "fpn_pos_2"};

std::optional<rt::Session> geometry_session(const ModelFiles& files, const rt::SessionConfig& config) {
  if (const auto* path = files.find("geometry")) return std::make_optional<rt::Session>(*path, config);
  return std::nullopt;
}

// Sequences [1, La, 256] and [1, Lb, 256] (or masks [1, La], [1, Lb]) joined along axis 1,
// in float32 (bool for masks): the first usls generation's prompt = text then geometry.
Ort::Value concat_sequences(const Ort::Value& a, const Ort::Value& b) {
  const auto sa = rt::shape_of(a), sb = rt::shape_of(b);
  std::vector<std::int64_t> shape = sa;
  shape[1] = sa[1] + sb[1];
  Ort::AllocatorWithDefaultOptions allocator;
  const auto type = a.GetTensorTypeAndShapeInfo().GetElementType();
  const size_t na = a.GetTensorTypeAndShapeInfo().GetElementCount(), nb = b.GetTensorTypeAndShapeInfo().GetElementCount();
  if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL) {
    auto out = Ort::Value::CreateTensor<bool>(allocator, shape.data(), shape.size());
    bool* d = out.GetTensorMutableData<bool>();
    std::copy_n(a.GetTensorData<bool>(), na, d);
    std::copy_n(b.GetTensorData<bool>(), nb, d + na);
    return out;
  }
  auto out = Ort::Value::CreateTensor<float>(allocator, shape.data(), shape.size());
  float* d = out.GetTensorMutableData<float>();
  std::copy_n(a.GetTensorData<float>(), na, d);
  std::copy_n(b.GetTensorData<float>(), nb, d + na);
  return out;
}

class UslsBackend final : public Backend {
 public:
  UslsBackend(const ModelFiles& files, const rt::SessionConfig& encoder, const rt::SessionConfig& config)
      : vision_(files.parts.at("image"), encoder), text_(files.parts.at("text"), config),
        decoder_(files.parts.at("decoder"), config), geometry_(geometry_session(files, config)) {
    require_inputs(vision_, {{"images", kFloatOrHalf, {4}}});
    std::vector<Expected> features;
    for (const char* name : kImageFeatures) features.push_back({name, kFloatOrHalf, {4}});
    require_outputs(vision_, features);
    require_inputs(text_, {{"input_ids", kIntTypes, {2}}});
    require_outputs(text_, {{"text_features", kFloatOrHalf, {3}}, {"text_mask", kBool, {2}}});
    if (geometry_) {
      // The first generation: boxes go through their own encoder, and the decoder takes the
      // text and geometry features as one prompt sequence.
      require_inputs(*geometry_, {{"input_boxes", kFloatOrHalf, {3}}, {"input_boxes_labels", kIntTypes, {2}},
                                  {"fpn_feat", kFloatOrHalf, {4}}, {"fpn_pos", kFloatOrHalf, {4}}});
      require_outputs(*geometry_, {{"geometry_features", kFloatOrHalf, {3}}, {"geometry_mask", kBool, {2}}});
      require_inputs(decoder_, {{"prompt_features", kFloatOrHalf, {3}}, {"prompt_mask", kBool, {2}}});
    } else {
      require_inputs(decoder_, {{"input_boxes", kFloatOrHalf, {3}}, {"input_boxes_labels", kIntTypes, {2}}});
    }
    require_outputs(decoder_, {{"pred_masks", kFloatOrHalf, {4}}, {"pred_boxes", kFloatOrHalf, {3}},
                               {"pred_logits", kFloatOrHalf, {2}}, {"presence_logits", kFloatOrHalf, {2}}});
    // Any export size (usls's export_v2.py defaults to 504 x 896): the image is stretched to it.
    const auto& shape = vision_.input("images")->shape;
    height_ = shape.size() == 4 && shape[2] > 0 ? static_cast<int>(shape[2]) : 1008;
    width_ = shape.size() == 4 && shape[3] > 0 ? static_cast<int>(shape[3]) : 1008;
    half_ = vision_.input("images")->type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 ||
            decoder_.output("pred_masks")->type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
  }

  Layout layout() const override { return Layout::kUsls; }
  std::string generation() const override { return geometry_ ? "usls v1 (separate geometry encoder)" : "usls"; }
  std::vector<std::string> quirks() const override {
    std::vector<std::string> q = {"image normalized outside the graph (x/127.5 - 1)",
                                  "Hugging Face attention mask (\"!\" is a real token), end-token padding",
                                  "raw decoder heads: scores, mask upsampling and thresholds in sam3"};
    if (width_ != height_) q.push_back("not square: the image is stretched to " + std::to_string(width_) + "x" + std::to_string(height_));
    if (half_) q.push_back("float16 inputs and outputs, converted at the edges");
    if (geometry_) q.push_back("exemplar boxes encoded by geometry-encoder.onnx, joined to the text features");
    return q;
  }
  int input_width() const override { return width_; }
  int input_height() const override { return height_; }
  std::vector<const rt::Session*> sessions() const override {
    std::vector<const rt::Session*> all = {&vision_, &text_, &decoder_};
    if (geometry_) all.push_back(&*geometry_);
    return all;
  }

  std::map<std::string, Ort::Value> encode_image(std::vector<float>& planes) const override {
    normalize_sam3(planes);
    auto input = rt::view(planes.data(), planes.size(), {1, 3, height_, width_});
    auto outputs = vision_.run({{"images", input}});
    // Keep what the decoder takes (the first generation also gives fpn_feat_3 and fpn_pos_0/1/3).
    std::erase_if(outputs, [](const auto& kv) {
      return std::find(std::begin(kImageFeatures), std::end(kImageFeatures), kv.first) == std::end(kImageFeatures);
    });
    return outputs;
  }

  TextFeatures encode_text(const TokenizedText& tokens) const override {
    const std::vector<std::int64_t> shape = {1, kContextLength};
    const HfTextInputs in = hf_text_inputs(tokens);
    IntInput ids(text_.input("input_ids")->type, in.ids);
    const auto* mask_info = text_.input("attention_mask");
    IntInput mask(mask_info ? mask_info->type : ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, in.attention_mask);
    auto ids_v = ids.view(shape), mask_v = mask.view(shape);
    auto out = text_.run({{"input_ids", ids_v}, {"attention_mask", mask_v}});
    if (geometry_) rt::outputs_to_float32(out);  // joined with the geometry features on the CPU
    return {std::move(out)};
  }

  std::vector<Instance> decode(const EmbeddingData& image, const TextFeatures& text,
                               const std::vector<BoxPrompt>& boxes, const SegmentOptions& options,
                               PromptTimings& timings) const override {
    const auto t0 = Clock::now();
    auto outputs = geometry_ ? decode_with_geometry(image, text, boxes) : decode_with_boxes(image, text, boxes);
    timings.decode_ms = ms_since(t0);
    const auto t1 = Clock::now();
    rt::outputs_to_float32(outputs);
    auto instances = instances_from_outputs(outputs, image.width, image.height, options, nullptr);
    timings.postprocess_ms = ms_since(t1);
    return instances;
  }

 private:
  std::map<std::string, Ort::Value> decode_with_boxes(const EmbeddingData& image, const TextFeatures& text,
                                                      const std::vector<BoxPrompt>& boxes) const {
    // Text-only prompting is one padding box (0,0,0,0) labelled -10.
    const std::int64_t n = std::max<std::int64_t>(1, static_cast<std::int64_t>(boxes.size()));
    std::vector<float> coords(static_cast<size_t>(n) * 4, 0.f);
    std::vector<std::int64_t> labels(static_cast<size_t>(n), -10);
    fill_boxes(boxes, image, coords, labels);
    auto coords_v = rt::view(coords.data(), coords.size(), {1, n, 4});
    IntInput label_input(decoder_.input("input_boxes_labels")->type, labels);
    auto labels_v = label_input.view({1, n});
    std::map<std::string, const OrtValue*> feeds = {{"input_boxes", coords_v}, {"input_boxes_labels", labels_v}};
    for (const auto& [name, value] : image.features) feeds[name] = value;
    for (const auto& [name, value] : text.values) feeds[name] = value;
    return decoder_.run(feeds);
  }

  // usls v1: text-only prompts give the decoder the text alone; with boxes (for a box-only
  // prompt, at least one positive) the geometry encoder's features are appended.
  std::map<std::string, Ort::Value> decode_with_geometry(const EmbeddingData& image, const TextFeatures& text,
                                                         const std::vector<BoxPrompt>& boxes) const {
    std::map<std::string, const OrtValue*> feeds;
    for (const auto& [name, value] : image.features) feeds[name] = value;
    const Ort::Value& text_features = text.values.at("text_features");
    const Ort::Value& text_mask = text.values.at("text_mask");
    std::optional<Ort::Value> prompt, mask;
    if (!boxes.empty()) {
      const auto n = static_cast<std::int64_t>(boxes.size());
      std::vector<float> coords(static_cast<size_t>(n) * 4, 0.f);
      std::vector<std::int64_t> labels(static_cast<size_t>(n), 0);
      fill_boxes(boxes, image, coords, labels);
      auto coords_v = rt::view(coords.data(), coords.size(), {1, n, 4});
      IntInput label_input(geometry_->input("input_boxes_labels")->type, labels);
      auto labels_v = label_input.view({1, n});
      auto geo = geometry_->run({{"input_boxes", coords_v}, {"input_boxes_labels", labels_v},
                                 {"fpn_feat", image.features.at("fpn_feat_2")}, {"fpn_pos", image.features.at("fpn_pos_2")}});
      rt::outputs_to_float32(geo);
      prompt = concat_sequences(text_features, geo.at("geometry_features"));
      mask = concat_sequences(text_mask, geo.at("geometry_mask"));
    }
    feeds["prompt_features"] = prompt ? static_cast<const OrtValue*>(*prompt) : static_cast<const OrtValue*>(text_features);
    feeds["prompt_mask"] = mask ? static_cast<const OrtValue*>(*mask) : static_cast<const OrtValue*>(text_mask);
    return decoder_.run(feeds);
  }

  static void fill_boxes(const std::vector<BoxPrompt>& boxes, const EmbeddingData& image, std::vector<float>& coords,
                         std::vector<std::int64_t>& labels) {
    for (size_t i = 0; i < boxes.size(); ++i) {
      const auto c = normalized_cxcywh(boxes[i].box, image.width, image.height);
      std::copy(c.begin(), c.end(), coords.begin() + static_cast<std::ptrdiff_t>(i * 4));
      labels[i] = boxes[i].positive ? 1 : 0;
    }
  }

  rt::Session vision_, text_, decoder_;
  std::optional<rt::Session> geometry_;
  int width_ = 1008, height_ = 1008;
  bool half_ = false;
};

}  // namespace

std::unique_ptr<Backend> make_usls_backend(const ModelFiles& files, const rt::SessionConfig& encoder,
                                           const rt::SessionConfig& config) {
  return std::make_unique<UslsBackend>(files, encoder, config);
}

}  // namespace sam3::detail
