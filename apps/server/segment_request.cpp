#include "segment_request.h"

#include <nlohmann/json.hpp>

#include "api_error.h"
#include "base64.h"
#include "request_json.h"

namespace sam3::server {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& message) { throw ApiError(400, "invalid_request", message); }

float number_in(const json& j, const char* key, float lo, float hi, float fallback) {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_number()) bad(std::string("\"") + key + "\" must be a number");
  const float v = j[key].get<float>();
  if (!(v >= lo && v <= hi)) bad(std::string("\"") + key + "\" must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  return v;
}

BoxPrompt parse_box(const json& b, size_t p, size_t i) {
  const std::string where = "prompts[" + std::to_string(p) + "].boxes[" + std::to_string(i) + "]";
  if (!b.is_array() || (b.size() != 4 && b.size() != 5)) bad(where + " must be [x0, y0, x1, y1] or [x0, y0, x1, y1, \"pos\"|\"neg\"]");
  float v[4];
  for (size_t k = 0; k < 4; ++k) {
    if (!b[k].is_number()) bad(where + " coordinates must be numbers (pixels)");
    v[k] = b[k].get<float>();
  }
  BoxPrompt box{{v[0], v[1], v[2], v[3]}, true};
  if (b.size() == 5) {
    const auto polarity = b[4].is_string() ? parse_polarity(b[4].get<std::string>()) : std::nullopt;
    if (!polarity) bad(where + "[4] must be \"pos\" or \"neg\"");
    box.positive = *polarity;
  }
  return box;
}

PointPrompt parse_point(const json& p, size_t prompt, size_t i) {
  const std::string where = "prompts[" + std::to_string(prompt) + "].points[" + std::to_string(i) + "]";
  if (!p.is_array() || (p.size() != 2 && p.size() != 3)) bad(where + " must be [x, y] or [x, y, \"pos\"|\"neg\"]");
  if (!p[0].is_number() || !p[1].is_number()) bad(where + " coordinates must be numbers (pixels)");
  PointPrompt point{p[0].get<float>(), p[1].get<float>(), true};
  if (p.size() == 3) {
    const auto polarity = p[2].is_string() ? parse_polarity(p[2].get<std::string>()) : std::nullopt;
    if (!polarity) bad(where + "[2] must be \"pos\" or \"neg\"");
    point.positive = *polarity;
  }
  return point;
}

// {"points": [...], "box": [...]}: one clicked object for the interactive model.
InteractivePrompt parse_object(const json& pj, size_t p) {
  const std::string where = "prompts[" + std::to_string(p) + "]";
  InteractivePrompt object;
  if (pj.contains("points")) {
    if (!pj["points"].is_array()) bad(where + ".points must be a list of [x, y, \"pos\"|\"neg\"]");
    if (pj["points"].size() > static_cast<size_t>(kMaxPointsPerObject)) {
      bad(where + " has " + std::to_string(pj["points"].size()) + " points; at most " + std::to_string(kMaxPointsPerObject));
    }
    for (size_t i = 0; i < pj["points"].size(); ++i) object.points.push_back(parse_point(pj["points"][i], p, i));
  }
  if (pj.contains("box") && !pj["box"].is_null()) {
    const auto& b = pj["box"];
    if (!b.is_array() || b.size() != 4) bad(where + ".box must be [x0, y0, x1, y1] (pixels)");
    float v[4];
    for (size_t k = 0; k < 4; ++k) {
      if (!b[k].is_number()) bad(where + ".box coordinates must be numbers (pixels)");
      v[k] = b[k].get<float>();
    }
    object.box = Box{v[0], v[1], v[2], v[3]};
  }
  if (pj.contains("text") || pj.contains("boxes")) {
    bad(where + " mixes a concept (text, boxes) with a clicked object (points, box); send them as two prompts");
  }
  return object;
}

}  // namespace

