// The text-prompted task: every instance of a concept (words and/or exemplar boxes) in an
// image, with SAM3's text-prompted models (every family but the tracker; ModelKind::kText).
// As MediaPipe's ImageSegmenter beside its InteractiveSegmenter (sam3/interactive_segmenter.h):
// both are thin over one loaded Model and its encoder.
//
//   auto segmenter = sam3::ImageSegmenter::load("models/sam3");  // expensive, share it
//   auto embedding = segmenter.encode(sam3::load_image("street.jpg"));  // the costly step, once
//   auto results = segmenter.segment_all(embedding, {{.text = "car"}, {.text = "person"}});
//   for (const auto& result : results) {                                // one per prompt, cheap each
//     for (const auto& inst : result.instances) { /* inst.score, inst.box, inst.mask */ }
//   }
//
// Cheap to copy (it shares the Model); thread-safe as the Model is.
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "sam3/model.h"
#include "sam3/segmentation_task.h"
#include "sam3/types.h"

namespace sam3 {
namespace detail {
class TextDecoding;
}

class ImageSegmenter : public SegmentationTask {
 public:
  // Throws kModelMismatch when `model` is SAM3's interactive model (it takes clicks: use
  // InteractiveSegmenter), kInvalidArgument when it is null.
  explicit ImageSegmenter(std::shared_ptr<const Model> model);
  // Model::load, then the kind check above.
  static ImageSegmenter load(const std::filesystem::path& directory, const ModelOptions& options = {});

  // Every instance of the prompt's concept. Throws kInvalidArgument for an empty prompt, boxes
  // outside the image or too many boxes, an embedding of another model's layout; kCancelled
  // once options.stop asks to stop.
  PromptResult segment(const ImageEmbedding& embedding, const Prompt& prompt, const SegmentOptions& options = {}) const;
  // Every prompt of one image, answered as the family's reference pipeline answers them
  // together: each as segment() does, then the family's rule across them (EfficientSAM3: an
  // instance overlapping a better one of any prompt by more than half of the smaller mask, or
  // of the smaller box, is dropped; nothing for the other families). results[i] answers
  // prompts[i]. Every front answers an image's prompts through this call, so one image and one
  // set of prompts give the same instances whichever front asks. Throws as segment() does, for
  // the first prompt that fails; kCancelled once options.stop asks to stop, between prompts too.
  std::vector<PromptResult> segment_all(const ImageEmbedding& embedding, const std::vector<Prompt>& prompts,
                                        const SegmentOptions& options = {}) const;

 private:
  std::vector<PromptResult> answer(const ImageEmbedding& embedding, const std::vector<Prompt>& prompts, const SegmentOptions& options,
                                   bool across_prompts) const;

  const detail::TextDecoding* text_;  // the model's, alive as long as model_
};

}  // namespace sam3
