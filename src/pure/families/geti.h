// The geti-instant-learn family's rules, which EfficientSAM3 (Intel's distilled students in
// the same five files) builds on.
#pragma once

#include "pure/generation.h"

namespace sam3::pure {

class GetiRules : public FamilyRules {
 public:
  explicit GetiRules(PartSpecs parts);
  // Throws kModelMismatch when the parts do not have the family's tensors.
  static void check(const PartSpecs& parts);

  std::string name() const override { return "geti-instant-learn"; }
  std::vector<std::string> quirks() const override;
  std::vector<Tensor> image_inputs(std::vector<float>& planes) const override;
  std::vector<Tensor> text_inputs(const TokenizedText& tokens) const override;
  // Everything reaches the decoder through prompt_inputs.
  std::map<std::string, std::string> text_feeds() const override { return {}; }
  std::vector<Tensor> geometry_inputs(const std::vector<BoxPrompt>& boxes, int width, int height) const override;
  std::map<std::string, std::string> geometry_image_feeds() const override;
  std::vector<Tensor> prompt_inputs(const TensorViews& text, const TensorViews* geometry) const override;
  // Its processor: sigmoid, the probabilities resized bilinearly, cut at mask_threshold.
  std::vector<Instance> instances(const TensorViews& outputs, int width, int height, const SegmentOptions& options) const override;

 protected:
  bool half_ = false;
};

}  // namespace sam3::pure
