// What a text prompt must be before any model runs, for every generation: options in range,
// boxes inside the image, a text or boxes, and the text SAM3 uses for a box-only prompt.
#pragma once

#include <string>
#include <vector>

#include "sam3/types.h"

namespace sam3::pure {

// Throw kInvalidArgument saying which value is wrong and what it must be.
void check_options(const SegmentOptions& options);
void check_boxes(const std::vector<BoxPrompt>& boxes, int width, int height);
// Both checks plus "empty prompt" (no text and no boxes); returns the text to encode: the
// prompt's, or "visual" for a box-only prompt (SAM3's).
std::string checked_prompt_text(const Prompt& prompt, const SegmentOptions& options, int width, int height);

}  // namespace sam3::pure
