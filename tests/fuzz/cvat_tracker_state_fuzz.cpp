// libFuzzer target: arbitrary bytes as the JSON body of CVAT's tracker invocation, through the
// readers sam3-tracker uses before any session is looked up: each of "shapes" as a rectangle,
// cut to a 640x480 frame, and each of "states" as a state this function gave. Bad input must be
// an ApiError with a 4xx status; a state read must carry the client's index exactly (an index
// narrowed to int read the server's heap) and a rectangle finite numbers inside the frame.
// Never another exception, a crash, hang or sanitizer report.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "api_error.h"
#include "protocols/cvat_tracker_request.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  using json = nlohmann::ordered_json;
  const json body = json::parse(data, data + size, nullptr, false);
  if (!body.is_object()) return 0;
  const json empty = json::array();
  const json& shapes = body.contains("shapes") && body["shapes"].is_array() ? body["shapes"] : empty;
  const json& states = body.contains("states") ? body["states"] : empty;
  for (size_t i = 0; i < shapes.size(); ++i) {
    try {
      const sam3::Box b = sam3::server::tracker_rectangle_inside(sam3::server::tracker_rectangle_of(shapes[i], i), 640, 480, i);
      if (!(b.x0 >= 0 && b.x0 < b.x1 && b.x1 <= 640 && b.y0 >= 0 && b.y0 < b.y1 && b.y1 <= 480)) std::abort();
    } catch (const sam3::server::ApiError& e) {
      if (e.status < 400 || e.status >= 500) std::abort();
    }
    try {
      const auto ref = sam3::server::tracker_state_of(states, i);
      if (ref && json(ref->object) != states[i]["object"]) std::abort();
    } catch (const sam3::server::ApiError& e) {
      if (e.status < 400 || e.status >= 500) std::abort();
    }
  }
  return 0;
}
