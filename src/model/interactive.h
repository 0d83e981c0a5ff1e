// The interactive generation's prompts -> objects, behind Model::segment(points) and
// Model::segment_everything.
#pragma once

#include <functional>
#include <vector>

#include "model/backend.h"
#include "pure/compact_mask.h"
#include "sam3/interactive.h"

namespace sam3::detail {

using pure::CompactInstance;

// Throws kInvalidArgument when the embedding came from a model of another layout.
void check_embedding_layout(const EmbeddingData& embedding, Layout model);

// Validates every prompt (errors name the object and point), decodes objects of the same
// input shapes together and post-processes as transformers' Sam2 processor. *decoder_runs
// counts the decoder runs.
std::vector<ObjectResult> segment_objects(const Backend& backend, const EmbeddingData& image,
                                          const std::vector<InteractivePrompt>& prompts,
                                          const InteractiveOptions& options, int* decoder_runs);

// Throws kInvalidArgument when the model takes no clicks or an option is out of range.
void check_everything(const Backend& backend, const EverythingOptions& options);

struct EverythingCandidates {
  std::vector<CompactInstance> instances;  // deduplicated, best predicted IoU first
  PromptTimings timings;
};

// SAM's automatic mask generator: a grid of single positive clicks, three candidates each,
// kept when confident, present, stable and keep(box) (a crop's edge rule), deduplicated by
// box NMS; the candidates are held compact throughout (expand() gives the masks). Options'
// crop fields are not read here (pure/everything_crops.h).
EverythingCandidates segment_everything(const Backend& backend, const EmbeddingData& image, const EverythingOptions& options,
                                        int* decoder_runs, const std::function<bool(const Box&)>& keep = nullptr);

}  // namespace sam3::detail
