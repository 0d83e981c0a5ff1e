#include "x_anylabeling_marks.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "api_error.h"

namespace sam3::server::x_anylabeling {
namespace {

using json = nlohmann::ordered_json;

[[noreturn]] void bad(const std::string& message) { throw ApiError(400, "invalid_marks", message); }

std::string mark_name(size_t i) { return "marks[" + std::to_string(i) + "]"; }

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::vector<float> numbers_of(const json& mark, size_t count, size_t i, const char* shape) {
  const json& d = mark.contains("data") ? mark["data"] : json();
  if (!d.is_array() || d.size() != count) bad(mark_name(i) + "'s data must be " + shape + " in pixels");
  std::vector<float> out;
  for (const auto& v : d) {
    if (!v.is_number() || !std::isfinite(v.get<double>())) bad(mark_name(i) + "'s data " + d.dump() + " is not " + shape + " in pixels");
    out.push_back(v.get<float>());
  }
  return out;
}

bool positive_of(const json& mark, size_t i) {
  if (!mark.contains("label")) return true;
  const json& l = mark["label"];
  if (l.is_number_integer() && (l == 0 || l == 1)) return l == 1;
  if (l.is_boolean()) return l.get<bool>();
  bad(mark_name(i) + "'s label is " + l.dump() + "; 1 is positive, 0 negative");
}

}  // namespace

Marks read_marks(const json& params) {
  Marks marks;
  if (!params.contains("marks") || params["marks"].is_null()) return marks;
  if (!params["marks"].is_array()) bad("params.marks must be a list of {\"type\", \"data\", \"label\"}");
  const json& list = params["marks"];
  for (size_t i = 0; i < list.size(); ++i) {
    const json& mark = list[i];
    if (!mark.is_object() || !mark.contains("type") || !mark["type"].is_string()) continue;
    if (mark["type"] == "point") {
      const auto v = numbers_of(mark, 2, i, "[x, y]");
      marks.points.push_back({i, {v[0], v[1], positive_of(mark, i)}});
    } else if (mark["type"] == "rectangle") {
      const auto v = numbers_of(mark, 4, i, "[x1, y1, x2, y2]");
      // X-AnyLabeling sends the corners as drawn; a box is its bounds.
      marks.rectangles.push_back(
          {i, {{std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]), std::max(v[1], v[3])}, positive_of(mark, i)}});
    }
  }
  return marks;
}

std::vector<InteractivePrompt> clicked_objects(const Marks& marks, int width, int height) {
  const std::string image = std::to_string(width) + "x" + std::to_string(height) + " image";
  if (marks.points.size() > static_cast<size_t>(kMaxPointsPerObject)) {
    bad(std::to_string(marks.points.size()) + " point marks; one object takes at most " + std::to_string(kMaxPointsPerObject) +
        " (the first beyond that is " + mark_name(marks.points[kMaxPointsPerObject].mark) + ")");
  }
  for (const auto& p : marks.points) {
    if (p.point.x < 0 || p.point.y < 0 || p.point.x > width || p.point.y > height) {
      bad(mark_name(p.mark) + " (point " + fmt(p.point.x) + ", " + fmt(p.point.y) + ") is outside the " + image);
    }
  }
  for (const auto& r : marks.rectangles) {
    const Box& b = r.box.box;
    if (!r.box.positive) {
      bad(mark_name(r.mark) +
          " is a negative rectangle; a clicked object takes one positive box (say what is not the "
          "object with negative points)");
    }
    if (b.x0 < 0 || b.y0 < 0 || b.x1 > width || b.y1 > height || !(b.x1 > b.x0 && b.y1 > b.y0)) {
      bad(mark_name(r.mark) + " (rectangle " + fmt(b.x0) + ", " + fmt(b.y0) + ", " + fmt(b.x1) + ", " + fmt(b.y1) +
          ") must have an area inside the " + image);
    }
  }
  std::vector<InteractivePrompt> objects;
  if (marks.points.empty()) {
    for (const auto& r : marks.rectangles) objects.push_back({{}, r.box.box});
    if (objects.empty()) bad("no point or rectangle mark: click the object or draw a rectangle around it");
    return objects;
  }
  if (marks.rectangles.size() > 1) {
    bad("point marks with " + std::to_string(marks.rectangles.size()) + " rectangles (" + mark_name(marks.rectangles[0].mark) + " and " +
        mark_name(marks.rectangles[1].mark) + "): the points make one object, which takes one box");
  }
  InteractivePrompt object;
  bool positive = !marks.rectangles.empty();
  for (const auto& p : marks.points) {
    object.points.push_back(p.point);
    positive = positive || p.point.positive;
  }
  if (!positive) {
    bad("every point mark is negative (" + mark_name(marks.points[0].mark) +
        ", ...): add a positive point on the object "
        "or a rectangle around it");
  }
  if (!marks.rectangles.empty()) object.box = marks.rectangles[0].box.box;
  objects.push_back(std::move(object));
  return objects;
}

}  // namespace sam3::server::x_anylabeling
