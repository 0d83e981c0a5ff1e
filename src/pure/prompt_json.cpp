#include "pure/prompt_json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <type_traits>

#include "sam3/error.h"

namespace sam3::pure {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& message) { throw Error(ErrorCode::kInvalidArgument, message); }

float coordinate(const json& j, size_t k, const std::string& where) {
  if (!j[k].is_number()) bad(where + "[" + std::to_string(k) + "] must be a number (pixels), got " + j[k].dump());
  return j[k].get<float>();
}

bool polarity(const json& j, const std::string& where) {
  const auto p = j.is_string() ? parse_polarity(j.get<std::string>()) : std::nullopt;
  if (!p) bad(where + " must be \"pos\" or \"neg\", got " + j.dump());
  return *p;
}

// A number of `where` in [lo, hi]; whole when asked (a JSON 100.0 is whole, 1.5 is not).
double number_in(const json& j, const std::string& where, double lo, double hi, bool whole) {
  if (!j.is_number()) bad(where + " must be a number, got " + j.dump());
  const double v = j.get<double>();
  if (whole && std::floor(v) != v) bad(where + " must be a whole number, got " + j.dump());
  if (!(v >= lo && v <= hi)) {
    char range[64];
    std::snprintf(range, sizeof range, " must be between %g and %g, got ", lo, hi);
    bad(where + range + j.dump());
  }
  return v;
}

// A key `j` does not take is refused, naming it, where it was and the keys that are known: a
// misspelled "treshold" or "bozes" would otherwise be dropped and the request answered without it.
void refuse_unknown_keys(const json& j, const std::string& where, std::initializer_list<const char*> known, const std::string& what,
                         const std::string& also = "") {
  for (const auto& item : j.items()) {
    const std::string& key = item.key();  // not a structured binding: clang 14 (emscripten's) cannot capture one
    if (std::find_if(known.begin(), known.end(), [&](const char* k) { return key == k; }) != known.end()) continue;
    std::string names;
    for (const char* k : known) names += std::string(names.empty() ? "" : ", ") + "\"" + k + "\"";
    bad(where + " has an unknown key " + json(key).dump() + "; the keys of " + what + " are " + names + also);
  }
}

}  // namespace

BoxPrompt box_from_json(const json& j, const std::string& where) {
  if (!j.is_array() || (j.size() != 4 && j.size() != 5)) bad(where + " must be [x0, y0, x1, y1] or [x0, y0, x1, y1, \"pos\"|\"neg\"]");
  BoxPrompt box{{coordinate(j, 0, where), coordinate(j, 1, where), coordinate(j, 2, where), coordinate(j, 3, where)}, true};
  if (j.size() == 5) box.positive = polarity(j[4], where + "[4]");
  return box;
}

PointPrompt point_from_json(const json& j, const std::string& where) {
  if (!j.is_array() || (j.size() != 2 && j.size() != 3)) bad(where + " must be [x, y] or [x, y, \"pos\"|\"neg\"]");
  PointPrompt point{coordinate(j, 0, where), coordinate(j, 1, where), true};
  if (j.size() == 3) point.positive = polarity(j[2], where + "[2]");
  return point;
}

Prompt concept_from_json(const json& j, const std::string& where) {
  Prompt prompt;
  if (j.is_string()) {
    prompt.text = j.get<std::string>();
    return prompt;
  }
  if (!j.is_object()) bad(where + " must be a string or {\"text\", \"boxes\"}");
  refuse_unknown_keys(j, where, {"text", "boxes"}, "a concept", " (a clicked object's: \"points\", \"box\")");
  if (j.contains("text") && !j["text"].is_null()) {
    if (!j["text"].is_string()) bad(where + ".text must be a string");
    prompt.text = j["text"].get<std::string>();
  }
  if (j.contains("boxes") && !j["boxes"].is_null()) {
    if (!j["boxes"].is_array()) bad(where + ".boxes must be a list");
    for (size_t i = 0; i < j["boxes"].size(); ++i) {
      prompt.boxes.push_back(box_from_json(j["boxes"][i], where + ".boxes[" + std::to_string(i) + "]"));
    }
  }
  return prompt;
}

