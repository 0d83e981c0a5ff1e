// The answer to a segmentation, as JSON text: `sam3 segment --json` (and --out's result.json),
// POST /v1/segment and the browser module's answer() write this one document, and differ only
// in how an image is named (the CLI: its "path"; the server and the browser: "image_id").
//
//   {"model": {"layout", "name"},                 the model folder's name, never a path
//    "interactive_model": {"layout", "name"},     only when clicks went to a second model
//    "images": [{"path" | "image_id", "width", "height", "prompts": [entry, ...]}],
//    "timings_ms": {"load", "preprocess", "encode_image", "encode_text", "decode", "postprocess",
//                   "image_cached"}}
//
// Each entry is one of sam3/result_json.h's documents, in the mask format the caller chose.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sam3/result_json.h"

namespace sam3 {

struct AnswerModel {
  std::string layout;  // layout_name(model.layout())
  std::string name;    // the model folder's name
};

class Model;
// The model's layout and its folder's name (a trailing separator ignored), never its path.
AnswerModel answer_model(const Model& model);

struct AnswerImage {
  std::string path;      // the CLI: the image file as given; or
  std::string image_id;  // the server and the browser: the image's id (exactly one of the two is set)
  int width = 0, height = 0;
  std::vector<std::string> prompts;  // entries from prompt_result_json, object_result_json, everything_result_json
};

struct AnswerTimings {
  double load = 0, preprocess = 0, encode_image = 0, encode_text = 0, decode = 0, postprocess = 0;
  bool image_cached = false;  // the image's embedding was already there (nothing encoded for this answer)
};

struct Answer {
  AnswerModel model;
  std::optional<AnswerModel> interactive_model;
  std::vector<AnswerImage> images;
  AnswerTimings timings_ms;
};

// The answer's text; throws kInvalidArgument for an image with both or neither of path and
// image_id, or an entry that is not a JSON object's text.
std::string answer_json(const Answer& answer);

// A time in milliseconds as answers print it: to the hundredth (the clocks measure no finer; a
// double's every digit, 52.782753999999992, only hides the number).
double rounded_ms(double ms);

}  // namespace sam3
