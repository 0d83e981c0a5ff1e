#include "segment_request.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>

#include "api_error.h"
#include "sam3/base64.h"
#include "request_json.h"
#include "sam3/error.h"
#include "sam3/prompt_json.h"
#include "sam3/result_json.h"

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

// The body's keys: one misspelled ("treshold") would otherwise be dropped and the request
// answered without it.
constexpr const char* kBodyKeys[] = {"image_id", "image",    "prompts",       "multimask",   "threshold",        "mask_threshold",
                                     "nms",      "min_area", "max_instances", "mask_format", "polygon_tolerance"};

void refuse_unknown_keys(const json& body) {
  for (const auto& [key, value] : body.items()) {
    if (std::find(std::begin(kBodyKeys), std::end(kBodyKeys), key) != std::end(kBodyKeys)) continue;
    std::string known;
    for (const char* k : kBodyKeys) known += std::string(known.empty() ? "" : ", ") + "\"" + k + "\"";
    bad("the body has an unknown key " + json(key).dump() + "; the keys of POST /v1/segment are " + known);
  }
}

}  // namespace

SegmentRequest parse_segment_request(const std::string& body) {
  const json j = parse_request_json<json>(body);
  if (j.is_discarded()) throw ApiError(400, "invalid_json", "the body is not valid JSON");
  if (!j.is_object()) bad("the body must be a JSON object");
  refuse_unknown_keys(j);
  SegmentRequest r;
  if (j.contains("image_id") && j.contains("image")) {  // which one was meant cannot be told
    bad("give one of \"image_id\" (from POST /v1/images) and \"image\" (base64), not both");
  }
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
  // sam3's one prompt codec: its errors name the field, e.g. prompts[2].boxes[0][4].
  std::vector<PromptEntry> entries;
  try {
    entries = parse_prompts_json(j["prompts"].dump());
  } catch (const Error& e) {
    std::string message = e.what();
    if (message.find("unknown key \"multimask\"") != std::string::npos) {
      message += " (\"multimask\" is a key of the body, beside \"prompts\": it asks every clicked object for three masks)";
    }
    bad(message);
  }
  for (auto& e : entries) {
    switch (e.kind) {
      case PromptEntry::Kind::kEverything:
        r.order.push_back({PromptItem::kEverything, 0, e.points_per_side});
        break;
      case PromptEntry::Kind::kObject:
        r.order.push_back({PromptItem::kObject, r.objects.size()});
        r.objects.push_back(std::move(e.object));
        break;
      case PromptEntry::Kind::kConcept:
        r.order.push_back({PromptItem::kConcept, r.prompts.size()});
        r.prompts.push_back(std::move(e.prompt));
        break;
    }
  }
  if (j.contains("multimask")) {
    if (!j["multimask"].is_boolean()) bad("\"multimask\" must be true or false");
    r.multimask = j["multimask"].get<bool>();
  }
  // sam3's one options codec, with the bounds every front uses (the image is not copied into it).
  json options = json::object();
  for (const char* key : {"threshold", "mask_threshold", "nms", "min_area", "max_instances"}) {
    if (j.contains(key)) options[key] = j[key];
  }
  try {
    r.options = parse_segment_options_json(options.dump(), "", r.options);
  } catch (const Error& e) {
    bad(e.what());
  }
  r.masks.polygon_tolerance = number_in(j, "polygon_tolerance", 0.f, static_cast<float>(kMaxPolygonTolerance), 1.f);
  if (j.contains("mask_format")) {
    const auto& f = j["mask_format"];
    const auto format = f.is_string() ? mask_format_named(f.get_ref<const std::string&>()) : std::nullopt;
    if (!format) bad("\"mask_format\" must be \"rle\", \"polygon\" or \"png\"");
    r.masks.format = *format;
  }
  return r;
}

}  // namespace sam3::server
