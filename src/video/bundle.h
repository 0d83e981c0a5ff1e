// SAM 3.1's video graphs on ONNX Runtime (ailia-models' bundle: sam31_video.h names them),
// with typed calls for the tracker: memory attention, the multiplex tracking decoder (16
// slots), the memory encoder (32 mask channels), the interactive prompt encoder and decoder,
// the three projections, and the npy/ constants. The image encoder and grounding graph are the
// loaded Model's (one encoder pass per frame for everything).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/session.h"

namespace sam3::video {

using Floats = std::vector<float>;

inline constexpr int kSlots = 16;        // objects per multiplex bucket (MULTIPLEX_COUNT)
inline constexpr int kChannels = 256;
inline constexpr int kMaskMemories = 7;  // NUM_MASKMEM: the conditioning frame and 6 recent ones
inline constexpr int kObjectPointers = 16;  // MAX_OBJ_PTRS

struct SlotOutputs {  // the tracking decoder on one bucket, the best candidate of each slot
  Floats masks;       // [16, M, M] logits
  Floats score_logits;  // [16]
  Floats tokens;      // [16, 256] the best candidate's sam token
};

struct PromptedObject {  // the interactive decoder's best candidate
  Floats mask;           // [M, M] logits
  float score_logit = 0;
  Floats pointer;        // [256] after interactive_obj_ptr_proj
};

class Bundle {
 public:
  // `input_size`: the image encoder's (1008 for the bundle). Throws kModelNotFound naming a
  // missing graph or constant, kModelMismatch for one whose I/O does not fit.
  Bundle(const std::filesystem::path& model_dir, int input_size, const rt::SessionConfig& config);

  int input_size() const { return input_size_; }
  int mask_side() const { return mask_side_; }      // 288
  int feature_side() const { return feature_side_; }  // 72
  int memory_side() const { return memory_side_; }  // 1152

  // curr: [HW,256] rows; memories as the driver lays them out: T_obj / T_img rows of 256.
  Floats attend(const Floats& curr, const Floats& curr_pos, const Floats& mem_obj, const Floats& mem_obj_pos,
                const Floats& mem_img, const Floats& mem_img_pos) const;
  // image: [256,F,F] (memory-conditioned); extra: [16,256].
  SlotOutputs track(const Floats& image, const Ort::Value& prop_fpn0, const Ort::Value& prop_fpn1, const Floats& extra) const;
  // masks: [32, S, S] with S = memory_side(); returns features and position, [256,F,F] each.
  std::pair<Floats, Floats> encode_memory(const Ort::Value& prop_fpn2, const Floats& masks) const;
  // Points in the encoder's input pixels with SAM labels (1, 0, 2/3 box corners), or a mask
  // prompt ([M,M], from mask_prompt()) with no points.
  PromptedObject prompt(const Ort::Value& prop_fpn0, const Ort::Value& prop_fpn1, const Ort::Value& prop_fpn2,
                        const Floats& points, const std::vector<int>& labels, const Floats* mask) const;
  // rows: [n,256] -> [n,256].
  Floats project(const char* which, const Floats& rows) const;

  // A binary mask at the frame's size -> the prompt encoder's mask input [M,M]: the bundle's
  // 4x4 stride-4 downsampling convolution, then bilinear resizing (ailia's mask_for_prompt_encoder).
  Floats mask_prompt(const std::vector<std::uint8_t>& mask, int width, int height) const;

  const Floats& constant(const std::string& name) const { return constants_.at(name); }

 private:
  std::map<std::string, std::unique_ptr<rt::Session>> sessions_;
  std::map<std::string, Floats> constants_;
  int input_size_, mask_side_, feature_side_, memory_side_;
  const rt::Session& session(const char* part) const { return *sessions_.at(part); }
};

// The 1-D sine position code of the driver's get_1d_sine_pe: [sin(p f_i), cos(p f_i)],
// f_i = 10000^(-i/128), for each position; [n,256].
Floats sine_positions(const std::vector<float>& positions);

}  // namespace sam3::video
