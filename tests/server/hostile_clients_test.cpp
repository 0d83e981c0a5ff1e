// `sam3 serve` under clients that misbehave on purpose: limits and keys are enforced before a
// body is read, slow or idle connections cannot starve others, shutdown is bounded, work for
// clients that left is dropped, and only this machine's names and origins are answered.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "sam3/base64.h"
#include "sam3/export.h"
#include "server.h"
#include "support/raw_http.h"
#include "support/run_command.h"
#include "support/server_process.h"
#include "support/test_images.h"

namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using sam3::test::RawConnection;
using sam3::test::ServerProcess;
using sam3::test::status_of;
using Clock = std::chrono::steady_clock;

const std::string kSam3 = SAM3_CLI_PATH;

ServerProcess start(std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {kSam3, "serve", "--models", (sam3::test::test_models_dir() / "usls").string(), "--port", "0"};
  if (std::find(extra.begin(), extra.end(), "--max-request-mb") == extra.end()) extra.insert(extra.end(), {"--max-request-mb", "2"});
  args.insert(args.end(), extra.begin(), extra.end());
  ServerProcess server(args);
  httplib::Client c("127.0.0.1", server.port());
  for (int i = 0; i < 200; ++i) {
    if (auto r = c.Get("/health"); r && r->status == 200) break;
    std::this_thread::sleep_for(50ms);
  }
  return server;
}

long rss_mb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6)) / 1024;
  }
  return -1;
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::string request(const std::string& method, const std::string& path, const std::string& headers = "", const std::string& body = "") {
  return method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers +
         (body.empty() ? "" : "Content-Length: " + std::to_string(body.size()) + "\r\n") + "\r\n" + body;
}

// 64 prompts (the most a request takes) on the scene scaled up keep a worker busy a while
// (scale 8: about half a second).
std::string big_scene_request(int prompts, int scale = 4) {
  const auto big = sam3::test::upscale(sam3::test::make_scene(false).image, scale);
  json body = {{"image", sam3::base64_encode(sam3::encode_rgb_png(big))}, {"prompts", json::array()}};
  for (int i = 0; i < prompts; ++i) body["prompts"].push_back(i % 2 ? "red" : "blue");
  return body.dump();
}

TEST(HostileClients, AnAnnouncedHugeBodyIsRefusedAtOnceUnread) {
  auto server = start();
  RawConnection c(server.port());
  const auto t0 = Clock::now();
  ASSERT_TRUE(
      c.send("POST /v1/images HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\n"
             "Content-Length: 314572800\r\n\r\n"));
  const auto answer = c.receive(5s, "\r\n\r\n");
  EXPECT_EQ(status_of(answer), 413) << answer;
  EXPECT_LT(ms_since(t0), 1000) << "the 413 must not wait for the body";
}

TEST(HostileClients, AChunkedBodyIsLimitedLikeAnyOther) {
  auto server = start();
  RawConnection c(server.port());
  ASSERT_TRUE(
      c.send("POST /v1/images HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\n"
             "Transfer-Encoding: chunked\r\n\r\n"));
  const std::string chunk = "100000\r\n" + std::string(0x100000, 'x') + "\r\n";  // 1 MiB a chunk
  int sent = 0;
  std::string answer;
  for (; sent < 64 && answer.empty(); ++sent) {  // at most 64 MiB against a limit of 2
    if (!c.send(chunk)) break;
    answer = c.receive(20ms);
  }
  if (answer.empty()) answer = c.receive(2s);
  EXPECT_EQ(status_of(answer), 413) << answer.substr(0, 200);
  EXPECT_LE(sent, 8) << "the server kept reading past its limit";
  EXPECT_LT(rss_mb(server.pid()), 400) << "the body was held in memory";
}

TEST(HostileClients, TheKeyIsCheckedBeforeTheBodyIsRead) {
  auto server = start({"--api-key", "s3cret"});
  RawConnection c(server.port());
  const auto t0 = Clock::now();
  ASSERT_TRUE(
      c.send("POST /v1/images HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\n"
             "Content-Length: 2000000\r\n\r\n"));
  const auto answer = c.receive(5s, "\r\n\r\n");
  EXPECT_EQ(status_of(answer), 401) << answer;
  EXPECT_LT(ms_since(t0), 1000);
}

