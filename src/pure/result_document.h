// The result document written as text, for every writer of it: the public sam3/result_json.h and
// sam3/answer_json.h, and the browser module (which links the pure core alone, so the mask's
// encoding comes in as a writer: COCO RLE here, PNG and polygons in mask_json.cpp). Masks go
// straight to text: a JSON tree costs 16 bytes and more per polygon point.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sam3/interactive.h"
#include "sam3/types.h"

namespace sam3::pure {

// Appends one mask's JSON object ({"size": [H, W], ...}) to `out`.
using MaskWriter = std::function<void(std::string& out, const Mask& mask)>;

// {"size": [H, W], "counts": "<COCO compressed RLE>"}.
void append_rle_mask(std::string& out, const Mask& mask);

// [[x0, y0, x1, y1, "pos"|"neg"], ...], two decimals (label records name their prompts' boxes so).
nlohmann::ordered_json box_prompts_value(const std::vector<BoxPrompt>& boxes);

// One entry of an image's "prompts", as the text nlohmann's dump() gives for the same tree.
std::string prompt_result_text(const PromptResult& result, const MaskWriter& mask);
std::string object_result_text(const ObjectResult& result, const MaskWriter& mask);
std::string everything_result_text(const std::vector<Instance>& instances, const MaskWriter& mask);

}  // namespace sam3::pure
