// The attention fusion replaces exactly the patterns it should, and the fused graphs compute
// the same results as the originals (within float rounding) in ONNX Runtime.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <regex>

#include "optimize/onnx_attention.h"
#include "runtime/session.h"
#include "sam3/error.h"
#include "sam3/export.h"
#include "support/files.h"
#include "support/random_feeds.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> attention_models() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(sam3::test::test_models_dir() / "attention")) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// "scaled_4d.fuse1.onnx" -> 1
int expected_fusions(const fs::path& file) {
  std::smatch m;
  const std::string name = file.filename().string();
  if (!std::regex_search(name, m, std::regex(R"(\.fuse(\d+)\.onnx$)"))) ADD_FAILURE() << name;
  return std::stoi(m[1]);
}

sam3::runtime::SessionConfig uncached() {
  sam3::runtime::SessionConfig config;
  config.cache.enabled = false;
  return config;
}

// Runs `session` on `inputs`, filling in random values for the ones not given yet.
std::map<std::string, std::vector<float>> run(const sam3::runtime::Session& session, std::map<std::string, std::vector<float>>& inputs) {
  return sam3::test::run_on_random_inputs(session, inputs, 11);
}

void expect_same(const std::map<std::string, std::vector<float>>& want, const std::map<std::string, std::vector<float>>& got,
                 const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (const auto& [name, values] : want) {
    const auto& other = got.at(name);
    ASSERT_EQ(values.size(), other.size()) << what << " " << name;
    double worst = 0;
    for (size_t i = 0; i < values.size(); ++i) worst = std::max(worst, std::abs(double(values[i]) - other[i]));
    EXPECT_LT(worst, 1e-5) << what << " output " << name;
  }
}

TEST(AttentionFusion, FusesExactlyTheAttentionItCanComputeBlockwise) {
  const auto files = attention_models();
  ASSERT_EQ(files.size(), 8u) << "tools/make_attention_models.py writes eight graphs";
  for (const auto& file : files) {
    const std::string original = sam3::test::read_file(file);
    sam3::optimize::AttentionFusionStats stats;
    const std::string fused = sam3::optimize::fuse_attention(original, &stats);
    const int expected = expected_fusions(file);
    EXPECT_EQ(stats.fused, expected) << file.filename();
    if (expected == 0) {
      EXPECT_EQ(fused, original) << file.filename() << ": untouched";
      continue;
    }
    EXPECT_NE(fused.find("MultiHeadAttention"), std::string::npos) << file.filename();
    EXPECT_EQ(fused.find("Softmax"), std::string::npos) << file.filename() << ": every Softmax replaced";
    sam3::optimize::fuse_attention(fused, &stats);
    EXPECT_EQ(stats.fused, 0) << file.filename() << ": nothing left to fuse the second time";
  }
}

// The browser's rewrite copies a file only when something is fused (the text encoder has
// nothing): fuse_attention_if_any answers nullopt then, else what fuse_attention writes.
TEST(AttentionFusion, IfAnyCopiesNothingWhenNothingIsFused) {
  for (const auto& file : attention_models()) {
    const std::string original = sam3::test::read_file(file);
    sam3::optimize::AttentionFusionStats stats;
    const auto fused = sam3::optimize::fuse_attention_if_any(original, &stats);
    EXPECT_EQ(fused.has_value(), expected_fusions(file) > 0) << file.filename();
    EXPECT_EQ(stats.fused, expected_fusions(file)) << file.filename();
    if (fused) EXPECT_EQ(*fused, sam3::optimize::fuse_attention(original, nullptr)) << file.filename();
  }
}

TEST(AttentionFusion, FusedGraphsComputeTheSameResults) {
  const fs::path dir = sam3::test::fresh_test_dir("sam3_attention");
  for (const auto& file : attention_models()) {
    if (expected_fusions(file) == 0) continue;
    const fs::path fused_file = dir / file.filename();
    sam3::write_file_atomic(fused_file, sam3::optimize::fuse_attention(sam3::test::read_file(file), nullptr));
    std::map<std::string, std::vector<float>> inputs;
    expect_same(run(sam3::runtime::Session(file, uncached()), inputs), run(sam3::runtime::Session(fused_file, uncached()), inputs),
                file.filename().string());
  }
}

TEST(AttentionFusion, ExternalWeightsAreFusedInMemoryAndReadFromTheirFolder) {
  const fs::path dir = sam3::test::fresh_test_dir("sam3_attention");
  for (const auto& e : fs::directory_iterator(sam3::test::test_models_dir() / "attention" / "external")) {
    fs::copy_file(e.path(), dir / e.path().filename());
  }
  const sam3::runtime::Session fused(dir / "projected.onnx", sam3::runtime::SessionConfig{});
  EXPECT_EQ(fused.prepared().fused_attention, 2);
  EXPECT_FALSE(fs::exists(dir / ".sam3-cache")) << "nothing is saved for files with external weights";
  std::map<std::string, std::vector<float>> inputs;
  expect_same(run(sam3::runtime::Session(dir / "projected.onnx", uncached()), inputs), run(fused, inputs), "external");
}

TEST(AttentionFusion, RejectsBytesThatAreNotAModel) { EXPECT_THROW(sam3::optimize::fuse_attention("not a model", nullptr), sam3::Error); }

// onnx_wire_fuzz found a Softmax read by a MatMul that has no output: reading that output
// crashed every load of such a file.
TEST(AttentionFusion, NodesWithoutTheirInputsOrOutputsAreLeftAlone) {
  const std::string bytes = sam3::test::read_file(fs::path(SAM3_TEST_DATA_DIR) / "fuzz" / "onnx-attention-matmul-without-output.onnx");
  sam3::optimize::AttentionFusionStats stats;
  try {
    sam3::optimize::fuse_attention(bytes, &stats);
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), sam3::ErrorCode::kModelMismatch) << e.what();
  }
  EXPECT_EQ(stats.fused, 0);
}

}  // namespace
