// The JSON result schema shared by the CLI and the server:
//   {"text", "boxes": [[x0,y0,x1,y1,"pos|neg"]],
//    "instances": [{"score", "box": [x0,y0,x1,y1], "area", "mask": {"size": [H,W], "counts"}}]}
#pragma once

#include <nlohmann/json.hpp>

#include "sam3/types.h"

namespace sam3 {

nlohmann::ordered_json prompt_result_json(const PromptResult& result);
nlohmann::ordered_json box_prompts_json(const std::vector<BoxPrompt>& boxes);

}  // namespace sam3
