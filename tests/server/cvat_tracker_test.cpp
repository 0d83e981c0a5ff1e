// sam3 serve as CVAT's tracker function ("AI Tools > Trackers"), called as CVAT calls it: the
// UI's checkTrackedStates (cvat-ui tools-control.tsx) first sends the rectangles drawn on the
// previous frame with no states, then each next frame with the rectangles and the states the
// function returned; CVAT's lambda manager posts {"image", "shapes", "states"} to Nuclio's
// /api/function_invocations with its x-nuclio-* headers and hands the states back as the
// function gave them (newest CVAT signs them on the way out and unsigns them on the way in).
// The video is the generated scene of the video tracker's tests (squares that move) on the
// generated SAM 3.1 bundle.
#include <gtest/gtest.h>
#include <httplib.h>

#include <array>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "sam3/base64.h"
#include "sam3/export.h"
#include "support/serve.h"
#include "support/server_process.h"
#include "video/synthetic_video.h"

namespace {

using nlohmann::json;
using sam3::test::ServerProcess;

httplib::Headers invoke_headers() {
  return {{"x-nuclio-project-name", "cvat"},       {"x-nuclio-function-namespace", "nuclio"},  {"x-nuclio-invoke-via", "domain-name"},
          {"X-Nuclio-Invoke-Timeout", "120s"},     {"x-nuclio-function-name", "sam3-tracker"}, {"x-nuclio-path", "/"},
          {"User-Agent", "python-requests/2.31.0"}};
}

std::string frame_png(int index) { return sam3::encode_rgb_png(sam3::test::frame_of(index).image); }

std::array<float, 4> truth(const char* name, int frame) {
  for (const auto& s : sam3::test::scene()) {
    if (std::string(s.name) == name) {
      const auto r = *sam3::test::where(s, frame);
      return {static_cast<float>(r[0]), static_cast<float>(r[1]), static_cast<float>(r[2]), static_cast<float>(r[3])};
    }
  }
  return {};
}

double box_iou(const json& a, const std::array<float, 4>& b) {
  const double ax0 = a[0], ay0 = a[1], ax1 = a[2], ay1 = a[3];
  const double iw = std::max(0.0, std::min(ax1, double(b[2])) - std::max(ax0, double(b[0])));
  const double ih = std::max(0.0, std::min(ay1, double(b[3])) - std::max(ay0, double(b[1])));
  const double inter = iw * ih, uni = (ax1 - ax0) * (ay1 - ay0) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return uni > 0 ? inter / uni : 0;
}

json rectangle(const std::array<float, 4>& b) { return json::array({b[0], b[1], b[2], b[3]}); }

class CvatTracker : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = sam3::test::start_serve("sam3.1-video", {"--cvat-tracker-sessions", "3", "--threads", "1"});
    ASSERT_GT(server_->port(), 0) << server_->first_line();
  }
  static void TearDownTestSuite() {
    EXPECT_EQ(server_->stop(SIGTERM), 0);
    delete server_;
    server_ = nullptr;
  }
  // One invocation as CVAT's lambda manager sends it (states left out when CVAT has none).
  static httplib::Result invoke(int frame, const json& shapes, const json& states) {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(120, 0);
    json payload = {{"image", sam3::base64_encode(frame_png(frame))}, {"shapes", shapes}, {"states", states}};
    return c.Post("/api/function_invocations", invoke_headers(), payload.dump(), "application/json");
  }
  static json ok(const httplib::Result& r) {
    EXPECT_TRUE(r);
    if (!r) return json::object();
    EXPECT_EQ(r->status, 200) << r->body;
    return json::parse(r->body);
  }
  static inline ServerProcess* server_ = nullptr;
};

TEST_F(CvatTracker, IsListedAsCvatsLambdaManagerReadsATracker) {
  httplib::Client c("127.0.0.1", server_->port());
  auto r = c.Get("/api/functions");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json all = json::parse(r->body);
  ASSERT_TRUE(all.contains("sam3-tracker")) << r->body;
  const json& f = all["sam3-tracker"];
  EXPECT_EQ(f["metadata"]["name"], "sam3-tracker");
  EXPECT_EQ(f["metadata"]["annotations"]["type"], "tracker");
  EXPECT_TRUE(json::parse(f["metadata"]["annotations"]["spec"].get<std::string>()).is_array());
  EXPECT_TRUE(f["spec"]["description"].is_string());
  EXPECT_EQ(f["status"]["state"], "ready") << "2023 CVAT reads status.state of a tracker";
  auto one = c.Get("/api/functions/sam3-tracker");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->status, 200);
  EXPECT_EQ(json::parse(one->body), f);
}

