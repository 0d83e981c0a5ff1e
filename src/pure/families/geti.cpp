// Intel geti-instant-learn's SAM3 export ("family D", sam3-facts.md): usls's tensors under
// other names, the image rounded to 0..255 before normalizing, ids padded with 0, and a
// geometry encoder that takes boxes and points and runs for every prompt.
#include "pure/families/geti.h"

#include "pure/contract.h"
#include "pure/families/policies.h"

namespace sam3::pure {

GetiRules::GetiRules(PartSpecs parts) : FamilyRules(std::move(parts)) {
  policy::input_size(image().input("pixel_values")->shape, width_, height_);
  half_ = image().input("pixel_values")->type == static_cast<int>(DType::kFloat16);
}

std::vector<std::string> GetiRules::quirks() const {
  std::vector<std::string> q = {"image rounded to 0..255, then normalized outside the graph ((x/255 - 0.5)/0.5)",
                                "Hugging Face attention mask, ids padded with 0",
                                "geometry-encoder.onnx runs for every prompt (boxes and points, a dummy of each labelled -10)",
                                "raw decoder heads: scores and thresholds in sam3; mask probabilities resized, then cut"};
  if (half_) q.push_back("float16 inputs and outputs, converted at the edges");
  return q;
}

std::vector<Tensor> GetiRules::image_inputs(std::vector<float>& planes) const {
  return {policy::image_tensor("pixel_values", image().input("pixel_values")->type, planes, width_, height_, policy::Pixels::kRoundedSam3)};
}

std::vector<Tensor> GetiRules::text_inputs(const TokenizedText& tokens) const { return policy::hf_text_inputs(*part("text"), tokens, 0); }

// Always a box slot and a point slot: a dummy labelled -10 (ignored) for what is not given.
std::vector<Tensor> GetiRules::geometry_inputs(const std::vector<BoxPrompt>& boxes, int width, int height) const {
  const auto& geometry = *part("geometry");
  const auto r = policy::box_rows(boxes, width, height, 1, -10);
  return {float_tensor("input_boxes", geometry.input("input_boxes")->type, {1, r.n, 4}, r.coords),
          int_tensor("input_boxes_labels", geometry.input("input_boxes_labels")->type, {1, r.n}, r.labels),
          float_tensor("input_points", geometry.input("input_points")->type, {1, 1, 2}, {0.f, 0.f}),
          int_tensor("input_points_labels", geometry.input("input_points_labels")->type, {1, 1}, {-10})};
}

std::map<std::string, std::string> GetiRules::geometry_image_feeds() const {
  return {{"fpn_feat_2", "fpn_feat_2"}, {"fpn_pos_2", "fpn_pos_2"}};
}

std::vector<Tensor> GetiRules::prompt_inputs(const TensorViews& text, const TensorViews* geometry) const {
  return policy::text_then_geometry(decoder(), text, geometry);
}

std::vector<Instance> GetiRules::instances(const TensorViews& outputs, int width, int height, const SegmentOptions& options) const {
  OutputFormat format;
  format.resize_probabilities = true;
  return policy::decoded_instances(outputs, width, height, options, format);
}

void GetiRules::check(const PartSpecs& parts) {
  const auto& image = parts.at("image");
  const auto& text = parts.at("text");
  const auto& geometry = parts.at("geometry");
  const auto& decoder = parts.at("decoder");
  require_inputs(image, {{"pixel_values", kFloatOrHalf, {4}}});
  require_outputs(image, {{"fpn_feat_0", kFloatOrHalf, {4}},
                          {"fpn_feat_1", kFloatOrHalf, {4}},
                          {"fpn_feat_2", kFloatOrHalf, {4}},
                          {"fpn_pos_2", kFloatOrHalf, {4}}});
  require_inputs(text, {{"input_ids", kIntTypes, {2}}, {"attention_mask", kIntTypes, {2}}});
  require_outputs(text, {{"text_features", kFloatOrHalf, {3}}, {"text_mask", kBool, {2}}});
  require_inputs(geometry, {{"fpn_feat_2", kFloatOrHalf, {4}},
                            {"fpn_pos_2", kFloatOrHalf, {4}},
                            {"input_boxes", kFloatOrHalf, {3}},
                            {"input_boxes_labels", kIntTypes, {2}},
                            {"input_points", kFloatOrHalf, {3}},
                            {"input_points_labels", kIntTypes, {2}}});
  require_outputs(geometry, {{"geometry_features", kFloatOrHalf, {3}}, {"geometry_mask", kBool, {2}}});
  require_inputs(decoder, {{"prompt_features", kFloatOrHalf, {3}}, {"prompt_mask", kBool, {2}}});
  require_outputs(decoder, {{"pred_masks", kFloatOrHalf, {4}},
                            {"pred_boxes", kFloatOrHalf, {3}},
                            {"pred_logits", kFloatOrHalf, {2}},
                            {"presence_logits", kFloatOrHalf, {2}}});
}

Generation Generation::geti(const PartSpec& image, const PartSpec& text, const PartSpec& decoder, const PartSpec& geometry) {
  PartSpecs parts = {{"image", image}, {"text", text}, {"decoder", decoder}, {"geometry", geometry}};
  GetiRules::check(parts);
  // Intel's distilled EfficientSAM3 has these files too, with two more decoder inputs: it is
  // its own family (efficientsam3.cpp), tried before this one.
  return Generation("geti", std::make_shared<GetiRules>(std::move(parts)));
}

}  // namespace sam3::pure
