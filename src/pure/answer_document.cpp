// The answer envelope around the prompts' entries (sam3/answer_json.h), in the pure core: the
// browser module writes its answers with it too.
#include <cmath>
#include <nlohmann/json.hpp>

#include "sam3/answer_json.h"
#include "sam3/error.h"

namespace sam3 {
namespace {

using json = nlohmann::ordered_json;

json model_value(const AnswerModel& m) { return {{"layout", m.layout}, {"name", m.name}}; }

void append_image(std::string& out, const AnswerImage& image, size_t index) {
  const std::string where = "answer image " + std::to_string(index);
  if (image.path.empty() == image.image_id.empty()) {
    throw Error(ErrorCode::kInvalidArgument, where + " needs exactly one of path (the CLI) and image_id (the server, the browser)");
  }
  json head = image.path.empty() ? json{{"image_id", image.image_id}} : json{{"path", image.path}};
  head["width"] = image.width;
  head["height"] = image.height;
  std::string text = head.dump();
  text.pop_back();  // '}'
  text += ",\"prompts\":[";
  for (size_t p = 0; p < image.prompts.size(); ++p) {
    const std::string& entry = image.prompts[p];
    if (entry.size() < 2 || entry.front() != '{' || entry.back() != '}') {
      throw Error(ErrorCode::kInvalidArgument,
                  where + " prompt " + std::to_string(p) + " is not an entry's JSON object; write it with prompt_result_json & co.");
    }
    if (p) text += ',';
    text += entry;
  }
  text += "]}";
  out += text;
}

}  // namespace

double rounded_ms(double ms) { return std::round(ms * 100) / 100; }

std::string answer_json(const Answer& answer) {
  std::string out = "{\"model\":" + model_value(answer.model).dump();
  if (answer.interactive_model) out += ",\"interactive_model\":" + model_value(*answer.interactive_model).dump();
  out += ",\"images\":[";
  for (size_t i = 0; i < answer.images.size(); ++i) {
    if (i) out += ',';
    append_image(out, answer.images[i], i);
  }
  const AnswerTimings& t = answer.timings_ms;
  const json timings = {{"load", rounded_ms(t.load)},
                        {"preprocess", rounded_ms(t.preprocess)},
                        {"encode_image", rounded_ms(t.encode_image)},
                        {"encode_text", rounded_ms(t.encode_text)},
                        {"decode", rounded_ms(t.decode)},
                        {"postprocess", rounded_ms(t.postprocess)},
                        {"image_cached", t.image_cached}};
  out += "],\"timings_ms\":" + timings.dump() + "}";
  return out;
}

}  // namespace sam3
