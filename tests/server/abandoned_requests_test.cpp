// No client holds sam3 serve beyond its own time: every route shares one prompt cap, a job of
// many prompts stops once its client has gone or its --timeout has passed, and task-image
// fetches stop with their client, count against --timeout and are bounded in number.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "sam3/base64.h"
#include "sam3/export.h"
#include "support/raw_http.h"
#include "support/serve.h"
#include "support/server_process.h"
#include "support/stand_in.h"
#include "support/test_images.h"

namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using sam3::test::BlackHole;
using sam3::test::RawConnection;
using sam3::test::ServerProcess;
using sam3::test::StandIn;
using Clock = std::chrono::steady_clock;

std::unique_ptr<ServerProcess> serve(const std::vector<std::string>& options) {
  return std::unique_ptr<ServerProcess>(sam3::test::start_serve("usls", options));
}

std::string png(int scale = 1) { return sam3::encode_rgb_png(sam3::test::upscale(sam3::test::make_scene(false).image, scale)); }

std::string raw_post(const std::string& path, const std::string& body) {
  return "POST " + path +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
         body;
}

// /v1/segment with `n` prompts on the scene scaled up (heavier masks: a few ms a prompt).
std::string many_prompts(int n, int scale) {
  json body = {{"image", sam3::base64_encode(png(scale))}, {"prompts", json::array()}};
  for (int i = 0; i < n; ++i) body["prompts"].push_back(i % 2 ? "red" : "blue");
  return body.dump();
}

int decodes(ServerProcess& server) {
  httplib::Client c("127.0.0.1", server.port());
  auto r = c.Get("/v1/info");
  return r && r->status == 200 ? json::parse(r->body)["model"]["decodes"].get<int>() : -1;
}

// The decode count once it has not moved for a second (bounded: 60 s).
int settled_decodes(ServerProcess& server) {
  int last = decodes(server);
  for (int i = 0; i < 60; ++i) {
    std::this_thread::sleep_for(1s);
    const int now = decodes(server);
    if (now == last) return now;
    last = now;
  }
  return last;
}

const char* kOneLabel = R"(<View><Image name="image" value="$image"/>
  <BrushLabels name="brush" toName="image"><Label value="Car" predicted_values="red"/></BrushLabels></View>)";

json ls_predict_body(const std::string& image_ref, const std::string& config = kOneLabel) {
  json task = {{"id", 1}, {"data", {{"image", image_ref}}}};
  return {{"tasks", json::array({task})}, {"project", "1.1"}, {"label_config", config}, {"params", {{"context", nullptr}}}};
}

TEST(AbandonedRequests, EveryRouteSharesOnePromptCap) {
  auto server = serve({"--max-prompts", "8"});
  httplib::Client c("127.0.0.1", server->port());
  c.set_read_timeout(60, 0);

  auto segment = c.Post("/v1/segment", many_prompts(9, 1), "application/json");
  ASSERT_TRUE(segment);
  EXPECT_EQ(segment->status, 413) << segment->body;
  EXPECT_NE(segment->body.find("--max-prompts"), std::string::npos) << segment->body;

  std::string texts;
  for (int i = 0; i < 2000; ++i) texts += "thing" + std::to_string(i) + ",";
  const json xal = {{"model", "segment_anything_3"}, {"image", sam3::base64_encode(png())}, {"params", {{"text_prompt", texts}}}};
  auto x = c.Post("/v1/predict", xal.dump(), "application/json");
  ASSERT_TRUE(x);
  const json xj = json::parse(x->body);
  EXPECT_FALSE(xj["success"].get<bool>()) << "2,000 X-AnyLabeling prompts were run";
  EXPECT_EQ(xj["error"]["code"], "INVALID_REQUEST");
  EXPECT_NE(xj["error"]["message"].get<std::string>().find("2000 prompts"), std::string::npos) << x->body;
  EXPECT_EQ(decodes(*server), 0) << "refused prompts must not reach the model";

  std::string config = R"(<View><Image name="image" value="$image"/><BrushLabels name="brush" toName="image">)";
  for (int i = 0; i < 2000; ++i) config += "<Label value=\"L" + std::to_string(i) + "\"/>";
  config += "</BrushLabels></View>";
  auto ls = c.Post("/predict", ls_predict_body("data:image/png;base64," + sam3::base64_encode(png()), config).dump(), "application/json");
  ASSERT_TRUE(ls);
  EXPECT_EQ(ls->status, 413) << ls->body;
  EXPECT_NE(ls->body.find("label config"), std::string::npos) << ls->body;
  EXPECT_EQ(decodes(*server), 0);
}

