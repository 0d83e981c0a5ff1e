// InteractiveSegmenter: clicks, boxes of one object and "segment everything" on SAM3's
// interactive (tracker) model. The rules are the pure core's (pure/tracker.h, everything_crops.h)
// run by the model's InteractiveDecoder (model/interactive.cpp); this adds the crop layers,
// which encode crops with the shared encoder, and counts.
#include "sam3/interactive_segmenter.h"

#include <algorithm>

#include "model/embedding_access.h"
#include "model/interactive.h"
#include "model/model_access.h"
#include "pure/everything_crops.h"
#include "runtime/run_stop.h"
#include "sam3/error.h"

namespace sam3 {
namespace {

const detail::InteractiveDecoder& decoder_of(const std::shared_ptr<const Model>& model) {
  if (!model) throw Error(ErrorCode::kInvalidArgument, "InteractiveSegmenter needs a loaded model, got none");
  const auto* decoder = detail::ModelAccess::backend(*model).interactive();
  if (!decoder) {
    throw Error(ErrorCode::kModelMismatch,
                model->directory().string() + " holds a text-prompted SAM3 model (" + layout_name(model->layout()) +
                    "): it takes text and exemplar boxes, not clicks; use sam3::ImageSegmenter for those, or load "
                    "SAM3's interactive model for points, boxes of one object and \"segment everything\" "
                    "(onnx-community/sam3-tracker-ONNX: vision_encoder.onnx and prompt_encoder_mask_decoder.onnx)");
  }
  return *decoder;
}

}  // namespace

InteractiveSegmenter::InteractiveSegmenter(std::shared_ptr<const Model> model)
    : SegmentationTask(std::move(model)), decoder_(&decoder_of(model_)) {}

InteractiveSegmenter InteractiveSegmenter::load(const std::filesystem::path& directory, const ModelOptions& options) {
  return InteractiveSegmenter(Model::load(directory, options));
}

std::vector<ObjectResult> InteractiveSegmenter::segment_objects(const ImageEmbedding& embedding,
                                                                const std::vector<InteractivePrompt>& prompts,
                                                                const InteractiveOptions& options) const {
  const detail::EmbeddingData& image = detail::checked_embedding(embedding, model_->layout());
  detail::ModelState& state = detail::ModelAccess::state(*model_);
  int runs = 0;
  const runtime::StopScope stop(options.stop);
  auto results = state.counting_stops([&] { return detail::segment_objects(*decoder_, image, prompts, options, &runs); });
  state.decodes += runs;
  return results;
}

ObjectResult InteractiveSegmenter::segment(const ImageEmbedding& embedding, const InteractivePrompt& prompt,
                                           const InteractiveOptions& options) const {
  return std::move(segment_objects(embedding, std::vector<InteractivePrompt>{prompt}, options).front());
}

PromptResult InteractiveSegmenter::segment_everything(const ImageEmbedding& embedding, const EverythingOptions& options) const {
  const detail::EmbeddingData& image = detail::checked_embedding(embedding, model_->layout());
  if (options.crop_layers != 0) {
    throw Error(ErrorCode::kInvalidArgument,
                "crop layers encode crops of the image: call segment_everything(image, "
                "embedding, options), or set crop_layers to 0");
  }
  detail::ModelState& state = detail::ModelAccess::state(*model_);
  int runs = 0;
  const runtime::StopScope stop(options.stop);
  auto found = state.counting_stops([&] { return detail::segment_everything(*decoder_, image, options, &runs); });
  state.decodes += runs;
  PromptResult result;
  result.timings = found.timings;
  result.instances = pure::expand(found.instances);  // the survivors' full masks, at last
  return result;
}

PromptResult InteractiveSegmenter::segment_everything(const Image& image, const ImageEmbedding& embedding,
                                                      const EverythingOptions& options) const {
  EverythingOptions whole = options;
  whole.crop_layers = 0;
  if (options.crop_layers == 0) return segment_everything(embedding, whole);
  if (embedding.empty() || embedding.width() != image.width || embedding.height() != image.height) {
    throw Error(ErrorCode::kInvalidArgument,
                "the embedding given with the image is not this image's: encode the image "
                "and pass both");
  }
  detail::checked_embedding(embedding, model_->layout());
  if (const auto encoded = detail::EmbeddingAccess::data(embedding)->pixels_hash; encoded != 0 && encoded != detail::pixels_hash(image)) {
    throw Error(ErrorCode::kInvalidArgument,
                "the image given with the embedding is not the one it was encoded from (same size, other pixels): its crops "
                "would be mixed with another image's objects; encode this image and pass both");
  }
  pure::Tracker::check_everything_options(options);  // before any crop is encoded
  detail::ModelState& state = detail::ModelAccess::state(*model_);
  PromptResult result;
  std::vector<std::pair<pure::EverythingCrop, std::vector<pure::CompactInstance>>> per_crop;
  for (const auto& crop : pure::everything_crops(image.width, image.height, options.crop_layers, options.crop_overlap_ratio)) {
    EverythingOptions layer = whole;
    for (int i = 0; i < crop.layer; ++i) layer.points_per_side = std::max(1, layer.points_per_side / options.crop_points_downscale);
    const bool whole_image = crop.layer == 0;
    const ImageEmbedding crop_embedding = whole_image ? embedding : encode(crop_image(image, crop.window), {options.stop});
    int runs = 0;
    const runtime::StopScope stop(options.stop);
    detail::EverythingCandidates part = state.counting_stops([&] {
      return detail::segment_everything(*decoder_, *detail::EmbeddingAccess::data(crop_embedding), layer, &runs, [&](const Box& box) {
        if (whole_image) return true;
        const Box in_image{box.x0 + crop.window.x0, box.y0 + crop.window.y0, box.x1 + crop.window.x0, box.y1 + crop.window.y0};
        return !pure::cut_by_crop(in_image, crop.window, image.width, image.height);
      });
    });
    state.decodes += runs;
    result.timings.decode_ms += part.timings.decode_ms;
    result.timings.postprocess_ms += part.timings.postprocess_ms;
    pure::move_into_image(part.instances, crop.window, image.width, image.height);
    per_crop.emplace_back(crop, std::move(part.instances));
  }
  result.instances = pure::expand(pure::merge_crops(std::move(per_crop), options.crop_nms_threshold));
  return result;
}

}  // namespace sam3
