// The JSON result document shared by the CLI, the server, `label` and the browser module: one
// entry of a response's "prompts" array, as text.
//
//   text prompt:  {"text", "boxes": [[x0,y0,x1,y1,"pos"|"neg"]], "instances": [...]}
//   clicked object: {"points": [[x,y,"pos"|"neg"]], "box": [x0,y0,x1,y1] | null,
//                    "object_score", "instances": [...]}  (one instance, or three with multimask)
//   everything:   {"everything": true, "instances": [...]}
//   an instance:  {"score", "box": [x0,y0,x1,y1], "area", "mask": {"size": [H,W], "counts"}}
//                 (the mask as COCO compressed RLE; pixel coordinates, two decimals)
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "sam3/interactive.h"
#include "sam3/types.h"

namespace sam3 {

std::string prompt_result_json(const PromptResult& result);
std::string object_result_json(const ObjectResult& result);
std::string everything_result_json(const std::vector<Instance>& instances);

}  // namespace sam3
