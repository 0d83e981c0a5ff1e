// The video decoding on ONNX Runtime: the family row's VideoCapability (pure/families.h) names
// the graphs and constants, this opens their sessions beside the loaded Model's image encoder
// and detector (its TextDecoding) and moves tensors; every rule is the tracker's or pure/video's.
#include "model/video_decoder.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "model/backend.h"
#include "model/contract.h"
#include "model/model_access.h"
#include "model/npy.h"
#include "pure/families.h"
#include "pure/families/sam31_video.h"
#include "pure/video/mask_prompt.h"
#include "runtime/run_stop.h"
#include "sam3/error.h"

namespace sam3::detail {
namespace {

using pure::sam31::kChannels;
using pure::sam31::kSlots;

std::filesystem::path find_file(const std::filesystem::path& dir, const std::string& name, const pure::VideoCapability& video) {
  for (const auto& candidate : {dir / name, dir / "onnx" / name, dir / "npy" / name, dir / "onnx" / "npy" / name}) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
  }
  throw Error(ErrorCode::kModelNotFound, (dir / name).string() + ": missing; video tracking needs the " + video.description +
                                             ", the video graphs and npy/ constants beside the image encoder");
}

Ort::Value floats(const Floats& data, const std::vector<std::int64_t>& shape) {
  return runtime::view(const_cast<float*>(data.data()), data.size(), shape);
}

Floats values(const Ort::Value& v) {
  const auto n = v.GetTensorTypeAndShapeInfo().GetElementCount();
  const float* p = v.GetTensorData<float>();
  return Floats(p, p + n);
}

// The i-th output of a run, as float32 values.
Floats output(const runtime::Session& s, std::map<std::string, Ort::Value>& out, size_t i) {
  return values(out.at(s.outputs().at(i).name));
}

std::int64_t rows(const Floats& f) { return static_cast<std::int64_t>(f.size() / kChannels); }

struct FrameValues final : EncodedFrame {
  std::map<std::string, Ort::Value> outputs;  // every output of the image encoder, float32
  const Ort::Value& at(const char* name) const { return outputs.at(name); }
};

struct TextValues final : VideoText {
  TextFeatures features;
};

class OrtVideoDecoder final : public VideoDecoder {
 public:
  OrtVideoDecoder(const Model& model, const pure::VideoCapability& video)
      : VideoDecoder(model.input_size()),
        model_(model),
        video_(video),
        text_(ModelAccess::backend(model).text()),
        tokenizer_(ModelAccess::tokenizer(model)) {
    const auto& dir = model.directory();
    const auto& config = ModelAccess::session_config(model);
    pure::PartSpecs specs;
    for (const auto& g : video.graphs) {
      sessions_[g.part] = std::make_unique<runtime::Session>(find_file(dir, std::string(g.stem) + ".onnx", video), config);
      specs[g.part] = part_spec(*sessions_[g.part]);
    }
    video.check(specs);
    for (const auto& c : video.constants) {
      constants_[c.name] = load_npy(find_file(dir, c.file, video)).data;
      if (constants_[c.name].size() != c.values) {
        throw Error(ErrorCode::kModelMismatch, std::string(c.file) + " holds " + std::to_string(constants_[c.name].size()) +
                                                   " values where the bundle's has " + std::to_string(c.values));
      }
    }
  }

  std::unique_ptr<const VideoText> encode_text(const std::string& text) const override {
    auto out = std::make_unique<TextValues>();
    out->features = text_->encode_text(tokenizer_->encode(text));
    return out;
  }

  std::unique_ptr<const EncodedFrame> encode_frame(const Image& frame) const override {
    auto planes = model_.prepare(frame).planes;
    auto out = std::make_unique<FrameValues>();
    out->outputs = text_->encode_image_all(planes);
    runtime::outputs_to_float32(out->outputs);
    for (const char* name : video_.encoder_outputs) {
      if (!out->outputs.count(name)) {
        throw Error(ErrorCode::kModelMismatch, std::string("the image encoder has no output ") + name + ": not SAM 3.1's video encoder");
      }
    }
    const size_t hw = static_cast<size_t>(feature_side()) * feature_side();
    const Floats f2 = values(out->at("prop_fpn2")), p2 = values(out->at("prop_pos2"));
    if (f2.size() != hw * kChannels || p2.size() != f2.size()) {
      throw Error(ErrorCode::kModelMismatch, "prop_fpn2 is not [1,256," + std::to_string(feature_side()) + "," +
                                                 std::to_string(feature_side()) + "]: not SAM 3.1's video encoder");
    }
    auto r = std::make_shared<Floats>(f2.size()), pos = std::make_shared<Floats>(f2.size());
    for (size_t c = 0; c < kChannels; ++c)
      for (size_t p = 0; p < hw; ++p) {
        (*r)[p * kChannels + c] = f2[c * hw + p];
        (*pos)[p * kChannels + c] = p2[c * hw + p];
      }
    out->rows = r;
    out->pos_rows = pos;
    return out;
  }

