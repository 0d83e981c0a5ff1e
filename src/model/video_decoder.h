// The video decoding of a model whose family row has a VideoCapability (pure/families.h; SAM
// 3.1's bundle as ailia-models publishes it), beside the text (TextDecoding) and interactive
// (InteractiveDecoder) decodings of backend.h: a frame through the image encoder, the detector
// on it for a text, memory attention, the multiplex tracking decoder (16 slots), the memory
// encoder (32 mask channels), the interactive prompt encoder and decoder, the projections, and
// the npy/ constants. Plain values in and out: no ONNX Runtime type crosses this header, so
// the video tracker (src/video) and its rules (pure/video) never hold a session.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sam3/image.h"
#include "sam3/model.h"
#include "sam3/stop_token.h"

namespace sam3::runtime {
class StopScope;
}

namespace sam3::detail {

using Floats = std::vector<float>;

struct SlotOutputs {    // the tracking decoder on one bucket, the best candidate of each slot
  Floats masks;         // [16, M, M] logits
  Floats score_logits;  // [16]
  Floats tokens;        // [16, 256] the best candidate's sam token
};

struct PromptedObject {  // the interactive decoder's best candidate
  Floats mask;           // [M, M] logits
  float score_logit = 0;
  Floats pointer;  // [256] after interactive_obj_ptr_proj
};

// One frame through the image encoder. What the decoders read of it stays inside; the memory
// reads the tracker neck's last level as rows.
class EncodedFrame {
 public:
  virtual ~EncodedFrame() = default;
  std::shared_ptr<const Floats> rows, pos_rows;  // prop_fpn2 and prop_pos2 as [HW,256]
};

// A text prompt's features for the detector, encoded once per prompt.
class VideoText {
 public:
  virtual ~VideoText() = default;
};

// The detector's outputs on one frame for one text, as float32.
struct RawDetections {
  Floats masks;   // [Q, M, M] logits
  Floats boxes;   // [Q, 4] normalized cx, cy, w, h
  Floats logits;  // [Q]
  float presence_logit = 0;
};

class VideoDecoder {
 public:
  virtual ~VideoDecoder() = default;

  int input_size() const { return input_size_; }      // 1008 for the bundle
  int mask_side() const { return mask_side_; }        // 288
  int feature_side() const { return feature_side_; }  // 72
  int memory_side() const { return memory_side_; }    // 1152

  virtual std::unique_ptr<const VideoText> encode_text(const std::string& text) const = 0;
  // Throws kModelMismatch when the encoder lacks the tracker neck's outputs.
  virtual std::unique_ptr<const EncodedFrame> encode_frame(const Image& frame) const = 0;
  virtual RawDetections detect(const EncodedFrame& frame, const VideoText& text) const = 0;
  // curr: [HW,256] rows; memories as the driver lays them out: T_obj / T_img rows of 256.
  virtual Floats attend(const Floats& curr, const Floats& curr_pos, const Floats& mem_obj, const Floats& mem_obj_pos, const Floats& mem_img,
                        const Floats& mem_img_pos) const = 0;
  // image: [256,F,F] (memory-conditioned); extra: [16,256].
  virtual SlotOutputs track(const Floats& image, const EncodedFrame& frame, const Floats& extra) const = 0;
  // masks: [32, S, S] with S = memory_side(); returns features and position, [256,F,F] each.
  virtual std::pair<Floats, Floats> encode_memory(const EncodedFrame& frame, const Floats& masks) const = 0;
  // Points in the encoder's input pixels with SAM labels (1, 0, 2/3 box corners), or a mask
  // prompt ([M,M], from mask_prompt()) with no points.
  virtual PromptedObject prompt(const EncodedFrame& frame, const Floats& points, const std::vector<int>& labels,
                                const Floats* mask) const = 0;
  // rows: [n,256] -> [n,256]; which: "obj_ptr_proj", "interactive_obj_ptr_proj", "obj_ptr_tpos_proj".
  virtual Floats project(const char* which, const Floats& rows) const = 0;
  // A constant of the capability by name (its value count checked when loaded).
  virtual const Floats& constant(const std::string& name) const = 0;

  // A binary mask at the frame's size -> the prompt encoder's mask input [M,M] (pure/video/mask_prompt.h).
  Floats mask_prompt(const std::vector<std::uint8_t>& mask, int width, int height) const;

 protected:
  explicit VideoDecoder(int input_size)
      : input_size_(input_size), mask_side_(input_size * 2 / 7), feature_side_(input_size / 14), memory_side_(input_size * 8 / 7) {}

 private:
  int input_size_, mask_side_, feature_side_, memory_side_;
};

// While alive, the decoder's runs on this thread stop within about a network node once `token`
// asks (kCancelled).
class VideoRunStop {
 public:
  explicit VideoRunStop(const StopToken& token);
  ~VideoRunStop();
  VideoRunStop(const VideoRunStop&) = delete;
  VideoRunStop& operator=(const VideoRunStop&) = delete;

 private:
  std::unique_ptr<runtime::StopScope> scope_;
};

// The model's video decoder, loaded once and shared by every tracker alive on it (its sessions
// are only run, never changed); valid while `model` is. Throws kModelMismatch when the model's
// family has no video capability (naming those that have one), kModelNotFound naming a missing
// graph or constant, kModelMismatch for one whose I/O or size does not fit.
std::shared_ptr<const VideoDecoder> video_decoder(const std::shared_ptr<const Model>& model);

}  // namespace sam3::detail
