#include "sam3/polygons.h"

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

namespace sam3 {
namespace {

Ring to_ring(const std::vector<cv::Point>& contour, double tolerance) {
  std::vector<cv::Point> simplified;
  if (tolerance > 0)
    cv::approxPolyDP(contour, simplified, tolerance, true);
  else
    simplified = contour;
  Ring ring;
  ring.reserve(simplified.size());
  for (const auto& p : simplified) ring.push_back({static_cast<float>(p.x), static_cast<float>(p.y)});
  return ring;
}

// A component thinner than its outline (a line of pixels, one pixel) traces as a ring of no
// area: its pixels' rectangle instead, the smallest rotated one around their centres grown by
// half a pixel each side, so that no instance drops out of the polygon formats.
Ring pixel_rectangle(const std::vector<cv::Point>& contour) {
  cv::RotatedRect r = cv::minAreaRect(contour);
  r.size.width += 1;
  r.size.height += 1;
  cv::Point2f corners[4];
  r.points(corners);
  Ring ring;
  for (const auto& c : corners) ring.push_back({c.x, c.y});
  return ring;
}

}  // namespace

std::vector<Polygon> mask_to_polygons(const Mask& mask, double tolerance) {
  std::vector<Polygon> out;
  if (mask.empty()) return out;
  // The mask's bounds with a margin of zeros, traced at their place in the image: the same
  // contours as on the full raster (found in the same scan order), without one.
  const TileRect b = mask.bounds();
  cv::Mat m = cv::Mat::zeros(b.y1 - b.y0 + 2, b.x1 - b.x0 + 2, CV_8UC1);
  for (int y = b.y0; y < b.y1; ++y) {
    const auto row = mask.row(y);
    std::copy(row.begin(), row.end(), m.ptr<std::uint8_t>(y - b.y0 + 1) + 1);
  }
  std::vector<std::vector<cv::Point>> contours;
  std::vector<cv::Vec4i> hierarchy;  // next, previous, first child, parent
  cv::findContours(m, contours, hierarchy, cv::RETR_CCOMP, cv::CHAIN_APPROX_SIMPLE, cv::Point(b.x0 - 1, b.y0 - 1));
  for (size_t i = 0; i < contours.size(); ++i) {
    if (hierarchy[i][3] >= 0) continue;  // holes are collected under their outer ring
    Polygon poly;
    poly.outer = to_ring(contours[i], tolerance);
    if (poly.outer.size() < 3 || ring_area(poly.outer) <= 0) poly.outer = pixel_rectangle(contours[i]);
    for (int h = hierarchy[i][2]; h >= 0; h = hierarchy[static_cast<size_t>(h)][0]) {
      Ring hole = to_ring(contours[static_cast<size_t>(h)], tolerance);
      if (hole.size() >= 3) poly.holes.push_back(std::move(hole));
    }
    out.push_back(std::move(poly));
  }
  return out;
}

double ring_area(const Ring& ring) {
  double a = 0;
  for (size_t i = 0, n = ring.size(); i < n; ++i) {
    const auto& p = ring[i];
    const auto& q = ring[(i + 1) % n];
    a += static_cast<double>(p.x) * q.y - static_cast<double>(q.x) * p.y;
  }
  return std::abs(a) / 2;
}

double ring_perimeter(const Ring& ring) {
  double length = 0;
  for (size_t i = 0, n = ring.size(); i < n; ++i) {
    const auto& p = ring[i];
    const auto& q = ring[(i + 1) % n];
    length += std::hypot(static_cast<double>(q.x) - p.x, static_cast<double>(q.y) - p.y);
  }
  return length;
}

Ring simplify_ring(const Ring& ring, double tolerance) {
  if (tolerance <= 0 || ring.size() < 3) return ring;
  std::vector<cv::Point2f> in, out;
  in.reserve(ring.size());
  for (const auto& p : ring) in.emplace_back(p.x, p.y);
  cv::approxPolyDP(in, out, tolerance, true);
  Ring simplified;
  simplified.reserve(out.size());
  for (const auto& p : out) simplified.push_back({p.x, p.y});
  return simplified;
}

}  // namespace sam3
