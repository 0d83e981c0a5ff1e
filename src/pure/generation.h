// A SAM3 export generation as data: recognised from its files' inputs and outputs (any
// runtime's), it turns an image, a tokenized text and exemplar boxes into the named tensors its
// sessions take, says which encoder output feeds which decoder input, and turns the decoder's
// outputs into instances. Each family's rules are one FamilyRules subclass in one file under
// pure/families/, built by its row of the family registry (pure/families.h); the native
// backend (model/text_backend.cpp) and the WebAssembly module (web/sam3_wasm.cpp) both run
// them through Generation. Pure: standard library only.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pure/decoded.h"
#include "pure/tensor.h"
#include "sam3/tokenizer.h"
#include "sam3/types.h"

namespace sam3::pure {

// A model's files' I/O by part: "image", "text", "decoder", "geometry".
using PartSpecs = std::map<std::string, PartSpec>;

// One family's rules. The defaults are what most families do; a family overrides the rest.
class FamilyRules {
 public:
  virtual ~FamilyRules() = default;

  virtual std::string name() const = 0;                 // e.g. "usls", "osam"
  virtual std::vector<std::string> quirks() const = 0;  // what sam3 does differently for it
  // [3,H,W] planes in 0..255 at width x height (normalized in place where the family
  // normalizes outside the graph) -> the image encoder's inputs.
  virtual std::vector<Tensor> image_inputs(std::vector<float>& planes) const = 0;
  virtual std::vector<Tensor> text_inputs(const TokenizedText& tokens) const = 0;
  // Image encoder outputs kept in an embedding. Default: those the decoder or geometry encoder take.
  virtual bool keeps_image_output(const std::string& name) const;
  // Decoder input -> the text encoder output (or, without a text encoder, the text input) that
  // feeds it. Default: the decoder inputs the text encoder outputs under the same name.
  virtual std::map<std::string, std::string> text_feeds() const;
  // Decoder inputs fed by the image encoder output of the same name. Default: all it has and keeps.
  virtual std::vector<std::string> image_feeds() const;
  // The decoder's box inputs (and the image size where the graph takes it); throws
  // kInvalidArgument for more boxes than the family takes.
  virtual std::vector<Tensor> decoder_inputs(const std::vector<BoxPrompt>&, int /*width*/, int /*height*/) const { return {}; }
  // With a geometry encoder: its inputs for a prompt (empty: not run for this prompt), the
  // image outputs it takes, and the decoder's prompt sequence from the text and geometry outputs.
  virtual std::vector<Tensor> geometry_inputs(const std::vector<BoxPrompt>&, int /*width*/, int /*height*/) const { return {}; }
  virtual std::map<std::string, std::string> geometry_image_feeds() const { return {}; }
  virtual std::vector<Tensor> prompt_inputs(const TensorViews& /*text*/, const TensorViews* /*geometry*/) const { return {}; }
  // The decoder's outputs -> instances (unsorted, unfiltered by area). Default: raw heads.
  virtual std::vector<Instance> instances(const TensorViews& outputs, int width, int height, const SegmentOptions& options) const;
  virtual std::int64_t box_limit() const { return 0; }  // exemplar boxes per prompt (0: any)
  // The instances of every prompt of one image -> which of them the family's reference drops
  // (empty: none).
  virtual std::vector<bool> suppressed_across_prompts(const std::vector<const Instance*>&) const { return {}; }

  const PartSpec& image() const { return parts_.at("image"); }
  const PartSpec& decoder() const { return parts_.at("decoder"); }
  const PartSpec* part(const std::string& name) const {
    auto it = parts_.find(name);
    return it == parts_.end() ? nullptr : &it->second;
  }
  int width() const { return width_; }
  int height() const { return height_; }

 protected:
  explicit FamilyRules(PartSpecs parts) : parts_(std::move(parts)) {}
  PartSpecs parts_;
  int width_ = 1008, height_ = 1008;
};

class Generation {
 public:
  // family: the registry's stable id (static storage).
  Generation(const char* family, std::shared_ptr<const FamilyRules> rules) : family_(family), rules_(std::move(rules)) {}

  // The first three families' builders (their rows in the registry call these; tests too).
  // Throw kModelMismatch naming the file, tensor, expected and found when the files do not fit.
  // geometry: the first usls generation's geometry-encoder.onnx, or null.
  static Generation usls(const PartSpec& image, const PartSpec& text, const PartSpec& decoder, const PartSpec* geometry);
  static Generation samexporter(const PartSpec& image, const PartSpec& text, const PartSpec& decoder);
  static Generation geti(const PartSpec& image, const PartSpec& text, const PartSpec& decoder, const PartSpec& geometry);

  const char* layout() const { return family_; }  // the family's registry id
  std::string name() const { return rules_->name(); }
  std::vector<std::string> quirks() const { return rules_->quirks(); }
  int input_width() const { return rules_->width(); }
  int input_height() const { return rules_->height(); }
  bool has_geometry() const { return rules_->part("geometry") != nullptr; }
  // False when the decoder encodes the text itself (the text inputs then feed it directly).
  bool has_text_encoder() const { return rules_->part("text") != nullptr; }
  std::int64_t box_limit() const { return rules_->box_limit(); }

  std::vector<Tensor> image_inputs(std::vector<float>& planes) const;
  bool keeps_image_output(const std::string& name) const { return rules_->keeps_image_output(name); }
  std::vector<Tensor> text_inputs(const TokenizedText& tokens) const { return rules_->text_inputs(tokens); }
  std::vector<Tensor> decoder_inputs(const std::vector<BoxPrompt>& boxes, int width, int height) const {
    return rules_->decoder_inputs(boxes, width, height);
  }
  std::map<std::string, std::string> text_feeds() const { return rules_->text_feeds(); }
  std::vector<std::string> image_feeds() const { return rules_->image_feeds(); }
  std::vector<Tensor> geometry_inputs(const std::vector<BoxPrompt>& boxes, int width, int height) const {
    return rules_->geometry_inputs(boxes, width, height);
  }
  std::map<std::string, std::string> geometry_image_feeds() const { return rules_->geometry_image_feeds(); }
  std::vector<Tensor> prompt_inputs(const TensorViews& text, const TensorViews* geometry) const {
    return rules_->prompt_inputs(text, geometry);
  }
  std::vector<Instance> instances(const TensorViews& outputs, int width, int height, const SegmentOptions& options) const {
    return rules_->instances(outputs, width, height, options);
  }
  // Drops what the family's reference drops across the prompts of one image.
  void suppress_across_prompts(std::vector<std::vector<Instance>*>& per_prompt) const;

 private:
  const char* family_;
  std::shared_ptr<const FamilyRules> rules_;
};

}  // namespace sam3::pure
