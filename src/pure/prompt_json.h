// The one reader of prompts sent as JSON, for every front: the server's "prompts" entries, the
// browser module's segment() options, `sam3 label --box-prompt` files. Errors are
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

}  // namespace sam3::pure
