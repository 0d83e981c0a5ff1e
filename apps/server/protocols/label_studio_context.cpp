#include "label_studio_context.h"

#include <cmath>
#include <cstdio>

#include "api_error.h"
#include "http/http_message.h"

namespace sam3::server::label_studio {
namespace {

using json = nlohmann::ordered_json;

[[noreturn]] void bad(const std::string& message) { throw ApiError(400, "invalid_context", message); }

std::string item_name(size_t i, const std::string& type) { return "params.context.result[" + std::to_string(i) + "] (" + type + ")"; }

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// A percent of the image, from 0 to 100 (Label Studio's region coordinates).
double percent_of(const json& value, const char* key, const std::string& where) {
  if (!value.contains(key)) bad(where + " has no value." + key + " (percent of the image)");
  const json& v = value[key];
  if (!v.is_number() || !std::isfinite(v.get<double>())) {
    bad(where + "'s value." + key + " is " + v.dump() + ", not a number (percent of the image, 0 to 100)");
  }
  const double p = v.get<double>();
  if (p < 0 || p > 100) bad(where + "'s value." + key + " is " + fmt(p) + ": outside the image (percent, 0 to 100)");
  return p;
}

bool is_positive(const json& item, const std::string& where) {
  if (!item.contains("is_positive") || item["is_positive"].is_null()) return true;
  const json& p = item["is_positive"];
  if (p.is_boolean()) return p.get<bool>();
  if (p.is_number_integer() && (p == 0 || p == 1)) return p == 1;
  bad(where + "'s is_positive is " + p.dump() + "; Label Studio sends true or false");
}

}  // namespace

InteractiveContext read_interactive_context(const json& context, int width, int height) {
  InteractiveContext out;
  const json& result = context["result"];
  const double sx = width / 100.0, sy = height / 100.0;  // percent of the image, whatever its stored size
  for (size_t i = 0; i < result.size(); ++i) {
    const json& item = result[i];
    if (!item.is_object()) bad("params.context.result[" + std::to_string(i) + "] is not an object");
    const std::string type = item.contains("type") && item["type"].is_string() ? to_lower(item["type"].get<std::string>()) : "";
    const json value = item.contains("value") && item["value"].is_object() ? item["value"] : json::object();
    if (type == "textarea") {
      const json text = value.contains("text") ? value["text"] : json();
      if (text.is_array() && !text.empty() && text[0].is_string())
        out.text = text[0].get<std::string>();
      else if (text.is_string())
        out.text = text.get<std::string>();
      continue;
    }
    if (type != "rectanglelabels" && type != "keypointlabels") continue;
    const std::string where = item_name(i, type);
    ContextMark mark{i, is_positive(item, where), {}};
    const double x = percent_of(value, "x", where), y = percent_of(value, "y", where);
    if (type == "rectanglelabels") {
      const double w = percent_of(value, "width", where), h = percent_of(value, "height", where);
      if (x + w > 100.0001 || y + h > 100.0001) {
        bad(where + " (x " + fmt(x) + ", y " + fmt(y) + ", width " + fmt(w) + ", height " + fmt(h) +
            ") reaches outside the image (percent, 0 to 100)");
      }
      if (w <= 0 || h <= 0) bad(where + " has no area (width " + fmt(w) + ", height " + fmt(h) + ")");
      mark.box = {float(x * sx), float(y * sy), float(std::min(100.0, x + w) * sx), float(std::min(100.0, y + h) * sy)};
      out.rectangles.push_back(mark);
    } else {
      mark.box = {float(x * sx), float(y * sy), float(x * sx), float(y * sy)};
      out.keypoints.push_back(mark);
    }
    const json labels = value.contains(type) ? value[type] : json::array();
    if (out.named_label.empty() && labels.is_array() && !labels.empty() && labels[0].is_string()) {
      out.named_label = labels[0].get<std::string>();
    }
  }
  if (out.keypoints.size() > static_cast<size_t>(kMaxPointsPerObject)) {
    bad("the context has " + std::to_string(out.keypoints.size()) + " keypoints; one object takes at most " +
        std::to_string(kMaxPointsPerObject) + " (the first beyond that is params.context.result[" +
        std::to_string(out.keypoints[kMaxPointsPerObject].item) + "])");
  }
  if (out.text.empty() && out.rectangles.empty() && out.keypoints.empty()) {
    bad("the interactive context has no text, rectangle or keypoint to prompt with");
  }
  return out;
}

std::vector<InteractivePrompt> clicked_objects(const InteractiveContext& context) {
  for (const auto& r : context.rectangles) {
    if (!r.positive) {
      bad(item_name(r.item, "rectanglelabels") +
          " is a negative rectangle; a clicked object takes one positive box "
          "(say what is not the object with negative keypoints)");
    }
  }
  std::vector<InteractivePrompt> objects;
  if (context.keypoints.empty()) {
    for (const auto& r : context.rectangles) objects.push_back({{}, r.box});  // each box alone is an object
    return objects;
  }
  if (context.rectangles.size() > 1) {
    bad("keypoints with " + std::to_string(context.rectangles.size()) + " rectangles (params.context.result[" +
        std::to_string(context.rectangles[0].item) + "] and [" + std::to_string(context.rectangles[1].item) +
        "]): the keypoints make one object, which takes one box");
  }
  InteractivePrompt object;
  bool positive = !context.rectangles.empty();
  for (const auto& k : context.keypoints) {
    object.points.push_back({k.box.x0, k.box.y0, k.positive});
    positive = positive || k.positive;
  }
  if (!positive) {
    bad("the context's keypoints are all negative (params.context.result[" + std::to_string(context.keypoints[0].item) +
        "], ...); click the object once with a positive keypoint or draw a rectangle around it");
  }
  if (!context.rectangles.empty()) object.box = context.rectangles[0].box;
  objects.push_back(std::move(object));
  return objects;
}

}  // namespace sam3::server::label_studio
