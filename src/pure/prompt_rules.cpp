#include "pure/prompt_rules.h"

#include <cmath>
#include <cstdio>

#include "sam3/error.h"
#include "sam3/prompt_check.h"
#include "sam3/prompt_json.h"

namespace sam3::pure {

std::string number(float v) {  // 999.5, not 999.500000
  char text[32];
  std::snprintf(text, sizeof text, "%g", static_cast<double>(v));
  return text;
}

std::string point_refusal(const std::string& name, float x, float y, int width, int height, const std::string& picture) {
  if (x >= 0 && y >= 0 && x <= static_cast<float>(width) && y <= static_cast<float>(height)) return "";
  const std::string w = std::to_string(width), h = std::to_string(height);
  return name + " (" + number(x) + ", " + number(y) + ") is outside the " + w + "x" + h + " " + picture + "; x must be 0.." + w +
         " and y 0.." + h + " (pixels)";
}

std::string box_refusal(const std::string& name, const Box& b, int width, int height, const std::string& picture) {
  const bool inside = b.x0 >= 0 && b.y0 >= 0 && b.x1 <= static_cast<float>(width) && b.y1 <= static_cast<float>(height);
  if (b.x1 > b.x0 && b.y1 > b.y0 && inside) return "";
  const std::string w = std::to_string(width), h = std::to_string(height);
  return name + " (" + number(b.x0) + ", " + number(b.y0) + ", " + number(b.x1) + ", " + number(b.y1) +
         ") must satisfy 0 <= x0 < x1 <= " + w + " and 0 <= y0 < y1 <= " + h + " (pixels x0,y0,x1,y1 of the " + w + "x" + h + " " +
         picture + ")";
}

// NaN passes every comparison-based range check, so each bound is tested for what it must be.
void check_options(const SegmentOptions& o) {
  const auto unit = [](float v, const char* name) {
    if (!(v >= 0.f && v <= 1.f)) {
      throw Error(ErrorCode::kInvalidArgument, std::string(name) + " must be a number from 0 to 1, got " + std::to_string(v));
    }
  };
  unit(o.score_threshold, "threshold");
  unit(o.mask_threshold, "mask_threshold");
  unit(o.nms_iou, "nms");
  if (!(o.min_area >= 0 && o.min_area <= kMaxMinArea)) {
    throw Error(ErrorCode::kInvalidArgument,
                "min_area must be from 0 to " + std::to_string(kMaxMinArea) + " pixels, got " + std::to_string(o.min_area));
  }
  if (!(o.max_instances >= 0 && o.max_instances <= kMaxMaxInstances)) {
    throw Error(ErrorCode::kInvalidArgument,
                "max_instances must be from 0 (all) to " + std::to_string(kMaxMaxInstances) + ", got " + std::to_string(o.max_instances));
  }
}

void check_boxes(const std::vector<BoxPrompt>& boxes, int width, int height, const std::function<std::string(size_t)>& name) {
  for (size_t i = 0; i < boxes.size(); ++i) {
    const auto refusal = box_refusal(name ? name(i) : "box " + std::to_string(i + 1), boxes[i].box, width, height, "image");
    if (!refusal.empty()) throw Error(ErrorCode::kInvalidArgument, refusal);
  }
}

std::string checked_prompt_text(const Prompt& prompt, const SegmentOptions& options, int width, int height) {
  const bool blank = prompt.text.find_first_not_of(" \t\r\n") == std::string::npos;
  if (blank && prompt.boxes.empty()) {
    throw Error(ErrorCode::kInvalidArgument, "empty prompt: give a text (e.g. \"car\"), exemplar boxes, or both");
  }
  check_options(options);
  check_boxes(prompt.boxes, width, height);
  return blank ? "visual" : prompt.text;  // SAM3's text for box-only prompts
}

}  // namespace sam3::pure

namespace sam3 {

void check_concept_boxes(const Prompt& prompt, const std::string& where, int width, int height) {
  pure::check_boxes(prompt.boxes, width, height, [&](size_t j) { return where + ".boxes[" + std::to_string(j) + "]"; });
}

InteractivePromptNames json_prompt_names(const std::string& where) {
  return {where, [where](size_t j) { return where + ".points[" + std::to_string(j) + "]"; }, where + ".box"};
}

void check_interactive_prompt(const InteractivePrompt& p, const InteractivePromptNames& names, int width, int height) {
  if (p.points.size() > static_cast<size_t>(kMaxPointsPerObject)) {
    throw Error(ErrorCode::kInvalidArgument, names.object + " has " + std::to_string(p.points.size()) + " points; at most " +
                                                 std::to_string(kMaxPointsPerObject) +
                                                 " points per object (a few clicks are what the model was trained on)");
  }
  bool positive = false;
  for (size_t j = 0; j < p.points.size(); ++j) {
    const PointPrompt& pt = p.points[j];
    const std::string point = names.point(j);
    if (!std::isfinite(pt.x) || !std::isfinite(pt.y)) {
      throw Error(ErrorCode::kInvalidArgument,
                  point + " (" + pure::number(pt.x) + ", " + pure::number(pt.y) + ") is not a pair of numbers; give pixel coordinates x,y");
    }
    if (const auto refusal = pure::point_refusal(point, pt.x, pt.y, width, height, "image"); !refusal.empty()) {
      throw Error(ErrorCode::kInvalidArgument, refusal);
    }
    positive = positive || pt.positive;
  }
  if (p.box) {
    if (const auto refusal = pure::box_refusal(names.box, *p.box, width, height, "image"); !refusal.empty()) {
      throw Error(ErrorCode::kInvalidArgument, refusal);
    }
  } else if (p.points.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                names.object + " has no point and no box: add a positive point (x,y) on the object or a box around it");
  } else if (!positive) {
    throw Error(ErrorCode::kInvalidArgument,
                names.object +
                    " has neither a positive point nor a box: negative points only say what the object is not; "
                    "add a positive point (x,y) on it or a box around it");
  }
}

std::optional<bool> parse_polarity(std::string_view word) noexcept {
  std::string lower;
  for (char c : word) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (lower == "pos" || lower == "positive") return true;
  if (lower == "neg" || lower == "negative") return false;
  return std::nullopt;
}

}  // namespace sam3
