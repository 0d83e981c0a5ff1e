// samexporter (vietanhdev/samexporter, rusen sam3-browser-int8) and what grew from it: raw
// heads, several box slots in SAM3's sequence-first layout, a float image, and osam's decoder
// (no size inputs, normalized boxes, probability masks). sam3-facts.md "Layout samexporter".
#include <algorithm>

#include "predictor/preprocess.h"
#include "pure/contract.h"
#include "pure/families/policies.h"
#include "pure/generation.h"
#include "sam3/error.h"

namespace sam3::pure {
namespace {

class Samexporter final : public FamilyRules {
 public:
  explicit Samexporter(PartSpecs parts) : FamilyRules(std::move(parts)) {
    raw_heads_ = decoder().output("pred_logits") != nullptr;
    // samexporter: boolean masks at the size given; osam's newer decoder: no size inputs,
    // probabilities at the model's resolution and normalized boxes.
    format_.normalized_boxes = !raw_heads_ && !decoder().input("original_height") && !decoder().input("original_width");
    const auto& shape = image().input("image")->shape;
    image_rank_ = static_cast<int>(shape.size());
    float_image_ = image().input("image")->type == static_cast<int>(DType::kFloat);
    width_ = height_ = square_side(shape, 1008);
    format_.export_sides = {1008};
    if (width_ != 1008) format_.export_sides.push_back(width_);
    // Box slots: [1,K,4] batch first, or SAM3's sequence-first [K,1,4] (labels [K,1]); the
    // flattened data is the same, only the shapes differ.
    const auto& slots = decoder().input("box_coords")->shape;
    sequence_first_ = slots.size() == 3 && slots[1] == 1 && slots[0] != 1;
    const std::int64_t k = sequence_first_ ? slots[0] : (slots.size() == 3 ? slots[1] : 0);
    box_slots_ = k > 0 ? k : 0;
  }

  std::string name() const override {
    if (raw_heads_) return "samexporter (raw heads)";
    return format_.normalized_boxes ? "osam" : "samexporter";
  }
  std::vector<std::string> quirks() const override {
    std::vector<std::string> q = {
        float_image_ ? "float image normalized by sam3 (x/127.5 - 1)" : "image normalized inside the graph (uint8 input)",
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
    q.push_back(std::to_string(slots_or_one()) + " exemplar box slot(s) per prompt");
    return q;
  }
  std::int64_t box_limit() const override { return slots_or_one(); }

  std::vector<Tensor> image_inputs(std::vector<float>& planes) const override {
    if (float_image_) {
      return {
          policy::image_tensor("image", static_cast<int>(DType::kFloat), planes, width_, height_, policy::Pixels::kSam3, image_rank_ == 4)};
    }
    std::vector<std::int64_t> shape = {3, height_, width_};
    if (image_rank_ == 4) shape.insert(shape.begin(), 1);
    return {uint8_tensor("image", shape, predictor::to_uint8(planes))};
  }
  bool keeps_image_output(const std::string&) const override { return true; }
  std::vector<Tensor> text_inputs(const TokenizedText& tokens) const override {
    return {policy::sam3_ids("tokens", part("text")->input("tokens")->type, tokens)};
  }
  // The decoder's names for the language encoder's outputs.
  std::map<std::string, std::string> text_feeds() const override {
    const std::map<std::string, std::string> renamed = {
        {"language_mask", "text_attention_mask"}, {"language_features", "text_memory"}, {"language_embeds", "text_embeds"}};
    std::map<std::string, std::string> out;
    for (const auto& input : decoder().inputs) {
      auto it = renamed.find(input.name);
      const std::string source = it != renamed.end() ? it->second : input.name;
      if (part("text")->output(source)) out[input.name] = source;
    }
    return out;
  }

  std::vector<Tensor> decoder_inputs(const std::vector<BoxPrompt>& boxes, int width, int height) const override {
    const std::int64_t n = box_slots_ > 0 ? box_slots_ : std::max<std::int64_t>(1, static_cast<std::int64_t>(boxes.size()));
    if (static_cast<std::int64_t>(boxes.size()) > n) {
      throw Error(ErrorCode::kInvalidArgument, "this samexporter model takes at most " + std::to_string(n) + " exemplar box" +
                                                   (n == 1 ? "" : "es") + " per prompt, got " + std::to_string(boxes.size()) +
                                                   "; split the boxes over several prompts or use a usls-layout model");
    }
    // Unused slots: coords 0, label 1, masked out (box_masks True).
    const auto r = policy::box_rows(boxes, width, height, n, 1);
    std::vector<Tensor> out = {
        float_tensor("box_coords", static_cast<int>(DType::kFloat),
                     sequence_first_ ? std::vector<std::int64_t>{n, 1, 4} : std::vector<std::int64_t>{1, n, 4}, r.coords),
        int_tensor("box_labels", decoder().input("box_labels")->type,
                   sequence_first_ ? std::vector<std::int64_t>{n, 1} : std::vector<std::int64_t>{1, n}, r.labels)};
    if (decoder().input("box_masks")) out.push_back(bool_tensor("box_masks", {1, n}, r.padding));
    for (auto [name, value] : {std::pair{"original_height", height}, std::pair{"original_width", width}}) {
      const auto* spec = decoder().input(name);
      if (!spec) continue;
      out.push_back(
          int_tensor(name, spec->type, spec->shape.empty() ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{1}, {value}));
    }
    return out;
  }

  std::vector<Instance> instances(const TensorViews& outputs, int width, int height, const SegmentOptions& options) const override {
    return policy::decoded_instances(outputs, width, height, options, format_);
  }

 private:
  std::int64_t slots_or_one() const { return box_slots_ > 0 ? box_slots_ : 1; }

  int image_rank_ = 3;        // [3,S,S] or [1,3,S,S]
  bool float_image_ = false;  // float input normalized by sam3
  bool sequence_first_ = false;
  bool raw_heads_ = false;
  std::int64_t box_slots_ = 1;
  OutputFormat format_;
};

}  // namespace

Generation Generation::samexporter(const PartSpec& image, const PartSpec& text, const PartSpec& decoder) {
  // uint8 (normalized in the graph), or float [1,3,S,S] normalized by the caller.
  require_inputs(image, {{"image", {static_cast<int>(DType::kUint8), static_cast<int>(DType::kFloat)}, {3, 4}}});
  require_outputs(image, {{"backbone_fpn_0", kFloat, {4}}, {"vision_pos_enc_2", kFloat, {4}}});
  require_inputs(text, {{"tokens", kIntTypes, {2}}});
  require_outputs(text, {{"text_attention_mask", kBool, {2}}, {"text_memory", kFloat, {3}}});
  require_inputs(decoder, {{"box_coords", kFloat, {3}}, {"box_labels", kIntTypes, {2}}});
  if (decoder.output("pred_logits")) {
    require_outputs(
        decoder,
        {{"pred_masks", kFloat, {4}}, {"pred_boxes", kFloat, {3}}, {"pred_logits", kFloat, {2}}, {"presence_logits", kFloat, {2}}});
  } else {
    const bool normalized = !decoder.input("original_height") && !decoder.input("original_width");
    require_outputs(decoder, {{"boxes", kFloat, {2}}, {"scores", kFloat, {1}}, {"masks", normalized ? kFloat : kBool, {3, 4}}});
  }
  return Generation("samexporter", std::make_shared<Samexporter>(PartSpecs{{"image", image}, {"text", text}, {"decoder", decoder}}));
}

}  // namespace sam3::pure