TEST_F(CvatTracker, FollowsTwoSquaresFromFrameToFrameAsCvatsUiAsks) {
  // The UI starts the objects on the frame they were drawn on (frame - 1), sending no states.
  json shapes = json::array({rectangle(truth("red", 0)), rectangle(truth("blue", 0))});
  const json started = ok(invoke(0, shapes, json::array()));
  ASSERT_EQ(started["states"].size(), 2u);
  ASSERT_EQ(started["shapes"].size(), 2u);
  json states = started["states"];
  EXPECT_EQ(states[0]["session"], states[1]["session"]) << "objects started together share one session";
  for (int frame = 1; frame <= 6; ++frame) {
    const json answer = ok(invoke(frame, shapes, states));
    ASSERT_EQ(answer["shapes"].size(), 2u) << answer.dump();
    EXPECT_GT(box_iou(answer["shapes"][0], truth("red", frame)), 0.7) << "frame " << frame << ": " << answer["shapes"][0];
    EXPECT_GT(box_iou(answer["shapes"][1], truth("blue", frame)), 0.7) << "frame " << frame << ": " << answer["shapes"][1];
    shapes = answer["shapes"];  // the UI saves the rectangles and sends them with the next frame
    states = answer["states"];
  }
  // Red moved 18 pixels right: the rectangle went with it, not left where it was drawn.
  EXPECT_NEAR(shapes[0][0].get<double>(), truth("red", 6)[0], 3.0) << shapes.dump();
  EXPECT_GT(shapes[0][0].get<double>(), truth("red", 0)[0] + 12) << shapes.dump();
}

TEST_F(CvatTracker, AMovedRectangleStartsAgainBesideTheOthersStillFollowed) {
  const json started = ok(invoke(0, json::array({rectangle(truth("red", 0)), rectangle(truth("blue", 0))}), json::array()));
  json a = ok(invoke(1, started["shapes"], started["states"]));
  // The user corrects red's rectangle on frame 2: the UI sends it without a state (on frame 2),
  // blue with its own; then both with states on frame 3.
  const json mixed = ok(invoke(2, json::array({rectangle(truth("red", 2)), a["shapes"][1]}), json::array({nullptr, a["states"][1]})));
  ASSERT_EQ(mixed["states"].size(), 2u);
  EXPECT_NE(mixed["states"][0]["session"], mixed["states"][1]["session"]) << "red started a session of its own";
  const json next = ok(invoke(3, mixed["shapes"], mixed["states"]));
  EXPECT_GT(box_iou(next["shapes"][0], truth("red", 3)), 0.7) << next.dump();
  EXPECT_GT(box_iou(next["shapes"][1], truth("blue", 3)), 0.7) << next.dump();
}

TEST_F(CvatTracker, AStateOfASessionDroppedFromTheLruIsAnsweredGone) {
  const json first = ok(invoke(0, json::array({rectangle(truth("red", 0))}), json::array()));
  for (int k = 0; k < 3; ++k) ok(invoke(0, json::array({rectangle(truth("blue", 0))}), json::array()));  // capacity 3
  auto r = invoke(1, json::array({rectangle(truth("red", 0))}), first["states"]);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 410) << r->body;
  const json body = json::parse(r->body);
  ASSERT_TRUE(body["error"].is_string()) << "Nuclio's error shape: " << r->body;
  EXPECT_NE(body["error"].get<std::string>().find("expired"), std::string::npos) << r->body;
  // A state never given (a guessed session) is the same: nothing to follow.
  auto guessed = invoke(1, json::array({rectangle(truth("red", 0))}),
                        json::array({json{{"session", "0123456789abcdef0123456789abcdef"}, {"object", 0}}}));
  ASSERT_TRUE(guessed);
  EXPECT_EQ(guessed->status, 410) << guessed->body;
}

TEST_F(CvatTracker, BadInputIsA400NamingWhatIsWrong) {
  const json started = ok(invoke(0, json::array({rectangle(truth("red", 0))}), json::array()));
  const auto expect_400 = [](const httplib::Result& r, const std::string& words) {
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << r->body;
    const json body = json::parse(r->body, nullptr, false);
    ASSERT_TRUE(body.is_object() && body["error"].is_string()) << r->body;
    EXPECT_NE(body["error"].get<std::string>().find(words), std::string::npos) << r->body;
  };
  expect_400(invoke(1, json::array({json::array({1, 2, 3})}), json::array()), "shapes[0] must be a rectangle");
  expect_400(invoke(1, json::array({rectangle(truth("red", 0))}), json::array({started["states"][0], started["states"][0]})),
             "at most one state per shape");
  expect_400(invoke(1, json::array({rectangle(truth("red", 0))}), json::array({"opaque"})), "states[0] is not a state sam3-tracker gave");
  expect_400(invoke(1, json::array({json::array({500, 500, 600, 600})}), json::array()), "no area inside");
  json wrong_object = started["states"][0];
  wrong_object["object"] = 5;
  expect_400(invoke(1, json::array({rectangle(truth("red", 0))}), json::array({wrong_object})), "names object 5");
  // Indices past int's range were narrowed to negative ones and read rectangles from the heap.
  for (const json& hostile : {json(4294967295ULL), json(2147483648ULL), json(18446744073709551615ULL), json(-1), json(1.5)}) {
    json state = started["states"][0];
    state["object"] = hostile;
    const auto r = invoke(1, json::array({rectangle(truth("red", 0))}), json::array({state}));
    ASSERT_TRUE(r) << "object " << hostile.dump() << " brought the server down";
    EXPECT_EQ(r->status, 400) << "object " << hostile.dump() << ": " << r->body;
  }
  // A frame of another size than the session's first.
  sam3::Image small{80, 60, std::vector<std::uint8_t>(80 * 60 * 3, 128)};
  httplib::Client c("127.0.0.1", server_->port());
  c.set_read_timeout(120, 0);
  const json payload = {{"image", sam3::base64_encode(sam3::encode_rgb_png(small))},
                        {"shapes", json::array({rectangle(truth("red", 0))})},
                        {"states", started["states"]}};
  expect_400(c.Post("/api/function_invocations", invoke_headers(), payload.dump(), "application/json"), "was started on a 160x120");
  expect_400(c.Post("/api/function_invocations", invoke_headers(), json{{"image", "not base64!"}}.dump(), "application/json"),
             "\"image\" must be the frame's bytes");
  // Base64 of bytes that are no image: 415, as the detector and interactor answer it (the docs said 400).
  const auto r = c.Post("/api/function_invocations", invoke_headers(), json{{"image", "aGVsbG8="}}.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 415) << r->body;
  EXPECT_NE(r->body.find("unrecognised image format"), std::string::npos) << r->body;
}

