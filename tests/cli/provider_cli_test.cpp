// --provider on segment, label and serve as a user runs them: cpu and auto work, a provider the
// loaded ONNX Runtime lacks is refused with one line and exit code 5 (the server before it
// listens), malformed lists are usage errors, and --version lists what there is.
#include <gtest/gtest.h>

#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "sam3/execution_provider.h"
#include "sam3/export.h"
#include "support/files.h"
#include "support/run_command.h"
#include "support/serve.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;
using sam3::test::quote;
using sam3::test::run_command;

const std::string kSam3 = SAM3_CLI_PATH;
const char* const kMissing[] = {"cuda", "tensorrt", "openvino", "coreml", "dml"};

// Whether the provider can start here (a listed one may lack its library).
bool usable(const std::string& name) {
  const auto all = sam3::usable_execution_providers();
  return std::find(all.begin(), all.end(), name) != all.end();
}

class ProviderCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = sam3::test::fresh_test_dir("sam3_provider_cli");
    image_ = dir_ / "scene.png";
    sam3::write_file_atomic(image_, sam3::encode_rgb_png(sam3::test::make_scene(false).image));
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string models() const { return quote((sam3::test::test_models_dir() / "usls").string()); }
  std::string segment(const std::string& provider) const {
    return kSam3 + " segment --models " + models() + " -i " + quote(image_.string()) + " -p red --json " + provider;
  }
  fs::path dir_, image_;
};

TEST_F(ProviderCli, VersionListsTheProvidersOfTheLoadedOnnxRuntime) {
  const auto r = run_command(kSam3 + " --version");
  ASSERT_EQ(r.exit_code, 0);
  std::string listed;
  for (const auto& p : sam3::usable_execution_providers()) listed += (listed.empty() ? "" : ", ") + p;
  EXPECT_NE(r.out.find("execution providers: " + listed + "\n"), std::string::npos) << r.out;
}

TEST_F(ProviderCli, CpuAndAutoSegmentAsTheDefaultDoes) {
  const auto reference = run_command(segment(""));
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  const auto want = nlohmann::json::parse(reference.out)["images"][0]["prompts"][0]["instances"];
  ASSERT_EQ(want.size(), 2u);
  for (const char* p : {"--provider cpu", "--provider auto", "--provider cuda,cpu", "--provider cuda --provider cpu"}) {
    const auto r = run_command(segment(p));
    ASSERT_EQ(r.exit_code, 0) << p << ": " << r.err;
    const auto got = nlohmann::json::parse(r.out)["images"][0]["prompts"][0]["instances"];
    ASSERT_EQ(got.size(), want.size()) << p;
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i]["mask"], want[i]["mask"]) << p;
    if (!usable("cuda") && std::string(p).find("cuda") != std::string::npos) {
      EXPECT_EQ(r.err.rfind("sam3: warning: execution providers: cuda ", 0), 0u) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
    }
  }
  if (sam3::usable_execution_providers() == std::vector<std::string>{"cpu"}) {
    const auto r = run_command(segment("--provider auto"));
    EXPECT_EQ(r.err.rfind("sam3: warning: provider auto: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("; running on cpu\n"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
  }
}

TEST_F(ProviderCli, MissingProvidersAreRefusedWithOneLineAndExitCode5) {
  int refused = 0;
  for (const char* name : kMissing) {
    if (usable(name)) continue;
    ++refused;
    const auto r = run_command(segment(std::string("--provider ") + name));
    EXPECT_EQ(r.exit_code, 5) << name << ": " << r.err;
    EXPECT_EQ(r.out, "") << name;
    EXPECT_EQ(r.err.rfind(std::string("sam3: error: execution provider '") + name + "' is ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("Using a GPU"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
  }
  if (!usable("tensorrt")) {  // label refuses before it writes anything
    const fs::path out = dir_ / "labels";
    const auto r = run_command(kSam3 + " label --models " + models() + " " + quote(image_.string()) + " -p red --out " +
                               quote(out.string()) + " --provider tensorrt");
    EXPECT_EQ(r.exit_code, 5) << r.err;
    EXPECT_NE(r.err.find("execution provider 'tensorrt' is "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("TensorRT libraries"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << "nothing written";
  }
  if (refused == 0) GTEST_SKIP() << "this ONNX Runtime has every provider";
}

TEST_F(ProviderCli, MalformedProvidersAreUsageErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {"--provider gpu", "unknown execution provider 'gpu'; use one of: tensorrt, cuda, coreml, dml, openvino, cpu, auto"},
      {"--provider cuda:device_id=first", "device_id must be a device number 0 or more"},
      {"--provider cuda:devcie_id=1", "cuda does not take the option 'devcie_id'; it takes: device_id,"},
      {"--provider cpu:threads=4", "cpu takes no options"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = run_command(segment(args));
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
  }
  // A list that is wrong as a whole is refused before the model loads.
  const auto r = run_command(segment("--provider cpu,cuda"));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("put cpu last"), std::string::npos) << r.err;
}

TEST_F(ProviderCli, ServeRefusesAMissingProviderAtStartAndInfoNamesWhatSessionsRunOn) {
  if (!usable("cuda")) {
    // Bounded: a server that started anyway would be ended by timeout (exit 124).
    const auto r = run_command("timeout 60 " + kSam3 + " serve --models " + models() + " --port 0 --provider cuda");
    EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
    EXPECT_EQ(r.out.find("listening"), std::string::npos) << r.out;
    EXPECT_EQ(r.err.rfind("sam3: error: execution provider 'cuda' is ", 0), 0u) << r.err;
  }
  std::unique_ptr<sam3::test::ServerProcess> server(sam3::test::start_serve("usls", {"--provider", "auto"}));
  ASSERT_GT(server->port(), 0);
  httplib::Client c("127.0.0.1", server->port());
  const auto r = c.Get("/v1/info");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const auto info = nlohmann::json::parse(r->body);
  const auto expected = sam3::resolve_execution_providers({{"auto", {}}});
  using Names = std::vector<std::string>;
  EXPECT_EQ(info["model"]["providers"].get<Names>(), expected) << r->body;
  ASSERT_GE(info["model"]["sessions"].size(), 3u) << r->body;
  for (const auto& s : info["model"]["sessions"]) EXPECT_EQ(s["providers"].get<Names>(), expected) << s;
  EXPECT_EQ(info["versions"]["onnxruntime_providers"].get<Names>(), sam3::available_execution_providers());
  EXPECT_EQ(server->stop(), 0);
}

}  // namespace
