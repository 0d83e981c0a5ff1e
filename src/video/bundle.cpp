#include "video/bundle.h"

#include <algorithm>
#include <cmath>

#include "model/contract.h"
#include "predictor/postprocess.h"
#include "pure/families/sam31_video.h"
#include "sam3/error.h"
#include "video/npy.h"

namespace sam3::video {
namespace {

std::filesystem::path find_file(const std::filesystem::path& dir, const std::string& name) {
  for (const auto& candidate : {dir / name, dir / "onnx" / name, dir / "npy" / name, dir / "onnx" / "npy" / name}) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
  }
  throw Error(ErrorCode::kModelNotFound, (dir / name).string() + ": missing; video tracking needs SAM 3.1's video graphs and "
                                                                 "npy/ constants as ailia-models publishes them beside the image encoder");
}

Ort::Value floats(const Floats& data, const std::vector<std::int64_t>& shape) {
  return rt::view(const_cast<float*>(data.data()), data.size(), shape);
}

// The i-th output of a run, as float32 values.
Floats output(const rt::Session& s, std::map<std::string, Ort::Value>& out, size_t i) {
  const auto& v = out.at(s.outputs().at(i).name);
  const auto info = v.GetTensorTypeAndShapeInfo();
  const float* p = v.GetTensorData<float>();
  return Floats(p, p + info.GetElementCount());
}

std::int64_t rows(const Floats& f) { return static_cast<std::int64_t>(f.size() / kChannels); }

}  // namespace

Floats sine_positions(const std::vector<float>& positions) {
  constexpr int half = kChannels / 2;
  Floats out(positions.size() * kChannels);
  for (size_t n = 0; n < positions.size(); ++n) {
    for (int i = 0; i < half; ++i) {
      const float freq = 1.0f / std::pow(10000.0f, static_cast<float>(i) / half);
      out[n * kChannels + i] = std::sin(positions[n] * freq);
      out[n * kChannels + half + i] = std::cos(positions[n] * freq);
    }
  }
  return out;
}

Bundle::Bundle(const std::filesystem::path& dir, int input_size, const rt::SessionConfig& config)
    : input_size_(input_size), mask_side_(input_size * 2 / 7), feature_side_(input_size / 14), memory_side_(input_size * 8 / 7) {
  pure::PartSpecs specs;
  for (const auto& g : pure::sam31_video_graphs()) {
    const auto path = find_file(dir, std::string(g.stem) + ".onnx");
    sessions_[g.part] = std::make_unique<rt::Session>(path, config);
    specs[g.part] = detail::part_spec(*sessions_[g.part]);
  }
  pure::check_sam31_video(specs);
  for (const auto& c : pure::sam31_video_constants()) constants_[c.part] = load_npy(find_file(dir, c.stem)).data;
  const auto need = [&](const char* name, size_t count) {
    if (constants_.at(name).size() != count) {
      throw Error(ErrorCode::kModelMismatch, std::string(name) + ".npy holds " + std::to_string(constants_.at(name).size()) +
                                                 " values where SAM 3.1's has " + std::to_string(count));
    }
  };
  need("maskmem_tpos_enc", kMaskMemories * kChannels);
  need("no_obj_embed_spatial", kSlots * kChannels);
  need("no_obj_ptr_linear_weight", kChannels * kChannels);
  need("no_obj_ptr_linear_bias", kChannels);
  need("output_valid_embed", kSlots * kChannels);
  need("output_invalid_embed", kSlots * kChannels);
  need("interactive_mask_downsample_weight", 16);
  need("interactive_mask_downsample_bias", 1);
}

Floats Bundle::attend(const Floats& curr, const Floats& curr_pos, const Floats& mem_obj, const Floats& mem_obj_pos,
                      const Floats& mem_img, const Floats& mem_img_pos) const {
  const auto& s = session("memory_attention");
  auto a = floats(curr, {rows(curr), 1, kChannels}), b = floats(curr_pos, {rows(curr), 1, kChannels});
  auto c = floats(mem_obj, {rows(mem_obj), 1, kChannels}), d = floats(mem_obj_pos, {rows(mem_obj), 1, kChannels});
  auto e = floats(mem_img, {rows(mem_img), 1, kChannels}), f = floats(mem_img_pos, {rows(mem_img), 1, kChannels});
  auto out = s.run({{"curr_obj", a}, {"curr_obj_pos", b}, {"curr_img", a}, {"memory_obj", c}, {"memory_obj_pos", d},
                    {"memory_img", e}, {"memory_img_pos", f}});
  rt::outputs_to_float32(out);
  return output(s, out, 0);
}

