// What an annotator just did in Label Studio's interactive mode (`params.context.result`):
// a TextArea's text, drawn rectangles and clicked keypoints, in pixels of the task's image.
// Marks are checked here, in Label Studio's terms: an error names the context item.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sam3/interactive.h"
#include "sam3/types.h"

namespace sam3::server::label_studio {

struct ContextMark {
  size_t item = 0;       // index in context.result
  bool positive = true;  // is_positive (true or 1 when absent)
  Box box;               // rectangles; a keypoint is at (box.x0, box.y0)
};

struct InteractiveContext {
  std::string text;                     // the TextArea's first text, if any
  std::vector<ContextMark> rectangles;  // rectanglelabels
  std::vector<ContextMark> keypoints;   // keypointlabels
  std::string named_label;              // the first label a mark carries
};

// Throws ApiError(400, "invalid_context") naming "params.context.result[i]" for a mark whose
// x, y, width or height is missing, not a number or outside 0..100 (percent of the image), for
// more keypoints than one object takes, and when there is nothing to prompt with.
InteractiveContext read_interactive_context(const nlohmann::ordered_json& context, int width, int height);

// The marks as one clicked object for the interactive model (keypoints and at most one
// rectangle), or one object per rectangle when there are no keypoints. Throws ApiError(400)
// naming the item when the marks cannot be objects (several rectangles with keypoints, a
// negative rectangle, negative keypoints only).
std::vector<InteractivePrompt> clicked_objects(const InteractiveContext& context);

}  // namespace sam3::server::label_studio