// A server whose tracker memory cannot hold one session (issue 42, item 8: sessions were
// bounded by count, 32 of up to 390 MB, whatever the server had): the call is refused with
// Nuclio's error shape and a message saying what to do, and keeps nothing.
TEST(CvatTrackerMemory, ASessionOverAClientsShareIsA429SayingWhatToDo) {
  std::unique_ptr<ServerProcess> server(
      sam3::test::start_serve("sam3.1-video", {"--cvat-tracker-memory", "1", "--cvat-tracker-client-memory", "1", "--threads", "1"}));
  ASSERT_GT(server->port(), 0) << server->first_line();
  httplib::Client c("127.0.0.1", server->port());
  c.set_read_timeout(120, 0);
  const json payload = {
      {"image", sam3::base64_encode(frame_png(0))}, {"shapes", json::array({rectangle(truth("red", 0))})}, {"states", json::array()}};
  auto r = c.Post("/api/function_invocations", invoke_headers(), payload.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 429) << r->body;
  const json body = json::parse(r->body);
  ASSERT_TRUE(body["error"].is_string()) << "Nuclio's error shape: " << r->body;
  const std::string message = body["error"];
  EXPECT_NE(message.find("a tracking session of 1 object needs"), std::string::npos) << message;
  EXPECT_NE(message.find("--cvat-tracker-client-memory"), std::string::npos) << message;
  // One object cannot be made fewer (it advised "start tracking fewer objects at once"): the share
  // and who can change it.
  EXPECT_EQ(message.find("fewer objects"), std::string::npos) << message;
  EXPECT_NE(message.find("share of 1 MB"), std::string::npos) << message;
  EXPECT_NE(message.find("raise sam3 serve --cvat-tracker-client-memory and --cvat-tracker-memory to at least"), std::string::npos)
      << "both are 1 MB: " << message;
  // Two objects are tracked in one group, as one is: fewer would not help either.
  const json two = {{"image", sam3::base64_encode(frame_png(0))},
                    {"shapes", json::array({rectangle(truth("red", 0)), rectangle(truth("blue", 0))})},
                    {"states", json::array()}};
  auto r2 = c.Post("/api/function_invocations", invoke_headers(), two.dump(), "application/json");
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->status, 429) << r2->body;
  EXPECT_EQ(r2->body.find("fewer objects"), std::string::npos) << r2->body;
  EXPECT_EQ(server->stop(SIGTERM), 0);

  // A share that holds one group of objects but not two: 17 objects (two groups) are told to be fewer.
  const size_t needs = message.find(" needs ") + 7;
  const std::string group_mb = std::to_string(std::stoi(message.substr(needs)) + 1);
  std::unique_ptr<ServerProcess> roomier(sam3::test::start_serve(
      "sam3.1-video", {"--cvat-tracker-memory", group_mb, "--cvat-tracker-client-memory", group_mb, "--threads", "1"}));
  ASSERT_GT(roomier->port(), 0) << roomier->first_line();
  httplib::Client c2("127.0.0.1", roomier->port());
  c2.set_read_timeout(120, 0);
  json many = {{"image", sam3::base64_encode(frame_png(0))}, {"shapes", json::array()}, {"states", json::array()}};
  for (int i = 0; i < 17; ++i) many["shapes"].push_back(json::array({2 * i, 2 * i, 2 * i + 20, 2 * i + 20}));
  auto r17 = c2.Post("/api/function_invocations", invoke_headers(), many.dump(), "application/json");
  ASSERT_TRUE(r17);
  EXPECT_EQ(r17->status, 429) << r17->body;
  EXPECT_NE(r17->body.find("track fewer objects at once (they are tracked in 2 groups"), std::string::npos) << r17->body;
  EXPECT_EQ(roomier->stop(SIGTERM), 0);
}

}  // namespace
