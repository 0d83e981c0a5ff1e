// What a text prompt must be before any model runs, for every generation: options in range,
// boxes inside the image, a text or boxes, and the text SAM3 uses for a box-only prompt.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sam3/types.h"

namespace sam3::pure {

// The place rule of every prompt given in a picture's pixels (text prompts' exemplar boxes, clicks,
// video prompts, map exemplars): a point lies in [0, width] x [0, height]; a box has x0 < x1 and
// y0 < y1 and lies inside too (NaN fails both). Each returns "" when the rule holds, else the
// refusal, starting with `name` ("box 2", "object 1, point 1"); `picture` names what the pixels
// are of ("image", "frames", a file's name).
// A number as a message prints it: 999.5, not 999.500000.
std::string number(float v);
std::string point_refusal(const std::string& name, float x, float y, int width, int height, const std::string& picture);
std::string box_refusal(const std::string& name, const Box& box, int width, int height, const std::string& picture);

// Throw kInvalidArgument saying which value is wrong and what it must be.
void check_options(const SegmentOptions& options);
// Boxes are named "box 1", "box 2", ... unless `name(i)` names box i (from 0).
void check_boxes(const std::vector<BoxPrompt>& boxes, int width, int height, const std::function<std::string(size_t)>& name = {});
// Both checks plus "empty prompt" (no text and no boxes); returns the text to encode: the
// prompt's, or "visual" for a box-only prompt (SAM3's).
std::string checked_prompt_text(const Prompt& prompt, const SegmentOptions& options, int width, int height);

}  // namespace sam3::pure
