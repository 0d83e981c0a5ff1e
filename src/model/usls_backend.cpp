// Layout "usls" (RectLabel sam3_v2): normalization outside the graph, batch dimension,
// any number of exemplar boxes, raw decoder heads.
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

const char* const kVision = "vision-encoder.onnx";
const char* const kText = "text-encoder.onnx";
const char* const kDecoder = "decoder.onnx";
const char* const kImageFeatures[] = {"fpn_feat_0", "fpn_feat_1", "fpn_feat_2", "fpn_pos_2"};

class UslsBackend final : public Backend {
 public:
  UslsBackend(const std::filesystem::path& dir, const rt::SessionConfig& encoder, const rt::SessionConfig& config)
      : vision_(dir / kVision, encoder), text_(dir / kText, config), decoder_(dir / kDecoder, config) {
    require_inputs(vision_, {{"images", kFloat, {4}}});
    std::vector<Expected> features;
    for (const char* name : kImageFeatures) features.push_back({name, kFloat, {4}});
    require_outputs(vision_, features);
    require_inputs(text_, {{"input_ids", kIntTypes, {2}}});
    require_outputs(text_, {{"text_features", kFloat, {3}}, {"text_mask", kBool, {2}}});
    require_inputs(decoder_, {{"input_boxes", kFloat, {3}}, {"input_boxes_labels", kIntTypes, {2}}});
    require_outputs(decoder_, {{"pred_masks", kFloat, {4}}, {"pred_boxes", kFloat, {3}},
                               {"pred_logits", kFloat, {2}}, {"presence_logits", kFloat, {2}}});
    // Any export size (usls's export_v2.py defaults to 504 x 896): the image is stretched to it.
    const auto& shape = vision_.input("images")->shape;
    height_ = shape.size() == 4 && shape[2] > 0 ? static_cast<int>(shape[2]) : 1008;
    width_ = shape.size() == 4 && shape[3] > 0 ? static_cast<int>(shape[3]) : 1008;
  }

  Layout layout() const override { return Layout::kUsls; }
  std::string generation() const override { return "usls"; }
  std::vector<std::string> quirks() const override {
    std::vector<std::string> q = {"image normalized outside the graph (x/127.5 - 1)",
                                  "Hugging Face attention mask (\"!\" is a real token), end-token padding",
                                  "raw decoder heads: scores, mask upsampling and thresholds in sam3"};
    if (width_ != height_) q.push_back("not square: the image is stretched to " + std::to_string(width_) + "x" + std::to_string(height_));
    return q;
  }
  int input_width() const override { return width_; }
  int input_height() const override { return height_; }
  std::vector<const rt::Session*> sessions() const override { return {&vision_, &text_, &decoder_}; }

  std::map<std::string, Ort::Value> encode_image(std::vector<float>& planes) const override {
    normalize_sam3(planes);
    auto input = rt::view(planes.data(), planes.size(), {1, 3, height_, width_});
    return vision_.run({{"images", input}});
  }

  TextFeatures encode_text(const TokenizedText& tokens) const override {
    const std::vector<std::int64_t> shape = {1, kContextLength};
    const HfTextInputs in = hf_text_inputs(tokens);
    IntInput ids(text_.input("input_ids")->type, in.ids);
    const auto* mask_info = text_.input("attention_mask");
    IntInput mask(mask_info ? mask_info->type : ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, in.attention_mask);
    auto ids_v = ids.view(shape), mask_v = mask.view(shape);
    return {text_.run({{"input_ids", ids_v}, {"attention_mask", mask_v}})};
  }

  std::vector<Instance> decode(const EmbeddingData& image, const TextFeatures& text,
                               const std::vector<BoxPrompt>& boxes, const SegmentOptions& options,
                               PromptTimings& timings) const override {
    // Text-only prompting is one padding box (0,0,0,0) labelled -10.
    const std::int64_t n = std::max<std::int64_t>(1, static_cast<std::int64_t>(boxes.size()));
    std::vector<float> coords(static_cast<size_t>(n) * 4, 0.f);
    std::vector<std::int64_t> labels(static_cast<size_t>(n), -10);
    for (size_t i = 0; i < boxes.size(); ++i) {
      const auto c = normalized_cxcywh(boxes[i].box, image.width, image.height);
      std::copy(c.begin(), c.end(), coords.begin() + static_cast<std::ptrdiff_t>(i * 4));
      labels[i] = boxes[i].positive ? 1 : 0;
    }
    auto coords_v = rt::view(coords.data(), coords.size(), {1, n, 4});
    IntInput label_input(decoder_.input("input_boxes_labels")->type, labels);
    auto labels_v = label_input.view({1, n});

    std::map<std::string, const OrtValue*> feeds = {{"input_boxes", coords_v}, {"input_boxes_labels", labels_v}};
    for (const auto& [name, value] : image.features) feeds[name] = value;
    for (const auto& [name, value] : text.values) feeds[name] = value;
    const auto t0 = Clock::now();
    auto outputs = decoder_.run(feeds);
    timings.decode_ms = ms_since(t0);
    const auto t1 = Clock::now();
    auto instances = instances_from_outputs(outputs, image.width, image.height, options, nullptr);
    timings.postprocess_ms = ms_since(t1);
    return instances;
  }

 private:
  rt::Session vision_, text_, decoder_;
  int width_ = 1008, height_ = 1008;
};

}  // namespace

std::unique_ptr<Backend> make_usls_backend(const std::filesystem::path& dir, const rt::SessionConfig& encoder,
                                           const rt::SessionConfig& config) {
  return std::make_unique<UslsBackend>(dir, encoder, config);
}

}  // namespace sam3::detail
