// The text-prompted task: every instance of a concept (words and/or exemplar boxes) in an
// image, with SAM3's text-prompted models (every family but the tracker; ModelKind::kText).
// As MediaPipe's ImageSegmenter beside its InteractiveSegmenter (sam3/interactive_segmenter.h):
// both are thin over one loaded Model and its encoder.
//
//   auto segmenter = sam3::ImageSegmenter::load("models/sam3");  // expensive, share it
//   auto embedding = segmenter.encode(sam3::load_image("street.jpg"));  // the costly step, once
//   for (const char* text : {"car", "person"}) {
//     auto result = segmenter.segment(embedding, {.text = text});     // cheap per prompt
//     for (const auto& inst : result.instances) { /* inst.score, inst.box, inst.mask */ }
//   }
//
// Cheap to copy (it shares the Model); thread-safe as the Model is.
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "sam3/model.h"
#include "sam3/types.h"

namespace sam3 {
namespace detail {
class TextDecoding;
}

class ImageSegmenter {
 public:
  // Throws kModelMismatch when `model` is SAM3's interactive model (it takes clicks: use
  // InteractiveSegmenter), kInvalidArgument when it is null.
  explicit ImageSegmenter(std::shared_ptr<const Model> model);
  // Model::load, then the kind check above.
  static ImageSegmenter load(const std::filesystem::path& directory, const ModelOptions& options = {});

  const Model& model() const noexcept { return *model_; }
  const std::shared_ptr<const Model>& shared_model() const noexcept { return model_; }

  // The model's encoder (Model::prepare / Model::encode).
  PreparedImage prepare(const Image& image) const;
  ImageEmbedding encode(const Image& image, const EncodeOptions& options = {}) const;
  ImageEmbedding encode(PreparedImage prepared, const EncodeOptions& options = {}) const;

  // Every instance of the prompt's concept. Throws kInvalidArgument for an empty prompt, boxes
  // outside the image or too many boxes, an embedding of another model's layout; kCancelled
  // once options.stop asks to stop.
  PromptResult segment(const ImageEmbedding& embedding, const Prompt& prompt, const SegmentOptions& options = {}) const;
  // What the family's reference pipeline does across the prompts of one image, on all of
  // their results (EfficientSAM3: an instance overlapping a better one of any prompt by more
  // than half of the smaller mask, or of the smaller box, is dropped); nothing for the others.
  void suppress_across_prompts(std::vector<PromptResult>& results) const;

 private:
  std::shared_ptr<const Model> model_;
  const detail::TextDecoding* text_;  // the model's, alive as long as model_
};

}  // namespace sam3