  RawDetections detect(const EncodedFrame& frame, const VideoText& text) const override {
    auto raw = text_->decode_raw(static_cast<const FrameValues&>(frame).outputs, static_cast<const TextValues&>(text).features);
    return {values(raw.at("pred_masks")), values(raw.at("pred_boxes")), values(raw.at("pred_logits")),
            values(raw.at("presence_logit_dec")).at(0)};
  }

  Floats attend(const Floats& curr, const Floats& curr_pos, const Floats& mem_obj, const Floats& mem_obj_pos, const Floats& mem_img,
                const Floats& mem_img_pos) const override {
    const auto& s = session("memory_attention");
    auto a = floats(curr, {rows(curr), 1, kChannels}), b = floats(curr_pos, {rows(curr), 1, kChannels});
    auto c = floats(mem_obj, {rows(mem_obj), 1, kChannels}), d = floats(mem_obj_pos, {rows(mem_obj), 1, kChannels});
    auto e = floats(mem_img, {rows(mem_img), 1, kChannels}), f = floats(mem_img_pos, {rows(mem_img), 1, kChannels});
    auto out = s.run({{"curr_obj", a},
                      {"curr_obj_pos", b},
                      {"curr_img", a},
                      {"memory_obj", c},
                      {"memory_obj_pos", d},
                      {"memory_img", e},
                      {"memory_img_pos", f}});
    runtime::outputs_to_float32(out);
    return output(s, out, 0);
  }

  SlotOutputs track(const Floats& image, const EncodedFrame& frame, const Floats& extra) const override {
    const auto& enc = static_cast<const FrameValues&>(frame);
    const auto& s = session("tracking_decoder");
    auto img = floats(image, {1, kChannels, feature_side(), feature_side()});
    auto ex = floats(extra, {1, kSlots, kChannels});
    auto out = s.run(
        {{"image_embeddings", img}, {"high_res_feat0", enc.at("prop_fpn0")}, {"high_res_feat1", enc.at("prop_fpn1")}, {"extra_embed", ex}});
    runtime::outputs_to_float32(out);
    const Floats masks = output(s, out, 0), iou = output(s, out, 1), tokens = output(s, out, 2), scores = output(s, out, 3);
    const size_t plane = static_cast<size_t>(mask_side()) * mask_side();
    const size_t candidates = iou.size() / kSlots;
    if (candidates == 0 || masks.size() != kSlots * candidates * plane || tokens.size() != kSlots * candidates * kChannels ||
        scores.size() != kSlots) {
      throw Error(ErrorCode::kModelMismatch, s.path().string() + ": its outputs do not have SAM 3.1's shapes (16 slots of " +
                                                 std::to_string(mask_side()) + "x" + std::to_string(mask_side()) + " masks)");
    }
    SlotOutputs r{Floats(kSlots * plane), Floats(scores), Floats(kSlots * kChannels)};
    for (int k = 0; k < kSlots; ++k) {
      const float* row = &iou[k * candidates];
      const size_t best = std::max_element(row, row + candidates) - row;
      std::copy_n(&masks[(k * candidates + best) * plane], plane, &r.masks[k * plane]);
      std::copy_n(&tokens[(k * candidates + best) * kChannels], kChannels, &r.tokens[k * kChannels]);
    }
    return r;
  }

  std::pair<Floats, Floats> encode_memory(const EncodedFrame& frame, const Floats& masks) const override {
    const auto& s = session("memory_encoder");
    auto m = floats(masks, {1, 2 * kSlots, memory_side(), memory_side()});
    auto out = s.run({{"pix_feat", static_cast<const FrameValues&>(frame).at("prop_fpn2")}, {"masks", m}});
    runtime::outputs_to_float32(out);
    return {output(s, out, 0), output(s, out, 1)};
  }

