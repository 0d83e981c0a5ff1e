// Layout "samexporter" (rusen sam3-browser-int8): normalization inside the graph, uint8 image
// without batch, a fixed number of box slots, thresholded and upsampled results in the graph
// (or raw heads in newer exports).
#include "core/timer.h"
#include "model/backend.h"
#include "model/contract.h"
#include "model/tensors.h"
#include "predictor/preprocess.h"
#include "sam3/error.h"
#include "sam3/log.h"

namespace sam3::detail {
namespace {

class SamexporterBackend final : public Backend {
 public:
  SamexporterBackend(const ModelFiles& files, const rt::SessionConfig& encoder, const rt::SessionConfig& config)
      : image_(files.parts.at("image"), encoder), language_(files.parts.at("text"), config),
        decoder_(files.parts.at("decoder"), config) {
    // uint8 (normalized in the graph), or float [1,3,S,S] normalized by the caller.
    require_inputs(image_, {{"image", {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT}, {3, 4}}});
    require_outputs(image_, {{"backbone_fpn_0", kFloat, {4}}, {"vision_pos_enc_2", kFloat, {4}}});
    require_inputs(language_, {{"tokens", kIntTypes, {2}}});
    require_outputs(language_, {{"text_attention_mask", kBool, {2}}, {"text_memory", kFloat, {3}}});
    require_inputs(decoder_, {{"box_coords", kFloat, {3}}, {"box_labels", kIntTypes, {2}}});
    const bool raw = decoder_.has_output("pred_logits");
    if (raw) {
      require_outputs(decoder_, {{"pred_masks", kFloat, {4}}, {"pred_boxes", kFloat, {3}},
                                 {"pred_logits", kFloat, {2}}, {"presence_logits", kFloat, {2}}});
    } else {
      // samexporter: boolean masks at the size given; osam's newer decoder: no size inputs,
      // probabilities at the model's resolution and normalized boxes.
      format_.normalized_boxes = !decoder_.input("original_height") && !decoder_.input("original_width");
      require_outputs(decoder_, {{"boxes", kFloat, {2}}, {"scores", kFloat, {1}},
                                 {"masks", format_.normalized_boxes ? kFloat : kBool, {3, 4}}});
    }
    const auto& shape = image_.input("image")->shape;
    image_rank_ = static_cast<int>(shape.size());
    float_image_ = image_.input("image")->type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
    size_ = square_side(shape, 1008);
    format_.export_sides = {1008};
    if (size_ != 1008) format_.export_sides.push_back(size_);
    // Box slots: [1,K,4] batch first, or SAM3's sequence-first [K,1,4] (labels [K,1]); the
    // flattened data is the same, only the shapes differ.
    const auto& slots = decoder_.input("box_coords")->shape;
    sequence_first_ = slots.size() == 3 && slots[1] == 1 && slots[0] != 1;
    const std::int64_t k = sequence_first_ ? slots[0] : (slots.size() == 3 ? slots[1] : 0);
    box_slots_ = k > 0 ? k : 0;
  }

  Layout layout() const override { return Layout::kSamexporter; }
  std::string generation() const override {
    if (decoder_.has_output("pred_logits")) return "samexporter (raw heads)";
    return format_.normalized_boxes ? "osam" : "samexporter";
  }
  std::vector<std::string> quirks() const override {
    std::vector<std::string> q = {float_image_ ? "float image normalized by sam3 (x/127.5 - 1)"
                                               : "image normalized inside the graph (uint8 input)",
                                  "text mask computed by the graph (tokens != 0)"};
    if (sequence_first_) q.push_back("sequence-first box inputs (box_coords [K,1,4])");
    if (!decoder_.has_output("pred_logits")) {
      q.push_back("score threshold 0.5 inside the graph (lower thresholds have no effect)");
      if (format_.normalized_boxes) {
        q.push_back("no image size inputs: normalized boxes, probability masks resized and cut at mask_threshold");
      } else {
        q.push_back("boxes checked against their masks (a box scale frozen at export): rescaled or replaced");
      }
    }
    q.push_back(std::to_string(box_slots_ > 0 ? box_slots_ : 1) + " exemplar box slot(s) per prompt");
    return q;
  }
  int input_width() const override { return size_; }
  int input_height() const override { return size_; }
  std::vector<const rt::Session*> sessions() const override { return {&image_, &language_, &decoder_}; }

  std::map<std::string, Ort::Value> encode_image(std::vector<float>& planes) const override {
    std::vector<std::int64_t> shape = {3, size_, size_};
    if (image_rank_ == 4) shape.insert(shape.begin(), 1);
    if (float_image_) {
      normalize_sam3(planes);
      auto input = rt::view(planes.data(), planes.size(), shape);
      return image_.run({{"image", input}});
    }
    std::vector<std::uint8_t> pixels = to_uint8(planes);
    auto input = rt::view(pixels.data(), pixels.size(), shape);
    return image_.run({{"image", input}});
  }