SegmentRequest parse_segment_request(const std::string& body) {
  const json j = parse_request_json<json>(body);
  if (j.is_discarded()) throw ApiError(400, "invalid_json", "the body is not valid JSON");
  if (!j.is_object()) bad("the body must be a JSON object");
  SegmentRequest r;
  if (j.contains("image_id")) {
    if (!j["image_id"].is_string()) bad("\"image_id\" must be a string");
    r.image_id = j["image_id"].get<std::string>();
    if (r.image_id.empty()) bad("\"image_id\" is empty; use the id returned by POST /v1/images");
  } else if (j.contains("image")) {
    if (!j["image"].is_string()) bad("\"image\" must be a base64 string");
    auto bytes = base64_decode(j["image"].get_ref<const std::string&>());  // not copied first
    if (!bytes) bad("\"image\" is not valid base64");
    if (bytes->empty()) bad("\"image\" is empty; send the image file's bytes in base64");
    r.inline_image = std::move(*bytes);
  } else {
    bad("give \"image_id\" (from POST /v1/images) or \"image\" (base64)");
  }
  if (!j.contains("prompts") || !j["prompts"].is_array() || j["prompts"].empty()) {
    bad("\"prompts\" must be a non-empty list of {\"text\", \"boxes\"} or {\"points\", \"box\"}");
  }
  for (size_t p = 0; p < j["prompts"].size(); ++p) {
    const auto& pj = j["prompts"][p];
    Prompt prompt;
    if (pj.is_string()) {
      prompt.text = pj.get<std::string>();
    } else if (pj.is_object() && pj.contains("everything")) {
      const std::string where = "prompts[" + std::to_string(p) + "]";
      if (pj["everything"] != true || pj.size() > 2 || (pj.size() == 2 && !pj.contains("points_per_side"))) {
        bad(where + " must be {\"everything\": true} with at most \"points_per_side\"");
      }
      const int side = static_cast<int>(number_in(pj, "points_per_side", 1.f, 256.f, 32.f));
      if (side != number_in(pj, "points_per_side", 1.f, 256.f, 32.f)) bad(where + ".points_per_side must be a whole number");
      r.order.push_back({PromptItem::kEverything, 0, side});
      continue;
    } else if (pj.is_object() && (pj.contains("points") || pj.contains("box"))) {
      r.order.push_back({PromptItem::kObject, r.objects.size()});
      r.objects.push_back(parse_object(pj, p));
      continue;
    } else if (pj.is_object()) {
      if (pj.contains("text")) {
        if (!pj["text"].is_string()) bad("prompts[" + std::to_string(p) + "].text must be a string");
        prompt.text = pj["text"].get<std::string>();
      }
      if (pj.contains("boxes")) {
        if (!pj["boxes"].is_array()) bad("prompts[" + std::to_string(p) + "].boxes must be a list");
        for (size_t i = 0; i < pj["boxes"].size(); ++i) prompt.boxes.push_back(parse_box(pj["boxes"][i], p, i));
      }
    } else {
      bad("prompts[" + std::to_string(p) + "] must be a string or {\"text\", \"boxes\"}");
    }
    if (prompt.text.find_first_not_of(" \t\r\n") == std::string::npos && prompt.boxes.empty()) {
      bad("prompts[" + std::to_string(p) + "] is empty: give a text, boxes, or both");
    }
    r.order.push_back({PromptItem::kConcept, r.prompts.size()});
    r.prompts.push_back(std::move(prompt));
  }
  if (j.contains("multimask")) {
    if (!j["multimask"].is_boolean()) bad("\"multimask\" must be true or false");
    r.multimask = j["multimask"].get<bool>();
  }
  r.options.score_threshold = number_in(j, "threshold", 0.f, 1.f, r.options.score_threshold);
  r.options.mask_threshold = number_in(j, "mask_threshold", 0.f, 1.f, r.options.mask_threshold);
  r.options.nms_iou = number_in(j, "nms", 0.f, 1.f, 0.f);
  r.options.min_area = static_cast<std::int64_t>(number_in(j, "min_area", 0.f, 1e12f, 0.f));
  r.options.max_instances = static_cast<int>(number_in(j, "max_instances", 0.f, 1e6f, 0.f));
  r.polygon_tolerance = number_in(j, "polygon_tolerance", 0.f, 100.f, 1.f);
  if (j.contains("mask_format")) {
    const auto f = j["mask_format"];
    if (f == "rle") r.mask_format = MaskFormat::kRle;
    else if (f == "polygon") r.mask_format = MaskFormat::kPolygon;
    else if (f == "png") r.mask_format = MaskFormat::kPng;
    else bad("\"mask_format\" must be \"rle\", \"polygon\" or \"png\"");
  }
  return r;
}

}  // namespace sam3::server
