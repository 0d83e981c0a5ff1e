// The result document as JSON values, for the library's own writers (label records); the
// public sam3/result_json.h gives the same documents as text.
#pragma once

#include <nlohmann/json.hpp>

#include "sam3/interactive.h"
#include "sam3/types.h"

namespace sam3::detail {

nlohmann::ordered_json box_prompts_value(const std::vector<BoxPrompt>& boxes);
nlohmann::ordered_json instances_value(const std::vector<Instance>& instances);
nlohmann::ordered_json prompt_result_value(const PromptResult& result);
nlohmann::ordered_json object_result_value(const ObjectResult& result);
nlohmann::ordered_json everything_result_value(const std::vector<Instance>& instances);

}  // namespace sam3::detail