TEST(HostileClients, SlowAndIdleConnectionsDoNotStarveOthers) {
  auto server = start({"--header-timeout", "2", "--idle-timeout", "2", "--max-connections", "64"});
  // Ten clients trickling their headers a byte at a time, and 200 idle connections.
  std::vector<RawConnection> slow, idle;
  for (int i = 0; i < 10; ++i) slow.emplace_back(server.port());
  for (int i = 0; i < 200; ++i) idle.emplace_back(server.port());
  const std::string head = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  httplib::Client c("127.0.0.1", server.port());
  c.set_connection_timeout(2, 0);
  c.set_read_timeout(2, 0);
  for (size_t k = 0; k < 6; ++k) {
    for (auto& s : slow) s.send(std::string(1, head[k]));
    const auto t0 = Clock::now();
    auto r = c.Get("/health");
    ASSERT_TRUE(r) << "a new client got no answer while slow and idle clients were connected";
    EXPECT_EQ(r->status, 200);
    EXPECT_LT(ms_since(t0), 500);
    std::this_thread::sleep_for(500ms);
  }
  // Past the header deadline the trickling clients are dropped.
  std::this_thread::sleep_for(1s);
  int dropped = 0;
  for (auto& s : slow) dropped += s.closed_by_peer(200ms);
  EXPECT_EQ(dropped, 10);
}

TEST(HostileClients, SigtermWithASlowClientConnectedStopsWithinSeconds) {
  auto server = start();
  RawConnection slow(server.port());
  slow.send("POST /v1/segment HTTP/1.1\r\nHost: 127.0.0.1\r\n");  // and then nothing
  std::this_thread::sleep_for(200ms);
  const auto t0 = Clock::now();
  EXPECT_EQ(server.stop(SIGTERM), 0);
  EXPECT_LT(ms_since(t0), 3000);
}

TEST(HostileClients, WorkForClientsThatLeftIsDropped) {
  auto server = start({"--workers", "1", "--queue", "8", "--max-request-mb", "8"});
  const std::string body = big_scene_request(64, 8);
  {
    std::vector<RawConnection> leaving;
    for (int i = 0; i < 6; ++i) {
      leaving.emplace_back(server.port());
      leaving.back().send(request("POST", "/v1/segment", "Content-Type: application/json\r\n", body));
    }
    std::this_thread::sleep_for(150ms);  // read and queued; the first one running
  }                                      // all six close their connections
  httplib::Client c("127.0.0.1", server.port());
  c.set_read_timeout(120, 0);
  const auto t0 = Clock::now();
  auto r = c.Post("/v1/segment", big_scene_request(1), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  const double waited = ms_since(t0);
  auto info = json::parse(c.Get("/v1/info")->body);
  // The job running when they left (64 prompts, perhaps a second one) and this one ran; not all six.
  EXPECT_LE(info["model"]["decodes"].get<int>(), 2 * 64 + 1) << "abandoned jobs were run; waited " << waited << " ms";
}

TEST(HostileClients, OnlyThisMachinesNamesAndOriginsAreAnswered) {
  auto server = start({"--allowed-origin", "http://localhost:8081"});
  const auto ask = [&](const std::string& headers, const std::string& method = "GET", const std::string& path = "/v1/info") {
    RawConnection c(server.port());
    c.send(method + " " + path + " HTTP/1.1\r\n" + headers + "\r\n");
    return c.receive(3s, "\r\n\r\n");
  };
  EXPECT_EQ(status_of(ask("Host: evil.example\r\n")), 403) << "DNS rebinding";
  EXPECT_EQ(status_of(ask("Host: 127.0.0.1.evil.example:8080\r\n")), 403);
  EXPECT_EQ(status_of(ask("Host: localhost:1234\r\n")), 200);
  EXPECT_EQ(status_of(ask("Host: [::1]:1234\r\n")), 200);
  EXPECT_EQ(status_of(ask("Host: 127.0.0.1\r\nOrigin: http://evil.example\r\n")), 403) << "cross-site request";
  EXPECT_EQ(status_of(ask("Host: 127.0.0.1:5\r\nOrigin: http://127.0.0.1:5\r\n")), 200) << "same origin";
  const auto cors = ask("Host: 127.0.0.1\r\nOrigin: http://localhost:8081\r\n");
  EXPECT_EQ(status_of(cors), 200);
  EXPECT_NE(cors.find("Access-Control-Allow-Origin: http://localhost:8081"), std::string::npos) << cors;
  const auto preflight =
      ask("Host: 127.0.0.1\r\nOrigin: http://localhost:8081\r\nAccess-Control-Request-Method: POST\r\n", "OPTIONS", "/v1/segment");
  EXPECT_EQ(status_of(preflight), 204) << preflight;
  EXPECT_NE(preflight.find("Access-Control-Allow-Methods"), std::string::npos) << preflight;
}

TEST(HostileClients, HttpIsAnsweredPerTheStandard) {
  auto server = start();
  const auto ask = [&](const std::string& raw) {
    RawConnection c(server.port());
    c.send(raw);
    return c.receive(3s, "\r\n\r\n");
  };
  EXPECT_EQ(status_of(ask("POST /v1/segment HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}")), 400)
      << "two Content-Lengths";
  EXPECT_EQ(status_of(ask("POST /v1/segment HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n")), 400);
  const auto get_post = ask("GET /v1/segment HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(status_of(get_post), 405) << get_post;
  EXPECT_NE(get_post.find("Allow: POST"), std::string::npos) << get_post;
  EXPECT_EQ(status_of(ask("POST /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")), 405);
  EXPECT_EQ(status_of(ask("GET /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")), 404);
  const std::string json_body = R"({"image_id":"0123","prompts":["red"]})";
  EXPECT_EQ(status_of(ask(request("POST", "/v1/segment", "Content-Type: APPLICATION/JSON; Charset=UTF-8\r\n", json_body))), 404)
      << "upper-case media type accepted (then: unknown image id)";
  // Two requests in one write: two answers, in order.
  RawConnection c(server.port());
  c.send(request("GET", "/health") + request("GET", "/nothing"));
  const auto both = c.receive(3s, "not_found");
  const auto second = both.find("HTTP/1.1", 1);
  ASSERT_NE(second, std::string::npos) << both;
  EXPECT_EQ(status_of(both), 200);
  EXPECT_EQ(status_of(both.substr(second)), 404);
}

TEST(HostileClients, HealthAnswersFastWhileEveryWorkerIsBusy) {
  auto server = start({"--workers", "2", "--max-request-mb", "8"});
  const std::string body = big_scene_request(64);
  std::vector<std::thread> busy;
  for (int i = 0; i < 2; ++i) {
    busy.emplace_back([&] {
      httplib::Client c("127.0.0.1", server.port());
      c.set_read_timeout(120, 0);
      c.Post("/v1/segment", body, "application/json");
    });
  }
  std::this_thread::sleep_for(300ms);
  httplib::Client probe("127.0.0.1", server.port());
  double worst = 0;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = Clock::now();
    auto r = probe.Get("/health");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    worst = std::max(worst, ms_since(t0));
  }
  EXPECT_LT(worst, 100) << "ms for /health with both workers busy";
  for (auto& t : busy) t.join();
}

long peak_rss_mb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6)) / 1024;
  }
  return -1;
}