InteractivePrompt object_from_json(const json& j, const std::string& where) {
  InteractivePrompt object;
  if (j.contains("text") || j.contains("boxes")) {
    bad(where + " mixes a concept (text, boxes) with a clicked object (points, box); send them as two prompts");
  }
  refuse_unknown_keys(j, where, {"points", "box"}, "a clicked object");
  if (j.contains("points")) {
    if (!j["points"].is_array()) bad(where + ".points must be a list of [x, y, \"pos\"|\"neg\"]");
    if (j["points"].size() > static_cast<size_t>(kMaxPointsPerObject)) {
      bad(where + " has " + std::to_string(j["points"].size()) + " points; at most " + std::to_string(kMaxPointsPerObject));
    }
    for (size_t i = 0; i < j["points"].size(); ++i) {
      object.points.push_back(point_from_json(j["points"][i], where + ".points[" + std::to_string(i) + "]"));
    }
  }
  if (object.points.empty() && !(j.contains("box") && !j["box"].is_null())) {  // its own message, not "negative points only"
    bad(where + (j.contains("points") ? ".points is empty" : " has no \"points\" and no \"box\"") +
        ": give at least one click [x, y] on the object, or a \"box\" around it");
  }
  if (j.contains("box") && !j["box"].is_null()) {
    const auto& b = j["box"];
    if (!b.is_array() || b.size() != 4) bad(where + ".box must be [x0, y0, x1, y1] (pixels)");
    object.box = Box{coordinate(b, 0, where + ".box"), coordinate(b, 1, where + ".box"), coordinate(b, 2, where + ".box"),
                     coordinate(b, 3, where + ".box")};
  }
  return object;
}

PromptEntry prompt_entry_from_json(const json& j, const std::string& where) {
  PromptEntry e;
  if (j.is_object() && j.contains("everything")) {
    if (j["everything"] != true || j.size() > 2 || (j.size() == 2 && !j.contains("points_per_side"))) {
      bad(where + " must be {\"everything\": true} with at most \"points_per_side\"");
    }
    e.kind = PromptEntry::Kind::kEverything;
    if (j.contains("points_per_side")) {
      const auto& s = j["points_per_side"];
      if (!s.is_number()) bad(where + ".points_per_side must be a number");
      const double v = s.get<double>();
      if (!(v >= 1 && v <= 256)) bad(where + ".points_per_side must be between 1 and 256");
      if (v != std::floor(v)) bad(where + ".points_per_side must be a whole number");
      e.points_per_side = static_cast<int>(v);
    }
    return e;
  }
  if (j.is_object() && (j.contains("points") || j.contains("box"))) {
    e.kind = PromptEntry::Kind::kObject;
    e.object = object_from_json(j, where);
    return e;
  }
  e.prompt = concept_from_json(j, where);
  if (e.prompt.text.find_first_not_of(" \t\r\n") == std::string::npos && e.prompt.boxes.empty()) {
    bad(where + " is empty: give a text, boxes, or both");
  }
  return e;
}

SegmentOptions segment_options_from_json(const json& j, const std::string& where, const SegmentOptions& defaults) {
  if (!j.is_object()) bad((where.empty() ? "the options" : where) + " must be an object");
  refuse_unknown_keys(j, where.empty() ? "the options" : where, {"threshold", "mask_threshold", "nms", "min_area", "max_instances"},
                      "segment options");
  const std::string prefix = where.empty() ? "" : where + ".";
  SegmentOptions o = defaults;
  const auto read = [&](const char* key, double lo, double hi, bool whole, auto& field) {
    if (j.contains(key)) field = static_cast<std::remove_reference_t<decltype(field)>>(number_in(j[key], prefix + key, lo, hi, whole));
  };
  read("threshold", 0, 1, false, o.score_threshold);
  read("mask_threshold", 0, 1, false, o.mask_threshold);
  read("nms", 0, 1, false, o.nms_iou);
  read("min_area", 0, static_cast<double>(kMaxMinArea), true, o.min_area);
  read("max_instances", 0, kMaxMaxInstances, true, o.max_instances);
  return o;
}

}  // namespace sam3::pure

namespace sam3 {

std::vector<PromptEntry> parse_prompts_json(std::string_view text, const std::string& where) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw Error(ErrorCode::kInvalidArgument, where + " is not valid JSON");
  if (!j.is_array()) throw Error(ErrorCode::kInvalidArgument, where + " must be a list");
  std::vector<PromptEntry> out;
  for (size_t i = 0; i < j.size(); ++i) out.push_back(pure::prompt_entry_from_json(j[i], where + "[" + std::to_string(i) + "]"));
  return out;
}

SegmentOptions parse_segment_options_json(std::string_view text, const std::string& where, const SegmentOptions& defaults) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw Error(ErrorCode::kInvalidArgument, (where.empty() ? "the options" : where) + " are not valid JSON");
  return pure::segment_options_from_json(j, where, defaults);
}

}  // namespace sam3
