// The interactive generation's prompts -> objects, behind InteractiveSegmenter (the caller
// checks that the embedding is the model's).
#pragma once

#include <functional>
#include <vector>

#include "model/backend.h"
#include "pure/compact_mask.h"
#include "sam3/interactive.h"

namespace sam3::detail {

using pure::CompactInstance;

// Validates every prompt (errors name the object and point), decodes objects of the same
// input shapes together and post-processes as transformers' Sam2 processor. *decoder_runs
// counts the decoder runs.
std::vector<ObjectResult> segment_objects(const InteractiveDecoder& decoder, const EmbeddingData& image,
                                          const std::vector<InteractivePrompt>& prompts, const InteractiveOptions& options,
                                          int* decoder_runs);

struct EverythingCandidates {
  std::vector<CompactInstance> instances;  // deduplicated, best predicted IoU first
  PromptTimings timings;
};

// SAM's automatic mask generator: a grid of single positive clicks, three candidates each,
// kept when confident, present, stable and keep(box) (a crop's edge rule), deduplicated by
// box NMS; the candidates are held compact throughout (expand() gives the masks). Options'
// crop fields are not read here (pure/everything_crops.h).
EverythingCandidates segment_everything(const InteractiveDecoder& decoder, const EmbeddingData& image, const EverythingOptions& options,
                                        int* decoder_runs, const std::function<bool(const Box&)>& keep = nullptr);

}  // namespace sam3::detail
