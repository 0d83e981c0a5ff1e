// What the two task facades share (sam3/image_segmenter.h, sam3/interactive_segmenter.h): the
// loaded Model and its image encoder, so that one embedding serves every prompt of its task.
#pragma once

#include <memory>

#include "sam3/model.h"

namespace sam3 {

class SegmentationTask {
 public:
  const Model& model() const noexcept { return *model_; }
  const std::shared_ptr<const Model>& shared_model() const noexcept { return model_; }

  // The model's encoder (Model::prepare / Model::encode).
  PreparedImage prepare(const Image& image) const { return model_->prepare(image); }
  ImageEmbedding encode(const Image& image, const EncodeOptions& options = {}) const { return model_->encode(image, options); }
  ImageEmbedding encode(PreparedImage prepared, const EncodeOptions& options = {}) const {
    return model_->encode(std::move(prepared), options);
  }

 protected:
  explicit SegmentationTask(std::shared_ptr<const Model> model) : model_(std::move(model)) {}
  std::shared_ptr<const Model> model_;  // a facade's constructor refuses a null one
};

}  // namespace sam3
