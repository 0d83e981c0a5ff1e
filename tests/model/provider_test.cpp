// Models loaded with named execution providers: cpu and auto find the same instances as the
// default, report what their sessions run on, and a provider the loaded ONNX Runtime lacks is
// refused by Model::load with one line (and one log line tells when auto falls back).
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>

#include "sam3/error.h"
#include "sam3/log.h"
#include "sam3/model.h"
#include "support/segmenters.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;

// Log lines at warning level or above while it lives.
class LogCapture {
 public:
  LogCapture() {
    sam3::set_log_sink([this](sam3::LogLevel level, const std::string& line) {
      std::lock_guard lock(mutex_);
      if (level >= sam3::LogLevel::kWarning) lines_.push_back(line);
    });
  }
  ~LogCapture() { sam3::set_log_sink(nullptr); }
  std::vector<std::string> lines() {
    std::lock_guard lock(mutex_);
    return lines_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

bool cpu_only() { return sam3::usable_execution_providers() == std::vector<std::string>{"cpu"}; }

TEST(Providers, CpuAndAutoSegmentLikeTheDefault) {
  const fs::path dir = sam3::test::test_models_dir() / "usls";
  const auto scene = sam3::test::make_scene(false);
  const auto reference = sam3::test::load_text_segmenter(dir);
  const auto want = reference->segment(reference->encode(scene.image), {"red", {}});
  ASSERT_EQ(want.instances.size(), 2u);
  EXPECT_EQ(reference->model().providers(), std::vector<std::string>{"cpu"});
  for (const char* name : {"cpu", "auto"}) {
    SCOPED_TRACE(name);
    LogCapture log;
    sam3::ModelOptions options;
    options.providers = sam3::parse_execution_providers({name});
    const auto segmenter = sam3::test::load_text_segmenter(dir, options);
    const auto got = segmenter->segment(segmenter->encode(scene.image), {"red", {}});
    const sam3::Model* model = &segmenter->model();
    ASSERT_EQ(got.instances.size(), want.instances.size());
    for (size_t i = 0; i < got.instances.size(); ++i) {
      EXPECT_NEAR(got.instances[i].score, want.instances[i].score, 1e-4f);
      EXPECT_GT(sam3::test::iou_with_rect(got.instances[i].mask, i == 0 ? scene.red_big : scene.red_small), i == 0 ? 0.85 : 0.6);
    }
    EXPECT_EQ(model->providers().back(), "cpu");
    for (const auto& f : model->files()) EXPECT_EQ(f.providers, model->providers()) << f.file;
    if (cpu_only()) {
      EXPECT_EQ(model->providers(), std::vector<std::string>{"cpu"});
      const auto lines = log.lines();
      if (std::string(name) == "auto") {
        ASSERT_EQ(lines.size(), 1u) << "one line saying why auto runs on the CPU";
        EXPECT_EQ(lines[0].rfind("provider auto: ", 0), 0u) << lines[0];
        EXPECT_EQ(lines[0].substr(lines[0].size() - 14), "running on cpu") << lines[0];
        EXPECT_EQ(lines[0].find('\n'), std::string::npos) << lines[0];
      } else {
        EXPECT_TRUE(lines.empty()) << lines.front();
      }
    }
  }
}

TEST(Providers, MissingProviderIsRefusedByLoadBeforeAnyFileIsPrepared) {
  if (!cpu_only()) GTEST_SKIP() << "an accelerator can start here";
  for (const char* name : {"cuda", "tensorrt", "openvino", "coreml", "dml"}) {
    sam3::ModelOptions options;
    options.providers = {{name, {}}};
    try {
      sam3::Model::load(sam3::test::test_models_dir() / "no-such-folder", options);
      ADD_FAILURE() << name << " loaded";
    } catch (const sam3::Error& e) {
      EXPECT_EQ(e.code(), sam3::ErrorCode::kRuntime) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind(std::string("execution provider '") + name + "' is ", 0), 0u) << e.what();
    }
  }
  // A fallback list runs on what there is, saying in one line what it skipped.
  LogCapture log;
  sam3::ModelOptions options;
  options.providers = sam3::parse_execution_providers({"cuda:device_id=0,cpu"});
  const auto model = sam3::Model::load(sam3::test::test_models_dir() / "usls", options);
  EXPECT_EQ(model->providers(), std::vector<std::string>{"cpu"});
  const auto lines = log.lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("execution providers: cuda ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("running on cpu"), std::string::npos) << lines[0];
}

}  // namespace
