// SAM 3.1 as ailia-models publishes it (sam3-facts.md "Two more generations"; ailia-models
// image_segmentation/segment-anything-3.1): one image encoder whose pass feeds the detector
// and the tracker (fpn0..2, pos0..2, prop_fpn0..2, prop_pos2), and a grounding graph with the
// text encoder inside: CLIP ids in, boxes sequence-first (an empty list allowed), pred_boxes
// as cx,cy,w,h, presence as presence_logit_dec. The image is rounded to 0..255, divided by 255
// and normalized in float16, as ailia's driver does.
#include "pure/contract.h"
#include "pure/families/policies.h"
#include "pure/generation.h"
#include "sam3/error.h"

namespace sam3::pure {
namespace {

class Sam31Ailia final : public FamilyRules {
 public:
  explicit Sam31Ailia(PartSpecs parts) : FamilyRules(std::move(parts)) {
    policy::input_size(image().input("image")->shape, width_, height_);
    format_.presence = "presence_logit_dec";
    format_.cxcywh_boxes = true;
  }

  std::string name() const override { return "sam3.1 (ailia)"; }
  std::vector<std::string> quirks() const override {
    return {"image rounded to 0..255, x/255 and (x - 0.5)/0.5 in float16 (ailia's driver)",
            "text encoder inside the grounding graph: SAM3's ids (zero padding) in text_tokens",
            "boxes sequence-first (box_coords [N,1,4], box_mask [1,N]); a text-only prompt sends none",
            "pred_boxes as cx,cy,w,h; presence from presence_logit_dec",
            "the tracker's outputs of the image encoder (prop_*) are not kept: images only"};
  }

  std::vector<Tensor> image_inputs(std::vector<float>& planes) const override {
    return {policy::image_tensor("image", image().input("image")->type, planes, width_, height_, policy::Pixels::kHalfSam3)};
  }
  std::vector<Tensor> text_inputs(const TokenizedText& tokens) const override {
    return {policy::sam3_ids("text_tokens", decoder().input("text_tokens")->type, tokens)};
  }
  std::map<std::string, std::string> text_feeds() const override { return {{"text_tokens", "text_tokens"}}; }

  std::vector<Tensor> decoder_inputs(const std::vector<BoxPrompt>& boxes, int width, int height) const override {
    const auto r = policy::box_rows(boxes, width, height, 0, 0);
    return {float_tensor("box_coords", decoder().input("box_coords")->type, {r.n, 1, 4}, r.coords),
            int_tensor("box_labels", decoder().input("box_labels")->type, {r.n, 1}, r.labels),
            bool_tensor("box_mask", {1, r.n}, r.padding)};
  }

  std::vector<Instance> instances(const TensorViews& outputs, int width, int height, const SegmentOptions& options) const override {
    return policy::decoded_instances(outputs, width, height, options, format_);
  }

 private:
  OutputFormat format_;
};

}  // namespace

Generation build_sam31_ailia(const char* id, const PartSpecs& parts) {
  const auto& image = parts.at("image");
  const auto& decoder = parts.at("decoder");
  require_inputs(image, {{"image", kFloat, {4}}});
  require_outputs(image, {{"fpn0", kFloat, {4}}, {"fpn1", kFloat, {4}}, {"fpn2", kFloat, {4}}, {"pos2", kFloat, {4}}});
  require_inputs(decoder, {{"fpn0", kFloat, {4}},
                           {"fpn1", kFloat, {4}},
                           {"fpn2", kFloat, {4}},
                           {"pos2", kFloat, {4}},
                           {"text_tokens", kIntTypes, {2}},
                           {"box_coords", kFloat, {3}},
                           {"box_labels", kIntTypes, {2}},
                           {"box_mask", kBool, {2}}});
  require_outputs(
      decoder,
      {{"pred_masks", kFloat, {4}}, {"pred_boxes", kFloat, {3}}, {"pred_logits", kFloat, {2, 3}}, {"presence_logit_dec", kFloat, {1, 2}}});
  return Generation(id, std::make_shared<Sam31Ailia>(parts));
}

}  // namespace sam3::pure
