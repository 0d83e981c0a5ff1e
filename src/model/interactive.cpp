// Points and boxes -> one object each on the interactive generation, and "segment everything"
// (SAM's automatic mask generator) on top of it: the pure core's rules (pure/tracker.h) with
// the decoder run on ONNX Runtime, timed and counted. InteractiveSegmenter's engine.
#include <functional>
#include <string>

#include "core/timer.h"
#include "model/backend.h"
#include "model/interactive.h"

namespace sam3::detail {

std::vector<ObjectResult> segment_objects(const InteractiveDecoder& decoder, const EmbeddingData& image,
                                          const std::vector<InteractivePrompt>& prompts, const InteractiveOptions& options,
                                          int* decoder_runs) {
  const pure::Tracker& tracker = decoder.tracker();
  std::vector<ObjectResult> results(prompts.size());
  ObjectTimings timings;
  for (const pure::TrackerRun& run : tracker.object_runs(prompts, image.width, image.height)) {
    const auto t0 = core::Clock::now();
    const DecodedObjects d = decoder.decode_objects(image, run.batch);
    if (decoder_runs) ++*decoder_runs;
    timings.decode_ms += core::ms_since(t0);
    const auto t1 = core::Clock::now();
    tracker.object_results(d, run, prompts, options, image.width, image.height, results);
    timings.postprocess_ms += core::ms_since(t1);
  }
  for (auto& r : results) r.timings = timings;
  return results;
}

EverythingCandidates segment_everything(const InteractiveDecoder& decoder, const EmbeddingData& image, const EverythingOptions& options,
                                        int* decoder_runs, const std::function<bool(const Box&)>& keep) {
  const pure::Tracker& tracker = decoder.tracker();
  EverythingCandidates result;
  // Compact until the deduplication: a full mask per candidate was the image's size each.
  std::vector<CompactInstance> candidates;
  for (const ObjectBatch& batch : tracker.everything_runs(options, image.width, image.height)) {
    const auto t0 = core::Clock::now();
    const DecodedObjects d = decoder.decode_objects(image, batch);
    if (decoder_runs) ++*decoder_runs;
    result.timings.decode_ms += core::ms_since(t0);
    const auto t1 = core::Clock::now();
    auto kept = tracker.everything_candidates(d, options, image.width, image.height, keep);
    for (auto& c : kept) candidates.push_back(std::move(c));
    result.timings.postprocess_ms += core::ms_since(t1);
  }
  const auto t2 = core::Clock::now();
  result.instances = pure::Tracker::deduplicate(std::move(candidates), options.box_nms_threshold);
  result.timings.postprocess_ms += core::ms_since(t2);
  return result;
}

}  // namespace sam3::detail
