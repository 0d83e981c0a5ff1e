// ImageSegmenter: text and exemplar boxes on a text-prompted model. The family's rules are the
// pure core's (pure/generation.h) run by the model's TextDecoding; this caches the text
// features, counts and times.
#include "sam3/image_segmenter.h"

#include "core/timer.h"
#include "model/embedding_access.h"
#include "model/model_access.h"
#include "predictor/postprocess.h"
#include "pure/prompt_rules.h"
#include "runtime/run_stop.h"
#include "sam3/error.h"

namespace sam3 {
namespace {

const detail::TextDecoding& text_decoding_of(const std::shared_ptr<const Model>& model) {
  if (!model) throw Error(ErrorCode::kInvalidArgument, "ImageSegmenter needs a loaded model, got none");
  const auto* text = detail::ModelAccess::backend(*model).text();
  if (!text) {
    throw Error(ErrorCode::kModelMismatch,
                model->directory().string() + " holds SAM3's interactive (tracker) model: it takes points and boxes, "
                "not text prompts; use sam3::InteractiveSegmenter for clicks (--point X,Y or a box), or load a "
                "text-prompted SAM3 model (e.g. the usls or samexporter export) for words and exemplar boxes");
  }
  return *text;
}

}  // namespace

ImageSegmenter::ImageSegmenter(std::shared_ptr<const Model> model)
    : SegmentationTask(std::move(model)), text_(&text_decoding_of(model_)) {}

ImageSegmenter ImageSegmenter::load(const std::filesystem::path& directory, const ModelOptions& options) {
  return ImageSegmenter(Model::load(directory, options));
}

PromptResult ImageSegmenter::segment(const ImageEmbedding& embedding, const Prompt& prompt,
                                     const SegmentOptions& options) const {
  const detail::EmbeddingData& image = detail::checked_embedding(embedding, model_->layout());
  const std::string text = pure::checked_prompt_text(prompt, options, embedding.width(), embedding.height());
  detail::ModelState& state = detail::ModelAccess::state(*model_);
  PromptResult result;
  result.prompt = prompt;
  const rt::StopScope stop(options.stop);  // the text encode and the decode obey it

  auto features = state.text_cache.get(text);
  if (features) {
    result.timings.text_cached = true;
    ++state.cache_hits;
  } else {
    const auto t0 = Clock::now();
    const TokenizedText tokens = detail::ModelAccess::tokenizer(*model_)->encode(text);
    features = std::make_shared<detail::TextFeatures>(state.counting_stops([&] { return text_->encode_text(tokens); }));
    result.timings.encode_text_ms = ms_since(t0);
    ++state.text_encodes;
    state.text_cache.put(text, features);
  }
  result.instances = state.counting_stops([&] { return text_->decode(image, *features, prompt.boxes, options, result.timings); });
  ++state.decodes;
  const auto t1 = Clock::now();
  finalize_instances(result.instances, options);
  result.timings.postprocess_ms += ms_since(t1);
  return result;
}

std::vector<PromptResult> ImageSegmenter::segment_all(const ImageEmbedding& embedding, const std::vector<Prompt>& prompts,
                                                      const SegmentOptions& options) const {
  std::vector<PromptResult> results;
  results.reserve(prompts.size());
  for (const auto& prompt : prompts) {
    if (options.stop.stop_requested()) throw Error(ErrorCode::kCancelled, "segmenting stopped between prompts");
    results.push_back(segment(embedding, prompt, options));
  }
  text_->suppress_across_prompts(results);  // the family's rule over the image's prompts
  return results;
}

}  // namespace sam3