TEST(AbandonedRequests, ARunningJobStopsBetweenPromptsOnceItsClientLeaves) {
  auto server = serve({"--max-prompts", "1000", "--max-request-mb", "16"});
  {
    RawConnection leaving(server->port());
    ASSERT_TRUE(leaving.send(raw_post("/v1/segment", many_prompts(1000, 8))));
    for (int i = 0; i < 600 && decodes(*server) < 1; ++i) std::this_thread::sleep_for(50ms);
    ASSERT_GE(decodes(*server), 1) << "the job never started";
  }  // the client leaves while its job runs
  const int ran = settled_decodes(*server);
  EXPECT_LT(ran, 500) << "the job ran on for its client that had left";
}

// Encodes and decodes ended by their StopToken, as /v1/info counts them.
int stopped_runs(ServerProcess& server) {
  httplib::Client c("127.0.0.1", server.port());
  auto r = c.Get("/v1/info");
  return r && r->status == 200 ? json::parse(r->body)["model"]["stopped"].get<int>() : -1;
}

// Polls until `stopped_runs` reaches `n`; the seconds it took (at most 30).
double seconds_until_stopped(ServerProcess& server, int n) {
  const auto t0 = Clock::now();
  while (stopped_runs(server) < n && Clock::now() - t0 < 30s) std::this_thread::sleep_for(50ms);
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The usls-slow model's encoder runs about a minute (a chain of heavy nodes): a running encode
// whose client left, or whose --timeout passed, must end inside its run, not hold the only
// worker to its end.
TEST(AbandonedRequests, ARunningEncodeStopsInsideItsRunWhenItsClientLeavesOrItsTimeIsUp) {
  std::unique_ptr<ServerProcess> server(sam3::test::start_serve("usls-slow", {"--workers", "1", "--timeout", "4"}));
  for (int i = 0; i < 6 && !sam3::test::wait_healthy(server->port()); ++i) {
  }  // the first load prepares a graph of 3000 nodes
  ASSERT_TRUE(sam3::test::wait_healthy(server->port()));
  const std::string image = png();
  {
    RawConnection leaving(server->port());
    ASSERT_TRUE(leaving.send("POST /v1/images HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\nContent-Length: " +
                             std::to_string(image.size()) + "\r\n\r\n" + image));
    std::this_thread::sleep_for(1500ms);  // the encode is running
  }                                       // the client leaves
  EXPECT_LT(seconds_until_stopped(*server, 1), 10.0) << "the encode ran on after its client left";
  EXPECT_EQ(stopped_runs(*server), 1);

  httplib::Client c("127.0.0.1", server->port());
  c.set_read_timeout(120, 0);
  const auto t0 = Clock::now();
  auto r = c.Post("/v1/images", image, "image/png");  // the worker is free again: this one runs to its --timeout
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503) << r->body;
  EXPECT_NE(r->body.find("timeout"), std::string::npos) << r->body;
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 15.0);
  EXPECT_LT(seconds_until_stopped(*server, 2), 10.0) << "the encode ran on after the request's time was up";
  httplib::Client info("127.0.0.1", server->port());
  EXPECT_EQ(json::parse(info.Get("/v1/info")->body)["model"]["image_encodes"], 0) << "no encode ran to its end";
}

