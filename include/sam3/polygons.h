// Mask outlines as polygons (outer rings with their holes), for COCO polygons, YOLO-seg,
// GeoJSON and the server's "polygon" mask format.
#pragma once

#include <vector>

#include "sam3/types.h"

namespace sam3 {

struct Point {
  float x = 0, y = 0;
};
using Ring = std::vector<Point>;

struct Polygon {
  Ring outer;               // counter-clockwise is not guaranteed; use signed area if needed
  std::vector<Ring> holes;  // rings inside `outer`
};

// One polygon per connected component, rings simplified with Douglas-Peucker at `tolerance`
// pixels (0 keeps every boundary pixel); holes with fewer than 3 points are dropped.
// Coordinates are pixel centres of the boundary pixels, in the mask's pixel frame. A component
// whose outline has no area (a line one pixel wide, a single pixel) is its pixels' rectangle,
// the smallest rotated one around their centres grown by half a pixel each side.
std::vector<Polygon> mask_to_polygons(const Mask& mask, double tolerance = 1.0);

double ring_area(const Ring& ring);       // absolute shoelace area
double ring_perimeter(const Ring& ring);  // of the closed ring
// Douglas-Peucker simplification of a closed ring at `tolerance` pixels (as OpenCV's
// approxPolyDP, which X-AnyLabeling's servers use with tolerance = factor x perimeter).
Ring simplify_ring(const Ring& ring, double tolerance);

}  // namespace sam3
