// `sam3 serve` for the server tests: the real binary on a free loopback port with generated
// models, returned once /health says the model is ready (bounded wait).
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/server_process.h"
#include "support/test_images.h"

namespace sam3::test {

// Whether /health answered 200 within about 10 s.
inline bool wait_healthy(int port) {
  httplib::Client c("127.0.0.1", port);
  for (int i = 0; i < 200; ++i) {
    if (auto r = c.Get("/health"); r && r->status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// `sam3 serve --models <generated models>/<folder> --port 0 OPTIONS...`, ready.
inline ServerProcess* start_serve(const std::string& folder, const std::vector<std::string>& options = {}) {
  std::vector<std::string> args = {SAM3_CLI_PATH, "serve", "--models", (test_models_dir() / folder).string(), "--port", "0"};
  args.insert(args.end(), options.begin(), options.end());
  auto* server = new ServerProcess(args);
  if (server->port() > 0) wait_healthy(server->port());
  return server;
}

}  // namespace sam3::test

namespace sam3::test {

// A test suite sharing one `sam3 serve` that holds the usls text model and the interactive
// (tracker) model, started once for the suite.
class TextAndClicksServer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = start_serve("usls", {"--interactive-models", (test_models_dir() / "tracker").string(), "--threads", "1"});
    ASSERT_GT(server_->port(), 0) << server_->first_line();
  }
  static void TearDownTestSuite() {
    EXPECT_EQ(server_->stop(SIGTERM), 0);
    delete server_;
    server_ = nullptr;
  }
  static inline ServerProcess* server_ = nullptr;
};

}  // namespace sam3::test
