#include "cvat_tracker.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>

#include "api.h"
#include "sam3/base64.h"
#include "cvat_tracker_request.h"
#include "request_json.h"
#include "sam3/error.h"
#include "sam3/image.h"

namespace sam3::server {
namespace {

using json = nlohmann::ordered_json;

json rectangle_json(const Box& b) { return json::array({b.x0, b.y0, b.x1, b.y1}); }

// Nuclio's dashboard answers its own errors as {"error": "..."}; CVAT relays only the status.
HttpResponse nuclio_error(int status, const std::string& message) { return json_response(status, {{"error", message}}); }

// Whose share a session counts against: the peer's address (every CVAT user behind one CVAT
// server is one client; the server has a single API key, so the key tells no one apart).
std::string client_of(const HttpRequest& req) { return req.peer.empty() ? std::string("unknown") : req.peer; }

std::string megabytes(std::uint64_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MB"; }

}  // namespace

ApiError CvatTracker::refusal_error(TrackerSessions::Refusal refusal, size_t objects, int buckets, std::uint64_t bytes,
                                    const std::string& client) const {
  const TrackerBudget& b = sessions_.budget();
  const std::string session = "a tracking session of " + std::to_string(objects) + " object" + (objects == 1 ? "" : "s") + " needs " +
                              megabytes(bytes) + " of memory once its memory bank is full";
  if (refusal == TrackerSessions::Refusal::kOverClientShare) {
    // The session alone is over the client's share (never above the whole budget; the client's own
    // older sessions are dropped as needed, so finishing them would not help): say the share, and
    // what the client can do (fewer objects only when they fill several groups and one group fits:
    // one object, or two in one group, need the same) and what the operator can.
    const std::uint64_t group = buckets > 1 ? bytes / static_cast<std::uint64_t>(buckets) : bytes;
    const std::string fewer = buckets > 1 && group <= b.client_bytes
                                  ? "track fewer objects at once (they are tracked in " + std::to_string(buckets) + " groups of about " +
                                        megabytes(group) + " each), or "
                                  : "";
    const std::string flags = "--cvat-tracker-client-memory" + std::string(bytes > b.total_bytes ? " and --cvat-tracker-memory" : "");
    return ApiError(429, "tracker_memory_exceeded",
                    session + ", more than one client's share of " + megabytes(b.client_bytes) +
                        " (sam3 serve --cvat-tracker-client-memory) holds, even with none of its other sessions kept; " + fewer +
                        "have the server's operator raise sam3 serve " + flags + " to at least " + megabytes(bytes));
  }
  return ApiError(503, "tracker_memory_full",
                  session + " but the tracker's memory (" + megabytes(b.total_bytes) +
                      ", sam3 serve --cvat-tracker-memory) is held by "
                      "other clients' sessions in use (" +
                      megabytes(sessions_.bytes() - sessions_.client_bytes(client)) + "); try again once some have been idle for " +
                      std::to_string(b.idle.count()) + " s, or raise --cvat-tracker-memory");
}

bool CvatTracker::available(Api& api) {
  try {
    return api.ready_model()->tracks_video();
  } catch (const ApiError&) {
    return false;  // still loading, or failed to load
  }
}

json CvatTracker::function_json(int port) {
  return {
      {"metadata",
       {{"name", kCvatTracker},
        {"namespace", "nuclio"},
        {"annotations",
         {{"name", "SAM 3.1 tracker (sam3cpp)"}, {"type", "tracker"}, {"framework", "onnxruntime"}, {"version", "1"}, {"spec", "[]"}}}}},
      {"spec",
       {{"description", "SAM 3.1's video tracker: follows each rectangle's object through its memory (sam3 serve)"},
        {"runtime", "sam3cpp"}}},
      {"status", {{"state", "ready"}, {"httpPort", port}}}};
}

HttpResponse CvatTracker::invoke(Api& api, const HttpRequest& req) {
  try {
    return track(api, req);
  } catch (const ApiError& e) {
    return nuclio_error(e.status, e.what());
  } catch (const Error& e) {
    const ApiError a = api_error_from(e);
    return nuclio_error(a.status, a.what());
  }
}

HttpResponse CvatTracker::track(Api& api, const HttpRequest& req) {
  const json body = parse_request_json<json>(req.body);
  if (!body.is_object()) throw ApiError(400, "invalid_request", "the invocation body must be a JSON object");
  const auto bytes =
      body.contains("image") && body["image"].is_string() ? base64_decode(body["image"].get_ref<const std::string&>()) : std::nullopt;
  if (!bytes || bytes->empty()) throw ApiError(400, "invalid_image", "\"image\" must be the frame's bytes in base64");
  const json empty = json::array();
  const json& shapes = body.contains("shapes") && !body["shapes"].is_null() ? body["shapes"] : empty;
  const json& states = body.contains("states") && !body["states"].is_null() ? body["states"] : empty;
  if (!shapes.is_array()) throw ApiError(400, "invalid_request", "\"shapes\" must be a list of rectangles [xtl, ytl, xbr, ybr]");
  if (!states.is_array()) throw ApiError(400, "invalid_request", "\"states\" must be a list, one state (or null) per shape");
  if (states.size() > shapes.size()) {
    throw ApiError(400, "invalid_request",
                   "\"states\" has " + std::to_string(states.size()) + " entries for " + std::to_string(shapes.size()) +
                       " shapes: at most one state per shape");
  }
  api.check_objects(shapes.size(), "the tracker's shapes");
  const auto model = api.ready_model();
  if (!model->tracks_video()) {
    // Not deployed here (nor listed): Nuclio answers 404 for a function it does not have.
    throw ApiError(404, "no_video_model",
                   "no function sam3-tracker on this server: it needs SAM 3.1's video bundle (ailia-models) as sam3 serve --models; "
                   "this server holds " +
                       std::string(model->layout().id()) + " (GET /api/functions lists its functions)");
  }
  ImageLoadOptions load;
  load.max_pixels = api.options().max_pixels;
  auto frame = std::make_shared<VideoFrame>();
  frame->image = decode_image({reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size()}, "the frame", load);

  // Everything is checked before any session moves on: a refused call changes nothing.
  std::vector<Box> given(shapes.size());
  std::vector<std::optional<TrackerStateRef>> refs(shapes.size());
  std::vector<size_t> starting;                                     // shapes CVAT starts tracking here
  std::map<std::string, std::shared_ptr<TrackerSession>> followed;  // sessions this frame feeds
  for (size_t i = 0; i < shapes.size(); ++i) {
    given[i] = tracker_rectangle_of(shapes[i], i);
    refs[i] = tracker_state_of(states, i);
    if (!refs[i]) {
      given[i] = tracker_rectangle_inside(given[i], frame->image.width, frame->image.height, i);
      starting.push_back(i);
      continue;
    }
    auto session = followed.count(refs[i]->session) ? followed[refs[i]->session] : sessions_.find(refs[i]->session);
    if (!session) {
      throw ApiError(410, "tracker_state_expired",
                     "the tracker state of shapes[" + std::to_string(i) +
                         "] has expired: this server keeps each client's most "
                         "recently used tracking sessions within its share (sam3 serve --cvat-tracker-client-memory, "
                         "--cvat-tracker-sessions) and forgets them when it restarts; in CVAT, turn the object's tracking off and "
                         "on again (or move its rectangle) to start it anew");
    }
    if (session->broken) {
      throw ApiError(410, "tracker_state_expired",
                     "the tracking session of shapes[" + std::to_string(i) +
                         "] failed on an "
                         "earlier frame; in CVAT, turn the object's tracking off and on again");
    }
    // width, height and the object count never change after a session starts: no lock needed.
    if (refs[i]->object >= session->last_boxes.size()) {
      throw ApiError(400, "invalid_request",
                     "states[" + std::to_string(i) + "] names object " + std::to_string(refs[i]->object) + " of a session that follows " +
                         std::to_string(session->last_boxes.size()));
    }
    if (frame->image.width != session->width || frame->image.height != session->height) {
      throw ApiError(400, "invalid_request",
                     "the frame is " + std::to_string(frame->image.width) + "x" + std::to_string(frame->image.height) + " but shapes[" +
                         std::to_string(i) + "] was started on a " + std::to_string(session->width) + "x" +
                         std::to_string(session->height) + " frame; start it again on this one");
    }
    followed[refs[i]->session] = session;
  }

  // One worker job: a new session for the objects starting here, kept within the memory
  // budget before any other session moves on (a refused call changes nothing), then one frame
  // more for each session followed (an encoder pass per session: sessions share no frame).
  const std::string client = client_of(req);
  auto job = [this, model, frame, given, starting, followed, client](const JobStop& stop) mutable {
    std::string started_id;
    if (!starting.empty()) {
      VideoPrompts prompts;
      for (size_t i : starting) prompts.objects.push_back({.frame = 0, .points = {}, .box = given[i]});
      VideoTrackerOptions options;
      options.hotstart_delay = 0;  // CVAT wants this frame's rectangles now
      auto started = std::make_shared<TrackerSession>();
      started->tracker = std::make_unique<VideoTracker>(model, std::move(prompts), options);
      started->width = frame->image.width;
      started->height = frame->image.height;
      for (size_t i : starting) started->last_boxes.push_back(given[i]);
      frame->index = 0;
      started->tracker->push(*frame);  // the objects' first memories; CVAT keeps its own rectangles here
      started->next_index = 1;
      const VideoTrackerStats stats = started->tracker->stats();
      const std::uint64_t bytes = stats.memory_bank_limit_bytes;
      const auto added = sessions_.add(std::move(started), client, bytes);
      if (added.id.empty()) throw refusal_error(added.refusal, starting.size(), stats.buckets, bytes, client);
      started_id = added.id;
    }
    try {
      for (auto& [id, session] : followed) {
        stop.check();
        std::lock_guard lock(session->mutex);
        frame->index = session->next_index;
        frame->time_s = static_cast<double>(frame->index);
        try {
          // Only the boxes are kept: the results' masks (their bounds' bytes) go with them.
          for (const auto& result : session->tracker->push(*frame)) {
            for (const auto& object : result.objects) {
              // A session's objects are all given on its first frame, numbered 1, 2, ... in order.
              const int k = object.id - 1;
              if (k >= 0 && k < static_cast<int>(session->last_boxes.size())) session->last_boxes[k] = object.box;
            }
          }
          ++session->next_index;
        } catch (...) {
          session->broken = true;  // cut off mid-frame: its memory is half updated
          throw;
        }
      }
    } catch (...) {
      if (!started_id.empty()) sessions_.remove(started_id);  // never answered: no client could name it
      throw;
    }
    return started_id;
  };
  const std::string started_id = api.run_on_worker(req, std::move(job));

  json out_shapes = json::array(), out_states = json::array();
  std::uint64_t next_started = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (!refs[i]) {
      out_shapes.push_back(rectangle_json(given[i]));
      out_states.push_back({{"session", started_id}, {"object", next_started++}});
      continue;
    }
    const auto& session = followed.at(refs[i]->session);
    std::lock_guard lock(session->mutex);
    out_shapes.push_back(rectangle_json(session->last_boxes[refs[i]->object]));
    out_states.push_back({{"session", refs[i]->session}, {"object", refs[i]->object}});
  }
  return json_response(200, {{"shapes", std::move(out_shapes)}, {"states", std::move(out_states)}});
}

}  // namespace sam3::server
