// EfficientSAM3 as Intel exports it (sam3-facts.md "Two more generations"; hub
// rajeshgangireddy/EfficientSAM3_OpenVINO, onnx/): geti-instant-learn's five files with two
// more decoder inputs (the text features alone, used for scoring) and no presence head (its
// presence_logits is a constant 0). Instances follow the PyTorch EfficientSAM3's
// post-processing (open-edge-platform/geti-instant-learn): scores are sigmoid(logit) alone,
// mask IoM suppression at 0.3 within a prompt, then mask IoM 0.5 and box IoM 0.5 across the
// prompts of an image (Model::suppress_across_prompts).
#include "pure/contract.h"
#include "pure/families/geti.h"
#include "pure/families/policies.h"

namespace sam3::pure {
namespace {

constexpr float kWithinPromptMaskIom = 0.3f;
constexpr float kAcrossPromptsMaskIom = 0.5f, kAcrossPromptsBoxIom = 0.5f;

class EfficientSam3 final : public GetiRules {
 public:
  explicit EfficientSam3(PartSpecs parts) : GetiRules(std::move(parts)) {}

  std::string name() const override { return "EfficientSAM3"; }
  std::vector<std::string> quirks() const override {
    std::vector<std::string> q = {
        "geti-instant-learn's files: image rounded to 0..255 then normalized, ids padded with 0, "
        "geometry-encoder.onnx for every prompt",
        "the decoder also takes the text features alone (text_features, text_mask)",
        "no presence head: scores are sigmoid(logit) alone; mask probabilities resized, then cut",
        "mask IoM suppression at 0.3 within a prompt; mask and box IoM at 0.5 across the prompts "
        "of an image (the PyTorch EfficientSAM3's post-processing)",
        "the reference keeps scores > 0.4; sam3 keeps the front's threshold (0.5 unless set)"};
    if (half_) q.push_back("float16 inputs and outputs, converted at the edges");
    return q;
  }
  // The prompt sequence through prompt_inputs, and the text features alone by their names.
  std::map<std::string, std::string> text_feeds() const override { return FamilyRules::text_feeds(); }

  std::vector<Instance> instances(const TensorViews& outputs, int width, int height, const SegmentOptions& options) const override {
    OutputFormat format;
    format.presence.clear();
    format.resize_probabilities = true;  // as geti's processor
    auto found = policy::decoded_instances(outputs, width, height, options, format);
    policy::suppress_by_iom(found, kWithinPromptMaskIom, 0.f);
    return found;
  }
  // The reference's default post-processor: mask IoM NMS over everything, then box IoM NMS
  // over what is left (two passes, as its pipeline runs them).
  std::vector<bool> suppressed_across_prompts(const std::vector<const Instance*>& all) const override {
    auto dropped = policy::iom_suppressed(all, kAcrossPromptsMaskIom, 0.f);
    std::vector<const Instance*> left;
    std::vector<size_t> index;
    for (size_t i = 0; i < all.size(); ++i) {
      if (!dropped[i]) left.push_back(all[i]), index.push_back(i);
    }
    const auto by_box = policy::iom_suppressed(left, 0.f, kAcrossPromptsBoxIom);
    for (size_t k = 0; k < left.size(); ++k) dropped[index[k]] = dropped[index[k]] || by_box[k];
    return dropped;
  }
};

}  // namespace

Generation build_efficientsam3(const char* id, const PartSpecs& parts) {
  GetiRules::check(parts);
  require_inputs(parts.at("decoder"), {{"text_features", kFloatOrHalf, {3}}, {"text_mask", kBool, {2}}});
  return Generation(id, std::make_shared<EfficientSam3>(parts));
}

}  // namespace sam3::pure
