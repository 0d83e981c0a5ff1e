// CVAT's tracker function ("AI Tools > Trackers" in CVAT's annotation view) on SAM 3.1's video
// tracker. CVAT sends {"image", "shapes", "states"}: the objects' rectangles [xtl, ytl, xbr, ybr]
// on the previous frame and, per object, the state this function returned for it last time
// (none when CVAT starts tracking it: then the image is the frame the rectangle was drawn on).
// The answer is {"shapes", "states"}, one of each per shape, the rectangles on this frame.
// The states are {"session", "object"}: the tracker's memory stays in this server
// (tracker_sessions.h); docs/cvat.md says why and what CVAT can and cannot carry.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "api_error.h"
#include "http/http_server.h"
#include "tracker_sessions.h"

namespace sam3::server {

class Api;

inline constexpr const char* kCvatTracker = "sam3-tracker";

class CvatTracker {
 public:
  explicit CvatTracker(TrackerBudget budget) : sessions_(budget) {}
  // Whether the server's model is SAM 3.1's video bundle (false while it loads).
  static bool available(Api& api);
  static nlohmann::ordered_json function_json(int port);
  // The invocation; errors as Nuclio's {"error": message} with the status CVAT relays.
  HttpResponse invoke(Api& api, const HttpRequest& req);

 private:
  HttpResponse track(Api& api, const HttpRequest& req);
  // The answer to a session the budget refused: 429 over the client's share, 503 when full.
  // `buckets`: the groups the session's objects are tracked in (its bytes are about that many
  // groups' worth; fewer objects help only when one group fits the client's share).
  ApiError refusal_error(TrackerSessions::Refusal refusal, size_t objects, int buckets, std::uint64_t bytes,
                         const std::string& client) const;
  TrackerSessions sessions_;
};

}  // namespace sam3::server
