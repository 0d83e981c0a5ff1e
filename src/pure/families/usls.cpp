// usls (RectLabel sam3_v2, Luminia; sam3-facts.md "Layout usls"): any export size, float16
// release files, and the first generation with a separate geometry encoder.
#include <algorithm>

#include "pure/contract.h"
#include "pure/families/policies.h"
#include "pure/generation.h"

namespace sam3::pure {
namespace {

const char* const kFeatures[] = {"fpn_feat_0", "fpn_feat_1", "fpn_feat_2", "fpn_pos_2"};

class Usls final : public FamilyRules {
 public:
  explicit Usls(PartSpecs parts) : FamilyRules(std::move(parts)) {
    policy::input_size(image().input("images")->shape, width_, height_);
    half_ = image().input("images")->type == static_cast<int>(DType::kFloat16) ||
            decoder().output("pred_masks")->type == static_cast<int>(DType::kFloat16);
  }

  std::string name() const override { return part("geometry") ? "usls v1 (separate geometry encoder)" : "usls"; }
  std::vector<std::string> quirks() const override {
    std::vector<std::string> q = {"image normalized outside the graph (x/127.5 - 1)",
                                  "Hugging Face attention mask (\"!\" is a real token), end-token padding",
                                  "raw decoder heads: scores, mask upsampling and thresholds in sam3"};
    if (width_ != height_) q.push_back("not square: the image is stretched to " + std::to_string(width_) + "x" + std::to_string(height_));
    if (half_) q.push_back("float16 inputs and outputs, converted at the edges");
    if (part("geometry")) q.push_back("exemplar boxes encoded by geometry-encoder.onnx, joined to the text features");
    return q;
  }

  std::vector<Tensor> image_inputs(std::vector<float>& planes) const override {
    return {policy::image_tensor("images", image().input("images")->type, planes, width_, height_, policy::Pixels::kSam3)};
  }
  // The first generation also gives fpn_feat_3 and fpn_pos_0/1/3, which nothing takes.
  bool keeps_image_output(const std::string& name) const override {
    return std::find(std::begin(kFeatures), std::end(kFeatures), name) != std::end(kFeatures);
  }
  // As Hugging Face's CLIP tokenizer gives them (what the usls exports were traced with).
  std::vector<Tensor> text_inputs(const TokenizedText& tokens) const override {
    return policy::hf_text_inputs(*part("text"), tokens, kEndOfText);
  }

  std::vector<Tensor> decoder_inputs(const std::vector<BoxPrompt>& boxes, int width, int height) const override {
    if (part("geometry")) return {};  // the boxes go to the geometry encoder, the prompt to prompt_inputs
    // Text-only prompting is one padding box (0,0,0,0) labelled -10.
    const auto r = policy::box_rows(boxes, width, height, 1, -10);
    return {float_tensor("input_boxes", decoder().input("input_boxes")->type, {1, r.n, 4}, r.coords),
            int_tensor("input_boxes_labels", decoder().input("input_boxes_labels")->type, {1, r.n}, r.labels)};
  }
  // usls v1: text-only prompts give the decoder the text alone; with boxes the geometry
  // encoder's features are appended.
  std::vector<Tensor> geometry_inputs(const std::vector<BoxPrompt>& boxes, int width, int height) const override {
    if (!part("geometry") || boxes.empty()) return {};
    const auto r = policy::box_rows(boxes, width, height, 0, 0);
    const auto& geometry = *part("geometry");
    return {float_tensor("input_boxes", geometry.input("input_boxes")->type, {1, r.n, 4}, r.coords),
            int_tensor("input_boxes_labels", geometry.input("input_boxes_labels")->type, {1, r.n}, r.labels)};
  }
  std::map<std::string, std::string> geometry_image_feeds() const override {
    if (!part("geometry")) return {};
    return {{"fpn_feat", "fpn_feat_2"}, {"fpn_pos", "fpn_pos_2"}};
  }
  std::vector<Tensor> prompt_inputs(const TensorViews& text, const TensorViews* geometry) const override {
    if (!part("geometry")) return {};
    return policy::text_then_geometry(decoder(), text, geometry);
  }

 private:
  bool half_ = false;
};

}  // namespace

Generation Generation::usls(const PartSpec& image, const PartSpec& text, const PartSpec& decoder, const PartSpec* geometry) {
  require_inputs(image, {{"images", kFloatOrHalf, {4}}});
  std::vector<Expected> features;
  for (const char* name : kFeatures) features.push_back({name, kFloatOrHalf, {4}});
  require_outputs(image, features);
  require_inputs(text, {{"input_ids", kIntTypes, {2}}});
  require_outputs(text, {{"text_features", kFloatOrHalf, {3}}, {"text_mask", kBool, {2}}});
  PartSpecs parts = {{"image", image}, {"text", text}, {"decoder", decoder}};
  if (geometry) {
    // The first generation: boxes go through their own encoder, and the decoder takes the
    // text and geometry features as one prompt sequence.
    require_inputs(*geometry, {{"input_boxes", kFloatOrHalf, {3}},
                               {"input_boxes_labels", kIntTypes, {2}},
                               {"fpn_feat", kFloatOrHalf, {4}},
                               {"fpn_pos", kFloatOrHalf, {4}}});
    require_outputs(*geometry, {{"geometry_features", kFloatOrHalf, {3}}, {"geometry_mask", kBool, {2}}});
    require_inputs(decoder, {{"prompt_features", kFloatOrHalf, {3}}, {"prompt_mask", kBool, {2}}});
    parts["geometry"] = *geometry;
  } else {
    require_inputs(decoder, {{"input_boxes", kFloatOrHalf, {3}}, {"input_boxes_labels", kIntTypes, {2}}});
  }
  require_outputs(decoder, {{"pred_masks", kFloatOrHalf, {4}},
                            {"pred_boxes", kFloatOrHalf, {3}},
                            {"pred_logits", kFloatOrHalf, {2}},
                            {"presence_logits", kFloatOrHalf, {2}}});
  return Generation("usls", std::make_shared<Usls>(std::move(parts)));
}

}  // namespace sam3::pure
