// The one reader of prompts sent as JSON, for every front: the server's "prompts" entries, the
// browser module's segment() prompts and options, `sam3 label --box-prompt` files. Errors are
// kInvalidArgument and name the field path from `where`, e.g. prompts[2].boxes[0][4]. Pure:
// standard library and nlohmann-json.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sam3/interactive.h"
#include "sam3/prompt_json.h"
#include "sam3/types.h"

namespace sam3::pure {

// [x0, y0, x1, y1] or [x0, y0, x1, y1, "pos"|"neg"] (pixels).
BoxPrompt box_from_json(const nlohmann::json& j, const std::string& where);
// [x, y] or [x, y, "pos"|"neg"] (pixels).
PointPrompt point_from_json(const nlohmann::json& j, const std::string& where);
// A string, or {"text", "boxes"} (either may be missing; a null text is none). Other keys are
// the caller's (a label file's "name"). Does not check that something was given.
Prompt concept_from_json(const nlohmann::json& j, const std::string& where);
// {"points": [...], "box": [x0, y0, x1, y1]}: one clicked object for the interactive model.
InteractivePrompt object_from_json(const nlohmann::json& j, const std::string& where);

// A concept must give a text, boxes or both.
PromptEntry prompt_entry_from_json(const nlohmann::json& j, const std::string& where);

// The segment options of a request object, under the names every front uses: "threshold",
// "mask_threshold", "nms" (0 to 1), "min_area" (a whole number of pixels, 0 to 10^12),
// "max_instances" (a whole number, 0 to 10^6; 0 keeps all). Missing keys keep `defaults`' value;
// other keys are the caller's. Errors name the key under `where` ("options.min_area").
SegmentOptions segment_options_from_json(const nlohmann::json& j, const std::string& where, const SegmentOptions& defaults = {});

}  // namespace sam3::pure