SlotOutputs Bundle::track(const Floats& image, const Ort::Value& prop_fpn0, const Ort::Value& prop_fpn1, const Floats& extra) const {
  const auto& s = session("tracking_decoder");
  auto img = floats(image, {1, kChannels, feature_side_, feature_side_});
  auto ex = floats(extra, {1, kSlots, kChannels});
  auto out = s.run({{"image_embeddings", img}, {"high_res_feat0", prop_fpn0}, {"high_res_feat1", prop_fpn1}, {"extra_embed", ex}});
  rt::outputs_to_float32(out);
  const Floats masks = output(s, out, 0), iou = output(s, out, 1), tokens = output(s, out, 2), scores = output(s, out, 3);
  const size_t plane = static_cast<size_t>(mask_side_) * mask_side_;
  const size_t candidates = iou.size() / kSlots;
  if (candidates == 0 || masks.size() != kSlots * candidates * plane || tokens.size() != kSlots * candidates * kChannels ||
      scores.size() != kSlots) {
    throw Error(ErrorCode::kModelMismatch, s.path().string() + ": its outputs do not have SAM 3.1's shapes (16 slots of " +
                                               std::to_string(mask_side_) + "x" + std::to_string(mask_side_) + " masks)");
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

std::pair<Floats, Floats> Bundle::encode_memory(const Ort::Value& prop_fpn2, const Floats& masks) const {
  const auto& s = session("memory_encoder");
  auto m = floats(masks, {1, 2 * kSlots, memory_side_, memory_side_});
  auto out = s.run({{"pix_feat", prop_fpn2}, {"masks", m}});
  rt::outputs_to_float32(out);
  return {output(s, out, 0), output(s, out, 1)};
}

PromptedObject Bundle::prompt(const Ort::Value& prop_fpn0, const Ort::Value& prop_fpn1, const Ort::Value& prop_fpn2,
                              const Floats& points, const std::vector<int>& labels, const Floats* mask) const {
  const auto& pe = session("prompt_encoder");
  const std::int64_t n = static_cast<std::int64_t>(labels.size());
  Floats coords = points;
  std::vector<int> label_values = labels;
  if (n == 0) {  // a mask prompt alone: one padding point, as the driver sends it
    coords = {0.0f, 0.0f};
    label_values = {-1};
  }
  const std::int64_t count = static_cast<std::int64_t>(label_values.size());
  Floats mask_in = mask ? *mask : Floats(static_cast<size_t>(mask_side_) * mask_side_, 0.0f);
  auto c = floats(coords, {1, count, 2});
  auto m = floats(mask_in, {1, 1, mask_side_, mask_side_});
  const bool labels64 = pe.input("labels")->type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
  const bool enable64 = pe.input("masks_enable")->type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
  std::vector<std::int32_t> l32(label_values.begin(), label_values.end());
  std::vector<std::int64_t> l64(label_values.begin(), label_values.end());
  std::int32_t e32 = mask ? 1 : 0;
  std::int64_t e64 = e32;
  auto l = labels64 ? rt::view(l64.data(), l64.size(), {1, count}) : rt::view(l32.data(), l32.size(), {1, count});
  auto e = enable64 ? rt::view(&e64, 1, {1}) : rt::view(&e32, 1, {1});
  auto prompt_out = pe.run({{"coords", c}, {"labels", l}, {"masks", m}, {"masks_enable", e}});
  rt::outputs_to_float32(prompt_out);
  const auto& sparse = prompt_out.at(pe.outputs()[0].name);
  const auto& dense = prompt_out.at(pe.outputs()[1].name);
  const auto& dense_pe = prompt_out.at(pe.outputs()[2].name);

  const auto& dec = session("mask_decoder");
  auto out = dec.run({{"image_embeddings", prop_fpn2}, {"image_pe", dense_pe}, {"sparse_prompt_embeddings", sparse},
                      {"dense_prompt_embeddings", dense}, {"high_res_features1", prop_fpn0}, {"high_res_features2", prop_fpn1}});
  rt::outputs_to_float32(out);
  const Floats masks = output(dec, out, 0), iou = output(dec, out, 1), tokens = output(dec, out, 2), score = output(dec, out, 3);
  const size_t plane = static_cast<size_t>(mask_side_) * mask_side_;
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

Floats Bundle::project(const char* which, const Floats& rows_in) const {
  const auto& s = session(which);
  auto x = floats(rows_in, {rows(rows_in), kChannels});
  auto out = s.run({{"x", x}});
  rt::outputs_to_float32(out);
  return output(s, out, 0);
}

Floats Bundle::mask_prompt(const std::vector<std::uint8_t>& mask, int width, int height) const {
  const auto& w = constants_.at("interactive_mask_downsample_weight");
  const float bias = constants_.at("interactive_mask_downsample_bias")[0];
  const int ow = (width + 3) / 4, oh = (height + 3) / 4;  // zero-padded to whole 4x4 blocks
  Floats small(static_cast<size_t>(ow) * oh);
  for (int y = 0; y < oh; ++y) {
    for (int x = 0; x < ow; ++x) {
      float acc = bias;
      for (int dy = 0; dy < 4; ++dy) {
        for (int dx = 0; dx < 4; ++dx) {
          const int sy = y * 4 + dy, sx = x * 4 + dx;
          if (sy < height && sx < width && mask[static_cast<size_t>(sy) * width + sx]) acc += w[dy * 4 + dx];
        }
      }
      small[static_cast<size_t>(y) * ow + x] = acc;
    }
  }
  Floats out(static_cast<size_t>(mask_side_) * mask_side_);
  resize_bilinear(small.data(), oh, ow, mask_side_, mask_side_, out.data());
  return out;
}

}  // namespace sam3::video
