// The JSON result schema shared by the CLI and the server:
//   {"text", "boxes": [[x0,y0,x1,y1,"pos|neg"]],
//    "instances": [{"score", "box": [x0,y0,x1,y1], "area", "mask": {"size": [H,W], "counts"}}]}
// and, for the interactive model, one entry per clicked object (object_result_json).
#pragma once

#include <nlohmann/json.hpp>

#include "sam3/interactive.h"
#include "sam3/types.h"

namespace sam3 {

nlohmann::ordered_json prompt_result_json(const PromptResult& result);
nlohmann::ordered_json box_prompts_json(const std::vector<BoxPrompt>& boxes);
nlohmann::ordered_json instances_json(const std::vector<Instance>& instances);
// A clicked object: {"points": [[x, y, "pos"|"neg"]], "box": [x0,y0,x1,y1] or null,
//  "object_score", "instances": [...]} (one instance, or three with multimask).
nlohmann::ordered_json object_result_json(const ObjectResult& result);

}  // namespace sam3
