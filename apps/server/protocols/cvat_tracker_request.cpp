#include "cvat_tracker_request.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "api_error.h"

namespace sam3::server {

using json = nlohmann::ordered_json;

Box tracker_rectangle_of(const json& shape, std::size_t i) {
  const std::string where = "shapes[" + std::to_string(i) + "]";
  if (!shape.is_array() || shape.size() != 4 || !std::all_of(shape.begin(), shape.end(), [](const json& v) { return v.is_number(); })) {
    throw ApiError(400, "invalid_request",
                   where +
                       " must be a rectangle [xtl, ytl, xbr, ybr] in pixels (CVAT's tracker "
                       "tracks rectangles)");
  }
  float v[4];
  for (size_t k = 0; k < 4; ++k) {
    const double d = shape[k].get<double>();  // checked as a double: a float cannot hold every JSON number
    if (!std::isfinite(d) || std::abs(d) > std::numeric_limits<float>::max()) {
      throw ApiError(400, "invalid_request", where + " holds " + shape[k].dump() + ", not a coordinate in pixels");
    }
    v[k] = static_cast<float>(d);
  }
  Box b{v[0], v[1], v[2], v[3]};
  if (b.x1 < b.x0) std::swap(b.x0, b.x1);
  if (b.y1 < b.y0) std::swap(b.y0, b.y1);
  return b;
}

Box tracker_rectangle_inside(Box b, int width, int height, std::size_t i) {
  const float w = static_cast<float>(width), h = static_cast<float>(height);
  b = {std::clamp(b.x0, 0.f, w), std::clamp(b.y0, 0.f, h), std::clamp(b.x1, 0.f, w), std::clamp(b.y1, 0.f, h)};
  if (b.x1 <= b.x0 || b.y1 <= b.y0) {
    throw ApiError(
        400, "invalid_request",
        "shapes[" + std::to_string(i) + "] has no area inside the " + std::to_string(width) + "x" + std::to_string(height) + " frame");
  }
  return b;
}

std::optional<TrackerStateRef> tracker_state_of(const json& states, std::size_t i) {
  if (!states.is_array() || i >= states.size() || states[i].is_null()) return std::nullopt;
  const json& s = states[i];
  // JSON integers >= 0 parse as unsigned; a negative one as signed, refused here with the rest.
  if (!s.is_object() || !s.contains("session") || !s["session"].is_string() || !s.contains("object") || !s["object"].is_number_unsigned()) {
    throw ApiError(400, "invalid_request",
                   "states[" + std::to_string(i) +
                       "] is not a state sam3-tracker gave (an object "
                       "{\"session\": \"...\", \"object\": n}, or null to start tracking the shape)");
  }
  return TrackerStateRef{s["session"].get<std::string>(), s["object"].get<std::uint64_t>()};
}

}  // namespace sam3::server
