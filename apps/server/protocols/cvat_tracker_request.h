// What CVAT's tracker invocation carries, read and checked at the boundary: the rectangles and
// the states this function gave (docs/cvat.md). Indices and coordinates stay in the type they
// came in until they are compared with what they index.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sam3/types.h"

namespace sam3::server {

struct TrackerStateRef {
  std::string session;
  std::uint64_t object = 0;  // the client's index: compared with a session's object count as it is
};

// shapes[i] as a box, corners ordered; ApiError 400 unless it is [xtl, ytl, xbr, ybr] of finite
// numbers a float holds.
Box tracker_rectangle_of(const nlohmann::ordered_json& shape, std::size_t i);
// CVAT lets a rectangle reach past the frame's edges; the tracker's box is its part inside
// (ApiError 400 when nothing is).
Box tracker_rectangle_inside(Box b, int width, int height, std::size_t i);
// states[i]: a state this function gave ({"session", "object"}), or none (missing or null: CVAT
// starts tracking the shape here); ApiError 400 for anything else.
std::optional<TrackerStateRef> tracker_state_of(const nlohmann::ordered_json& states, std::size_t i);

}  // namespace sam3::server