  TextFeatures encode_text(const TokenizedText& tokens) const override {
    IntInput ids(language_.input("tokens")->type, {tokens.ids.begin(), tokens.ids.end()});
    auto ids_v = ids.view({1, kContextLength});
    return {language_.run({{"tokens", ids_v}})};
  }

  std::vector<Instance> decode(const EmbeddingData& image, const TextFeatures& text,
                               const std::vector<BoxPrompt>& boxes, const SegmentOptions& options,
                               PromptTimings& timings) const override {
    const std::int64_t n = box_slots_ > 0 ? box_slots_ : std::max<std::int64_t>(1, static_cast<std::int64_t>(boxes.size()));
    if (static_cast<std::int64_t>(boxes.size()) > n) {
      throw Error(ErrorCode::kInvalidArgument,
                  "this samexporter model takes at most " + std::to_string(n) + " exemplar box" +
                      (n == 1 ? "" : "es") + " per prompt, got " + std::to_string(boxes.size()) +
                      "; split the boxes over several prompts or use a usls-layout model");
    }
    // Unused slots: coords 0, label 1, masked out (box_masks True).
    std::vector<float> coords(static_cast<size_t>(n) * 4, 0.f);
    std::vector<std::int64_t> labels(static_cast<size_t>(n), 1);
    std::vector<std::uint8_t> masked(static_cast<size_t>(n), 1);
    for (size_t i = 0; i < boxes.size(); ++i) {
      const auto c = normalized_cxcywh(boxes[i].box, image.width, image.height);
      std::copy(c.begin(), c.end(), coords.begin() + static_cast<std::ptrdiff_t>(i * 4));
      labels[i] = boxes[i].positive ? 1 : 0;
      masked[i] = 0;
    }
    auto coords_v = rt::view(coords.data(), coords.size(), sequence_first_ ? std::vector<std::int64_t>{n, 1, 4}
                                                                            : std::vector<std::int64_t>{1, n, 4});
    IntInput label_input(decoder_.input("box_labels")->type, labels);
    auto labels_v = label_input.view(sequence_first_ ? std::vector<std::int64_t>{n, 1} : std::vector<std::int64_t>{1, n});
    auto masks_v = rt::view_bool(masked.data(), masked.size(), {1, n});

    std::map<std::string, const OrtValue*> feeds = {
        {"box_coords", coords_v}, {"box_labels", labels_v}, {"box_masks", masks_v}};
    std::vector<Ort::Value> owned;  // size scalars in the session's integer type
    std::vector<std::unique_ptr<IntInput>> size_inputs;
    for (auto [name, value] : {std::pair{"original_height", image.height}, std::pair{"original_width", image.width}}) {
      const auto* info = decoder_.input(name);
      if (!info) continue;
      size_inputs.push_back(std::make_unique<IntInput>(info->type, std::vector<std::int64_t>{value}));
      owned.push_back(size_inputs.back()->view(info->shape.empty() ? std::vector<std::int64_t>{}
                                                                   : std::vector<std::int64_t>{1}));
      feeds[name] = owned.back();
    }
    for (const auto& [name, value] : image.features) feeds[name] = value;
    for (const auto& [name, value] : text.values) feeds[name] = value;
    // The decoder's names for the language encoder's outputs.
    feeds["language_mask"] = text.values.at("text_attention_mask");
    feeds["language_features"] = text.values.at("text_memory");
    if (auto it = text.values.find("text_embeds"); it != text.values.end()) feeds["language_embeds"] = it->second;

    const auto t0 = Clock::now();
    auto outputs = decoder_.run(feeds);
    timings.decode_ms = ms_since(t0);
    const auto t1 = Clock::now();
    int corrected = 0;
    auto instances = instances_from_outputs(outputs, image.width, image.height, options, &corrected, format_);
    if (corrected > 0) {
      log(LogLevel::kInfo, std::to_string(corrected) + " box(es) disagreed with their masks (a box scale "
                           "frozen at export time) and were rescaled or replaced by the mask bounds");
    }
    timings.postprocess_ms = ms_since(t1);
    return instances;
  }

 private:
  rt::Session image_, language_, decoder_;
  int size_ = 1008;
  int image_rank_ = 3;
  bool float_image_ = false;
  bool sequence_first_ = false;
  std::int64_t box_slots_ = 1;
  FinalOutputFormat format_;
};

}  // namespace

std::unique_ptr<Backend> make_samexporter_backend(const ModelFiles& files, const rt::SessionConfig& encoder,
                                                  const rt::SessionConfig& config) {
  return std::make_unique<SamexporterBackend>(files, encoder, config);
}

}  // namespace sam3::detail
