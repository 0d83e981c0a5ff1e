// Parsing and validating POST /v1/segment bodies.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sam3/interactive.h"
#include "sam3/result_json.h"
#include "sam3/types.h"

namespace sam3::server {

// The request's prompts in their order: concepts (text and exemplar boxes) go to the text
// model, clicked objects and "everything" to the interactive model.
struct PromptItem {
  enum Kind { kConcept, kObject, kEverything } kind = kConcept;
  size_t index = 0;          // into prompts or objects
  int points_per_side = 32;  // kEverything: the click grid
};

struct SegmentRequest {
  std::string image_id;      // either this...
  std::string inline_image;  // ...or decoded bytes of "image" (base64)
  std::vector<Prompt> prompts;
  std::vector<InteractivePrompt> objects;  // {"points": [[x, y, "pos"|"neg"]], "box": [x0, y0, x1, y1]}
  std::vector<PromptItem> order;
  bool multimask = false;
  SegmentOptions options;
  MaskJsonOptions masks;  // "mask_format", "polygon_tolerance"
};

// Throws ApiError(400) naming the offending field.
SegmentRequest parse_segment_request(const std::string& body);

}  // namespace sam3::server
