// The interactive task: one object per click set or box, and "segment everything" (SAM's
// automatic mask generator), with SAM3's interactive (tracker) model (ModelKind::kInteractive:
// onnx-community/sam3-tracker-ONNX, vision_encoder.onnx and prompt_encoder_mask_decoder.onnx).
// As MediaPipe's InteractiveSegmenter beside its ImageSegmenter (sam3/image_segmenter.h): both
// are thin over one loaded Model and its encoder.
//
//   auto segmenter = sam3::InteractiveSegmenter::load("models/sam3-tracker");
//   const sam3::Image image = sam3::load_image("street.jpg");
//   auto embedding = segmenter.encode(image);
//   sam3::InteractivePrompt car{{{420, 310}, {455, 330, false}}, sam3::Box{380, 260, 520, 380}};
//   sam3::ObjectResult object = segmenter.segment(embedding, car);  // object.masks[0]: the best mask
//   sam3::PromptResult all = segmenter.segment_everything(embedding);
//   sam3::EverythingOptions crops;
//   crops.crop_layers = 1;                                           // small objects too: 4 crops encoded
//   sam3::PromptResult small_too = segmenter.segment_everything(image, embedding, crops);
//
// Cheap to copy (it shares the Model); thread-safe as the Model is. Prompts and options are
// in sam3/interactive.h.
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "sam3/interactive.h"
#include "sam3/model.h"
#include "sam3/segmentation_task.h"

namespace sam3 {
namespace detail {
class InteractiveDecoder;
}

class InteractiveSegmenter : public SegmentationTask {
 public:
  // Throws kModelMismatch when `model` is a text-prompted SAM3 model (use ImageSegmenter),
  // kInvalidArgument when it is null.
  explicit InteractiveSegmenter(std::shared_ptr<const Model> model);
  // Model::load, then the kind check above.
  static InteractiveSegmenter load(const std::filesystem::path& directory, const ModelOptions& options = {});

  // One object per prompt, all decoded together. Throws kInvalidArgument naming the object and
  // point for a point outside the image or not a number, an object with neither a positive
  // point nor a box, too many points or objects, an embedding of another model's layout.
  ObjectResult segment(const ImageEmbedding& embedding, const InteractivePrompt& prompt, const InteractiveOptions& options = {}) const;
  std::vector<ObjectResult> segment_objects(const ImageEmbedding& embedding, const std::vector<InteractivePrompt>& prompts,
                                            const InteractiveOptions& options = {}) const;
  // Every object in the image, as instances best first. From an embedding: the whole image's
  // grid only (crop_layers must be 0).
  PromptResult segment_everything(const ImageEmbedding& embedding, const EverythingOptions& options = {}) const;
  // With crop layers: `embedding` is this image's (the whole-image layer); each crop is
  // encoded here.
  PromptResult segment_everything(const Image& image, const ImageEmbedding& embedding, const EverythingOptions& options) const;

 private:
  const detail::InteractiveDecoder* decoder_;  // the model's, alive as long as model_
};

}  // namespace sam3