TEST(AbandonedRequests, ARequestsTimeoutCoversEveryPrompt) {
  auto server = serve({"--max-prompts", "1000", "--max-request-mb", "16", "--timeout", "2"});
  httplib::Client c("127.0.0.1", server->port());
  c.set_read_timeout(120, 0);
  auto r = c.Post("/v1/segment", many_prompts(1000, 8), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503) << r->body.substr(0, 300);
  EXPECT_NE(r->body.find("timeout"), std::string::npos) << r->body.substr(0, 300);
  EXPECT_LT(settled_decodes(*server), 1000) << "the job went on after the request's time was up";
}

TEST(AbandonedRequests, FetchesAreBoundedAndStopWhenTheirClientLeaves) {
  BlackHole hole;
  StandIn good;
  const std::string image = png();
  good.http().Get("/scene.png", [image](const httplib::Request&, httplib::Response& res) { res.set_content(image, "image/png"); });
  good.start();
  auto server = serve({"--fetch-host", "127.0.0.1:" + std::to_string(hole.port()), "--fetch-host",
                       "127.0.0.1:" + std::to_string(good.port()), "--max-fetches", "2", "--fetch-timeout", "300"});
  const std::string stuck = ls_predict_body(hole.url() + "/never.png").dump();
  httplib::Client c("127.0.0.1", server->port());
  c.set_read_timeout(30, 0);
  {
    std::vector<RawConnection> waiting;
    for (int i = 0; i < 2; ++i) {
      waiting.emplace_back(server->port());
      ASSERT_TRUE(waiting.back().send(raw_post("/predict", stuck)));
    }
    std::this_thread::sleep_for(1s);  // both fetches in flight
    const auto t0 = Clock::now();
    auto third = c.Post("/predict", ls_predict_body(good.url() + "/scene.png").dump(), "application/json");
    ASSERT_TRUE(third);
    EXPECT_EQ(third->status, 503) << third->body;
    EXPECT_NE(third->body.find("--max-fetches"), std::string::npos) << third->body;
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 5) << "a fetch beyond the bound must not wait";
    // Uploads are not held up by fetches waiting on a silent host.
    httplib::Client upload("127.0.0.1", server->port());
    upload.set_read_timeout(20, 0);
    auto up = upload.Post("/v1/images", image, "image/png");
    ASSERT_TRUE(up) << "an upload got no answer while fetches hung";
    EXPECT_EQ(up->status, 200) << up->body;
  }  // both clients leave: their fetches stop and give back their places
  int status = 0;
  for (int i = 0; i < 20 && status != 200; ++i) {
    auto r = c.Post("/predict", ls_predict_body(good.url() + "/scene.png").dump(), "application/json");
    status = r ? r->status : 0;
    if (status != 200) std::this_thread::sleep_for(500ms);
  }
  EXPECT_EQ(status, 200) << "the fetches of clients that left still held their places (--fetch-timeout is 300 s)";
}

TEST(AbandonedRequests, AFetchCountsAgainstTheRequestsTimeout) {
  BlackHole hole;
  auto server = serve({"--fetch-host", "127.0.0.1:" + std::to_string(hole.port()), "--fetch-timeout", "300", "--timeout", "2"});
  httplib::Client c("127.0.0.1", server->port());
  c.set_read_timeout(60, 0);
  const auto t0 = Clock::now();
  auto r = c.Post("/predict", ls_predict_body(hole.url() + "/never.png").dump(), "application/json");
  ASSERT_TRUE(r) << "no answer within 60 s: the fetch ignored --timeout";
  EXPECT_EQ(r->status, 503) << r->body;
  EXPECT_NE(r->body.find("--timeout"), std::string::npos) << r->body;
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 30) << "the fetch ran on past the request's 2 s";
}

}  // namespace
