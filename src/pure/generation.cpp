#include "pure/generation.h"

#include "pure/families/policies.h"
#include "sam3/error.h"

namespace sam3::pure {

bool FamilyRules::keeps_image_output(const std::string& name) const {
  const PartSpec* geometry = part("geometry");
  return decoder().input(name) || (geometry && geometry->input(name));
}

std::map<std::string, std::string> FamilyRules::text_feeds() const {
  std::map<std::string, std::string> out;
  const PartSpec* text = part("text");
  if (!text) return out;
  for (const auto& input : decoder().inputs) {
    if (text->output(input.name)) out[input.name] = input.name;
  }
  return out;
}

std::vector<std::string> FamilyRules::image_feeds() const {
  std::vector<std::string> out;
  for (const auto& input : decoder().inputs) {
    if (image().output(input.name) && keeps_image_output(input.name)) out.push_back(input.name);
  }
  return out;
}

std::vector<Instance> FamilyRules::instances(const TensorViews& outputs, int width, int height, const SegmentOptions& options) const {
  return policy::decoded_instances(outputs, width, height, options, {});
}

std::vector<Tensor> Generation::image_inputs(std::vector<float>& planes) const {
  if (planes.size() != static_cast<size_t>(3) * input_width() * input_height()) {
    throw Error(ErrorCode::kInvalidArgument, "the prepared image was made for another model input size");
  }
  return rules_->image_inputs(planes);
}

void Generation::suppress_across_prompts(std::vector<std::vector<Instance>*>& per_prompt) const {
  std::vector<const Instance*> all;
  for (const auto* list : per_prompt) {
    for (const auto& inst : *list) all.push_back(&inst);
  }
  const auto dropped = rules_->suppressed_across_prompts(all);
  if (dropped.empty()) return;
  size_t k = 0;
  for (auto* list : per_prompt) {
    std::vector<Instance> kept;
    for (auto& inst : *list) {
      if (!dropped[k++]) kept.push_back(std::move(inst));
    }
    *list = std::move(kept);
  }
}

}  // namespace sam3::pure
