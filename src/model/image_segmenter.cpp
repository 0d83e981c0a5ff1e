// ImageSegmenter: text and exemplar boxes on a text-prompted model. The family's rules and the
// order of the runs are the pure core's (pure/generation.h, pure/text_plan.h), the sessions the
// model's TextDecoding; this executes the plan: caches the text features, counts and times.
#include "sam3/image_segmenter.h"

#include "core/timer.h"
#include "model/embedding_access.h"
#include "model/model_access.h"
#include "model/ort_tensors.h"
#include "pure/text_plan.h"
#include "runtime/run_stop.h"
#include "sam3/error.h"

namespace sam3 {
namespace {

const detail::TextDecoding& text_decoding_of(const std::shared_ptr<const Model>& model) {
  if (!model) throw Error(ErrorCode::kInvalidArgument, "ImageSegmenter needs a loaded model, got none");
  const auto* text = detail::ModelAccess::backend(*model).text();
  if (!text) {
    throw Error(ErrorCode::kModelMismatch,
                model->directory().string() +
                    " holds SAM3's interactive (tracker) model: it takes points and boxes, "
                    "not text prompts; use sam3::InteractiveSegmenter for clicks (--point X,Y or a box), or load a "
                    "text-prompted SAM3 model (e.g. the usls or samexporter export) for words and exemplar boxes");
  }
  return *text;
}

}  // namespace

ImageSegmenter::ImageSegmenter(std::shared_ptr<const Model> model) : SegmentationTask(std::move(model)), text_(&text_decoding_of(model_)) {}

ImageSegmenter ImageSegmenter::load(const std::filesystem::path& directory, const ModelOptions& options) {
  return ImageSegmenter(Model::load(directory, options));
}

PromptResult ImageSegmenter::segment(const ImageEmbedding& embedding, const Prompt& prompt, const SegmentOptions& options) const {
  return std::move(answer(embedding, {prompt}, options, false).front());
}

std::vector<PromptResult> ImageSegmenter::segment_all(const ImageEmbedding& embedding, const std::vector<Prompt>& prompts,
                                                      const SegmentOptions& options) const {
  return answer(embedding, prompts, options, true);
}

// The text plan (pure/text_plan.h) run on the model's sessions: text features from the model's
// cache when it holds the text, every run counted, timed and stoppable.
std::vector<PromptResult> ImageSegmenter::answer(const ImageEmbedding& embedding, const std::vector<Prompt>& prompts,
                                                 const SegmentOptions& options, bool across_prompts) const {
  const detail::EmbeddingData& image = detail::checked_embedding(embedding, model_->layout());
  detail::ModelState& state = detail::ModelAccess::state(*model_);
  pure::TextPlan plan(text_->generation_rules(), *detail::ModelAccess::tokenizer(*model_), prompts, options, image.width, image.height,
                      across_prompts);          // every prompt checked before anything runs
  const runtime::StopScope stop(options.stop);  // the runs obey it
  std::vector<PromptTimings> timings(prompts.size());
  std::shared_ptr<const detail::TextFeatures> features;  // the current prompt's
  while (pure::TextRun* run = plan.next()) {
    if (options.stop.stop_requested()) {
      ++state.stopped;  // a call its token ended, as counting_stops counts one ended mid-run
      throw Error(ErrorCode::kCancelled, "segmenting stopped between runs");
    }
    PromptTimings& t = timings[run->prompt];
    if (run->session == pure::TextRun::Session::kText) {
      features = state.text_cache.get(run->text_key);
      if (features) {
        t.text_cached = true;
        ++state.cache_hits;
      } else {
        const auto t0 = core::Clock::now();
        auto outputs = state.counting_stops([&] { return text_->run(*run, image, nullptr); });
        features = std::make_shared<const detail::TextFeatures>(detail::TextFeatures{std::move(outputs)});
        t.encode_text_ms = core::ms_since(t0);
        ++state.text_encodes;
        state.text_cache.put(run->text_key, features);
      }
      plan.ran(run->wants_outputs ? detail::views_of(features->values) : pure::TensorViews{});
      continue;
    }
    const bool decoder = run->session == pure::TextRun::Session::kDecoder;
    const auto t0 = core::Clock::now();
    const auto outputs = state.counting_stops([&] { return text_->run(*run, image, features.get()); });
    t.decode_ms += core::ms_since(t0);  // the geometry encoder's run counts as decoding, as the decoder's
    const auto t1 = core::Clock::now();
    plan.ran(detail::views_of(outputs));
    if (decoder) {
      ++state.decodes;
      t.postprocess_ms += core::ms_since(t1);
    }
  }
  auto results = plan.take_results();  // with the family's rule across them when asked
  for (size_t k = 0; k < results.size(); ++k) results[k].timings = timings[k];
  return results;
}

}  // namespace sam3