// JSON builds about 40 bytes of memory for each byte of "[[[[": 32 MB of it made the server
// 1.4 GB larger before it said the body was no object. Every route's body is parsed within a
// depth and a value count, refused as soon as it passes either.
TEST(HostileClients, DeepOrHugeJsonIsRefusedBeforeItIsBuilt) {
  ServerProcess server = start({"--max-request-mb", "64"});
  httplib::Client c("127.0.0.1", server.port());
  c.set_read_timeout(120, 0);
  const long before = peak_rss_mb(server.pid());
  const std::string deep = std::string(16 << 20, '[') + std::string(16 << 20, ']');
  std::string wide = "[";
  for (int i = 0; i < 4'100'000; ++i) wide += "0,";
  wide += "0]";
  for (const char* path : {"/v1/segment", "/predict", "/setup", "/v1/predict"}) {
    for (const std::string* body : std::vector<const std::string*>{&deep, &wide}) {
      auto r = c.Post(path, *body, "application/json");
      ASSERT_TRUE(r) << path;
      EXPECT_NE(r->body.find(body == &deep ? "nests deeper than 64" : "more than 4000000 values"), std::string::npos)
          << path << ": " << r->status << " " << r->body.substr(0, 300);
      if (std::string(path) != "/v1/predict") EXPECT_EQ(r->status, 413) << path;  // X-AnyLabeling: success false
    }
  }
  EXPECT_LT(peak_rss_mb(server.pid()) - before, 300) << "MB the server grew by for bodies it refused";
}

// An operator's impossible limits are usage errors naming the option, never a server that
// starts 10^8 handler threads (--queue) or wraps a limit in bytes around to a tiny one.
TEST(ServeOptions, ImpossibleLimitsAreRefusedBeforeAnythingStarts) {
  const std::string models = (sam3::test::test_models_dir() / "usls").string();
  for (const std::string option : {"--queue 100000000", "--max-request-mb 17592186044417", "--cache-mb 17592186044416",
                                   "--timeout 99999999999", "--queue 0", "--timeout nan"}) {
    const auto r =
        sam3::test::run_command("timeout 20 " + std::string(SAM3_CLI_PATH) + " serve --models " + models + " --port 0 " + option);
    EXPECT_EQ(r.exit_code, 2) << option << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(option.substr(0, option.find(' '))), std::string::npos) << option << ": " << r.err;
    EXPECT_EQ(r.out.find("listening"), std::string::npos) << option;
  }
}

TEST(ServerBind, LoopbackIsDecidedByWhatTheNameResolvesTo) {
  EXPECT_TRUE(sam3::server::is_loopback_host("localhost"));
  EXPECT_TRUE(sam3::server::is_loopback_host("127.0.0.2"));
  EXPECT_TRUE(sam3::server::is_loopback_host("::1"));
  EXPECT_FALSE(sam3::server::is_loopback_host("0.0.0.0"));
  EXPECT_FALSE(sam3::server::is_loopback_host("127.0.0.1.nip.invalid")) << "a name is not loopback by its prefix";
}

}  // namespace