  PromptedObject prompt(const EncodedFrame& frame, const Floats& points, const std::vector<int>& labels,
                        const Floats* mask) const override {
    const auto& enc = static_cast<const FrameValues&>(frame);
    const auto& pe = session("prompt_encoder");
    const std::int64_t n = static_cast<std::int64_t>(labels.size());
    Floats coords = points;
    std::vector<int> label_values = labels;
    if (n == 0) {  // a mask prompt alone: one padding point, as the driver sends it
      coords = {0.0f, 0.0f};
      label_values = {-1};
    }
    const std::int64_t count = static_cast<std::int64_t>(label_values.size());
    Floats mask_in = mask ? *mask : Floats(static_cast<size_t>(mask_side()) * mask_side(), 0.0f);
    auto c = floats(coords, {1, count, 2});
    auto m = floats(mask_in, {1, 1, mask_side(), mask_side()});
    const bool labels64 = pe.input("labels")->type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
    const bool enable64 = pe.input("masks_enable")->type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
    std::vector<std::int32_t> l32(label_values.begin(), label_values.end());
    std::vector<std::int64_t> l64(label_values.begin(), label_values.end());
    std::int32_t e32 = mask ? 1 : 0;
    std::int64_t e64 = e32;
    auto l = labels64 ? runtime::view(l64.data(), l64.size(), {1, count}) : runtime::view(l32.data(), l32.size(), {1, count});
    auto e = enable64 ? runtime::view(&e64, 1, {1}) : runtime::view(&e32, 1, {1});
    auto prompt_out = pe.run({{"coords", c}, {"labels", l}, {"masks", m}, {"masks_enable", e}});
    runtime::outputs_to_float32(prompt_out);
    const auto& sparse = prompt_out.at(pe.outputs()[0].name);
    const auto& dense = prompt_out.at(pe.outputs()[1].name);
    const auto& dense_pe = prompt_out.at(pe.outputs()[2].name);

    const auto& dec = session("mask_decoder");
    auto out = dec.run({{"image_embeddings", enc.at("prop_fpn2")},
                        {"image_pe", dense_pe},
                        {"sparse_prompt_embeddings", sparse},
                        {"dense_prompt_embeddings", dense},
                        {"high_res_features1", enc.at("prop_fpn0")},
                        {"high_res_features2", enc.at("prop_fpn1")}});
    runtime::outputs_to_float32(out);
    const Floats masks = output(dec, out, 0), iou = output(dec, out, 1), tokens = output(dec, out, 2), score = output(dec, out, 3);
    const size_t plane = static_cast<size_t>(mask_side()) * mask_side();
    if (iou.empty() || masks.size() != iou.size() * plane || tokens.size() != iou.size() * kChannels || score.empty()) {
      throw Error(ErrorCode::kModelMismatch, dec.path().string() + ": its outputs do not have SAM 3.1's shapes");
    }
    const size_t best = std::max_element(iou.begin(), iou.end()) - iou.begin();
    PromptedObject r;
    r.mask.assign(masks.begin() + best * plane, masks.begin() + (best + 1) * plane);
    r.score_logit = score[0];
    r.pointer = project("interactive_obj_ptr_proj", Floats(tokens.begin() + best * kChannels, tokens.begin() + (best + 1) * kChannels));
    return r;
  }

  Floats project(const char* which, const Floats& rows_in) const override {
    const auto& s = session(which);
    auto x = floats(rows_in, {rows(rows_in), kChannels});
    auto out = s.run({{"x", x}});
    runtime::outputs_to_float32(out);
    return output(s, out, 0);
  }

  const Floats& constant(const std::string& name) const override { return constants_.at(name); }

 private:
  const runtime::Session& session(const char* part) const { return *sessions_.at(part); }

  const Model& model_;
  const pure::VideoCapability& video_;
  const TextDecoding* text_;  // the family's detector (non-null: a video family is a text family)
  const ClipTokenizer* tokenizer_;
  std::map<std::string, std::unique_ptr<runtime::Session>> sessions_;
  std::map<std::string, Floats> constants_;
};

}  // namespace

Floats VideoDecoder::mask_prompt(const std::vector<std::uint8_t>& mask, int width, int height) const {
  return pure::video::mask_prompt(mask, width, height, constant("interactive_mask_downsample_weight"),
                                  constant("interactive_mask_downsample_bias").at(0), mask_side());
}

VideoRunStop::VideoRunStop(const StopToken& token) : scope_(std::make_unique<runtime::StopScope>(token)) {}
VideoRunStop::~VideoRunStop() = default;

std::shared_ptr<const VideoDecoder> video_decoder(const std::shared_ptr<const Model>& model) {
  const pure::VideoCapability* video = pure::video_capability(model->layout().id());
  if (!video || !ModelAccess::backend(*model).text()) {
    throw Error(ErrorCode::kModelMismatch,
                "video tracking runs " + pure::video_families_description() + "; this model is " + std::string(model->layout().id()));
  }
  static std::mutex mutex;
  static std::map<const Model*, std::pair<std::weak_ptr<const Model>, std::weak_ptr<const VideoDecoder>>> loaded;
  std::lock_guard lock(mutex);
  for (auto it = loaded.begin(); it != loaded.end();) {  // forget models and decoders gone
    it = it->second.first.expired() || it->second.second.expired() ? loaded.erase(it) : std::next(it);
  }
  if (auto it = loaded.find(model.get()); it != loaded.end()) return it->second.second.lock();
  std::shared_ptr<const VideoDecoder> decoder = std::make_shared<const OrtVideoDecoder>(*model, *video);
  loaded[model.get()] = {model, decoder};
  return decoder;
}

}  // namespace sam3::detail
