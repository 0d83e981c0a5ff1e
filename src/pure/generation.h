// A SAM3 export generation as data: recognised from its files' inputs and outputs (any
// runtime's), it turns an image, a tokenized text and exemplar boxes into the named tensors its
// sessions take, says which encoder output feeds which decoder input, and turns the decoder's
// outputs into instances. The one implementation of each generation's rules: the native
// backends (model/usls_backend.cpp, model/samexporter_backend.cpp) and the WebAssembly module
// (web/sam3_wasm.cpp) both run these. Pure: standard library only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "pure/decoded.h"
#include "pure/tensor.h"
#include "sam3/tokenizer.h"
#include "sam3/types.h"

namespace sam3::pure {

enum class Family { kUsls, kSamexporter };

class Generation {
 public:
  // Throw kModelMismatch naming the file, tensor, expected and found when the files do not fit.
  // geometry: the first usls generation's geometry-encoder.onnx, or null.
  static Generation usls(const PartSpec& image, const PartSpec& text, const PartSpec& decoder, const PartSpec* geometry);
  static Generation samexporter(const PartSpec& image, const PartSpec& text, const PartSpec& decoder);

  Family family() const { return family_; }
  const char* layout() const { return family_ == Family::kUsls ? "usls" : "samexporter"; }
  std::string name() const;                 // e.g. "usls", "samexporter (raw heads)", "osam"
  std::vector<std::string> quirks() const;  // what sam3 does differently for it
  int input_width() const { return width_; }
  int input_height() const { return height_; }
  bool has_geometry() const { return !geometry_.file.empty(); }
  // Exemplar boxes one prompt takes at most (0: any number).
  std::int64_t box_limit() const { return family_ == Family::kSamexporter ? box_slots_or_one() : 0; }

  // The image encoder's inputs from [3,H,W] planes in 0..255 at input_width x input_height
  // (normalized in place where the layout normalizes outside the graph).
  std::vector<Tensor> image_inputs(std::vector<float>& planes) const;
  // Which image encoder outputs the decoder takes (the others may be dropped).
  bool keeps_image_output(const std::string& name) const;
  std::vector<Tensor> text_inputs(const TokenizedText& tokens) const;
  // The decoder's prompt inputs: exemplar boxes (pixels of a width x height image, already
  // checked) in the layout's encoding and padding, and the image size where the graph takes it.
  // Throws kInvalidArgument for more boxes than the layout takes.
  std::vector<Tensor> decoder_inputs(const std::vector<BoxPrompt>& boxes, int width, int height) const;
  // Decoder input -> the text encoder output that feeds it (the names differ in samexporter).
  std::map<std::string, std::string> text_feeds() const;
  // Decoder input -> image encoder output (the same names).
  std::vector<std::string> image_feeds() const;

  // The first usls generation: boxes go through geometry-encoder.onnx (these inputs, plus
  // geometry_image_feeds from the image encoder's outputs), and the decoder takes one prompt
  // sequence, the text features then the geometry features (prompt_inputs; geometry null for
  // a text-only prompt, whose prompt is the text alone).
  std::vector<Tensor> geometry_inputs(const std::vector<BoxPrompt>& boxes, int width, int height) const;
  std::map<std::string, std::string> geometry_image_feeds() const;  // geometry input -> image output
  std::vector<Tensor> prompt_inputs(const TensorViews& text, const TensorViews* geometry) const;

  // The decoder's outputs -> instances (unsorted, unfiltered by area); logs boxes it corrected.
  std::vector<Instance> instances(const TensorViews& outputs, int width, int height, const SegmentOptions& options) const;

 private:
  std::int64_t box_slots_or_one() const { return box_slots_ > 0 ? box_slots_ : 1; }

  Family family_ = Family::kUsls;
  PartSpec image_, text_, decoder_, geometry_;
  int width_ = 1008, height_ = 1008;
  bool half_ = false;          // usls: float16 files
  int image_rank_ = 3;         // samexporter: [3,S,S] or [1,3,S,S]
  bool float_image_ = false;   // samexporter: float input normalized by sam3
  bool sequence_first_ = false;
  bool raw_heads_ = false;
  std::int64_t box_slots_ = 1;
  FinalOutputFormat format_;
};

}  // namespace sam3::pure
