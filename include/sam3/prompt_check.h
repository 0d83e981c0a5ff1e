// The rules prompts in pixels meet before they are decoded, which the segmenters run naming
// them as the CLI counts them ("object 1, point 2", "box 1"): a clicked object has a positive
// point or a box, its points and box lie inside the image; a concept's exemplar boxes lie inside
// the image. A front whose request names prompts its own way runs them first with those names:
// the server says "prompts[2].points[0]", the path in its JSON.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "sam3/interactive.h"
#include "sam3/types.h"

namespace sam3 {

struct InteractivePromptNames {
  std::string object;                        // "object 1", "prompts[2]"
  std::function<std::string(size_t)> point;  // point j (from 0): "object 1, point 1", "prompts[2].points[0]"
  std::string box;                           // "object 1's box", "prompts[2].box"
};

// The names of the entry `where` of a JSON prompts list (sam3/prompt_json.h): where.points[j], where.box.
InteractivePromptNames json_prompt_names(const std::string& where);

// Throws kInvalidArgument naming the object, point or box that breaks the rule.
void check_interactive_prompt(const InteractivePrompt& prompt, const InteractivePromptNames& names, int width, int height);

// Throws kInvalidArgument naming the exemplar box outside the image as `where`.boxes[j].
void check_concept_boxes(const Prompt& prompt, const std::string& where, int width, int height);

}  // namespace sam3
