// The JSON result document shared by the CLI, the server, `label` and the browser module: one
// entry of an answer's "prompts" array, as text (sam3/answer_json.h puts entries in the answer).
//
//   text prompt:  {"text", "boxes": [[x0,y0,x1,y1,"pos"|"neg"]], "instances": [...]}
//   clicked object: {"points": [[x,y,"pos"|"neg"]], "box": [x0,y0,x1,y1] | null,
//                    "object_score", "instances": [...]}  (one instance, or three with multimask)
//   everything:   {"everything": true, "instances": [...]}
//   an instance:  {"score", "box": [x0,y0,x1,y1], "area", "mask"}  (pixel coordinates, two decimals)
//   a mask:       {"size": [H,W], "counts"}             COCO compressed RLE (pycocotools' string)
//                 {"size": [H,W], "png"}                base64 of an 8-bit PNG, 0 and 255
//                 {"size": [H,W], "polygons", "holes"}  outer rings and holes as flat [x,y,x,y,...]
//                                                       lists of boundary pixel centres
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sam3/interactive.h"
#include "sam3/types.h"

namespace sam3 {

enum class MaskFormat { kRle, kPng, kPolygon };

// "rle", "png" or "polygon" (the server's "mask_format", the CLI's --mask-format); nullopt otherwise.
std::optional<MaskFormat> mask_format_named(std::string_view name);
const char* mask_format_name(MaskFormat format);

struct MaskJsonOptions {
  MaskFormat format = MaskFormat::kRle;
  // kPolygon: Douglas-Peucker tolerance in pixels, 0 to kMaxPolygonTolerance; 0 keeps every boundary pixel.
  double polygon_tolerance = 1.0;
};
inline constexpr double kMaxPolygonTolerance = 100.0;

// One mask's object; throws kInvalidArgument for a polygon tolerance out of range.
std::string mask_json(const Mask& mask, const MaskJsonOptions& options = {});

std::string prompt_result_json(const PromptResult& result, const MaskJsonOptions& masks = {});
std::string object_result_json(const ObjectResult& result, const MaskJsonOptions& masks = {});
std::string everything_result_json(const std::vector<Instance>& instances, const MaskJsonOptions& masks = {});

}  // namespace sam3
