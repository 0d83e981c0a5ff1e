// X-AnyLabeling's `params.marks`: what the annotator drew, in pixels:
// {"type": "point", "data": [x, y], "label": 1|0} and {"type": "rectangle", "data": [x1, y1, x2, y2], "label": 1|0}.
// Errors name the mark (ApiError 400 "invalid_marks").
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "sam3/interactive.h"
#include "sam3/types.h"

namespace sam3::server::x_anylabeling {

struct Marks {
  struct Point {
    size_t mark;  // index in params.marks
    PointPrompt point;
  };
  struct Rectangle {
    size_t mark;
    BoxPrompt box;
  };
  std::vector<Point> points;
  std::vector<Rectangle> rectangles;
};

// Marks of other types are skipped; a point or rectangle whose data is not numbers, or whose
// label is not 0 or 1, is an error.
Marks read_marks(const nlohmann::ordered_json& params);

// The marks as clicked objects on a width x height image: the points and at most one rectangle
// are one object; rectangles without points are one object each. Errors name the mark: outside
// the image, more points than one object takes, a negative rectangle, no positive point or box.
std::vector<InteractivePrompt> clicked_objects(const Marks& marks, int width, int height);

}  // namespace sam3::server::x_anylabeling
