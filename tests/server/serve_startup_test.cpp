// sam3 serve's start and end, as a new user's trial met them: a mistyped model folder, a host
// name that does not resolve, a request still running when the shutdown's time is over, and an
// HTTP/1.0 client that sends no Host.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "sam3/base64.h"
#include "sam3/export.h"
#include "support/files.h"
#include "support/run_command.h"
#include "support/serve.h"
#include "support/server_process.h"
#include "support/test_images.h"

namespace {

using nlohmann::json;
using sam3::test::ServerProcess;

const std::string kSam3 = SAM3_CLI_PATH;

// `sam3 serve ARGS` that must end by itself: bounded, so a server left running fails the test.
sam3::test::CommandResult serve_expecting_exit(const std::string& args) {
  return sam3::test::run_command("timeout 60 " + kSam3 + " serve --port 0 " + args + " </dev/null");
}

// A model folder that does not exist: sam3 serve said "listening", then "cannot load the model",
// and answered 503 model_unavailable forever.
TEST(ServeStartup, AMissingModelFolderIsRefusedBeforeListening) {
  const auto r = serve_expecting_exit("--models /nonexistent/sam3-models");
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_NE(r.err.find("/nonexistent/sam3-models"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("listening"), std::string::npos) << "never listened: " << r.out;
}

TEST(ServeStartup, AFolderOfNoKnownLayoutIsRefusedBeforeListening) {
  const auto dir = sam3::test::fresh_test_dir("sam3_serve_no_layout");
  const auto r = serve_expecting_exit("--models " + dir.string());
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_NE(r.err.find("not a SAM3 model directory"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("listening"), std::string::npos) << r.out;
}

TEST(ServeStartup, ATextModelGivenAsTheInteractiveOneIsRefusedBeforeListening) {
  const auto usls = (sam3::test::test_models_dir() / "usls").string();
  const auto r = serve_expecting_exit("--models " + usls + " --interactive-models " + usls);
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_NE(r.err.find("not SAM3's interactive one"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("listening"), std::string::npos) << r.out;
}

// It said "refusing to listen on nosuchhost.invalid without --api-key: it is not (only) this machine".
TEST(ServeStartup, AHostNameThatDoesNotResolveIsSaidSo) {
  const auto r = serve_expecting_exit("--models " + (sam3::test::test_models_dir() / "usls").string() + " --host nosuchhost.invalid");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("nosuchhost.invalid does not resolve"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--api-key"), std::string::npos) << "the key is not the problem: " << r.err;
}

// What a raw request on loopback gets back: the status line and the rest.
std::string raw_exchange(int port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{30, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string answer;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) answer.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return answer;
}

// HTTP/1.0 lets a client leave Host out: on loopback it is answered (it got 403 forbidden_host);
// HTTP/1.1 without Host is a malformed request (400).
TEST(ServeStartup, AnHttp10RequestWithoutHostIsAnsweredOnLoopback) {
  std::unique_ptr<ServerProcess> server(sam3::test::start_serve("usls"));
  ASSERT_GT(server->port(), 0) << server->first_line();
  const auto answer = raw_exchange(server->port(), "GET /health HTTP/1.0\r\n\r\n");
  EXPECT_TRUE(answer.starts_with("HTTP/1.0 200")) << answer;
  EXPECT_NE(answer.find("\"UP\""), std::string::npos) << answer;
  const auto eleven = raw_exchange(server->port(), "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(eleven.starts_with("HTTP/1.1 400")) << eleven;
  EXPECT_NE(eleven.find("Host"), std::string::npos) << eleven;
  EXPECT_EQ(server->stop(SIGTERM), 0);
}

// A request still running when --shutdown-timeout is over lost its connection with no answer
// (curl: 000); it is answered 503 shutting_down.
TEST(ServeStartup, ARequestStillRunningAtShutdownIsAnswered503) {
  std::unique_ptr<ServerProcess> server(
      sam3::test::start_serve("tracker", {"--shutdown-timeout", "0", "--threads", "1", "--timeout", "600"}));
  ASSERT_GT(server->port(), 0) << server->first_line();
  const std::string png = sam3::encode_rgb_png(sam3::test::make_click_scene().image);
  // "Everything" on a 256 x 256 grid: 1024 decoder runs, far longer than the shutdown's 0 s.
  const json request = {{"image", sam3::base64_encode(png)}, {"prompts", {{{"everything", true}, {"points_per_side", 256}}}}};
  std::optional<httplib::Result> answer;
  std::thread client([&] {
    httplib::Client c("127.0.0.1", server->port());
    c.set_read_timeout(300, 0);
    answer.emplace(c.Post("/v1/segment", request.dump(), "application/json"));
  });
  // Once the image is encoded, the request is running its decoder runs.
  httplib::Client probe("127.0.0.1", server->port());
  bool running = false;
  for (int i = 0; i < 1200 && !running; ++i) {
    const auto info = probe.Get("/v1/info");
    running = info && json::parse(info->body, nullptr, false)["model"].value("image_encodes", 0) >= 1;
    if (!running) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!running) {  // the client's thread is joined before the test ends
    ::kill(server->pid(), SIGKILL);
    client.join();
    FAIL() << "the request never started";
  }
  ::kill(server->pid(), SIGTERM);
  client.join();
  ASSERT_TRUE(answer && *answer) << "the connection was cut with no HTTP answer";
  const auto& r = **answer;
  EXPECT_EQ(r.status, 503) << r.body.substr(0, 300);
  const auto j = json::parse(r.body, nullptr, false);
  EXPECT_EQ(j["error"]["code"], "shutting_down") << r.body.substr(0, 300);
  EXPECT_EQ(server->exit_within(std::chrono::seconds(60)), 0);
}

}  // namespace
