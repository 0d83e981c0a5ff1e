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
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> attention_models() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(sam3::test::test_models_dir() / "attention")) files.push_back(e.path());
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

std::map<std::string, std::vector<float>> run(const fs::path& file, std::map<std::string, std::vector<float>>& inputs) {
  sam3::rt::SessionConfig config;
  config.cache.enabled = false;
  const sam3::rt::Session session(file, config);
  std::vector<Ort::Value> values;
  std::map<std::string, const OrtValue*> feeds;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.5f);
  values.reserve(session.inputs().size());
  for (const auto& in : session.inputs()) {
    size_t n = 1;
    for (auto d : in.shape) n *= static_cast<size_t>(d);
    auto& data = inputs[in.name];
    if (data.empty()) {
      data.resize(n);
      for (auto& x : data) x = normal(rng);
    }
    values.push_back(sam3::rt::view(data.data(), data.size(), in.shape));
    feeds[in.name] = values.back();
  }
  std::map<std::string, std::vector<float>> out;
  for (auto& [name, value] : session.run(feeds)) {
    const float* p = value.GetTensorData<float>();
    out[name].assign(p, p + value.GetTensorTypeAndShapeInfo().GetElementCount());
  }
  return out;
}

TEST(AttentionFusion, FusesExactlyTheAttentionItCanComputeBlockwise) {
  const auto files = attention_models();
  ASSERT_EQ(files.size(), 7u) << "tools/make_attention_models.py writes seven graphs";
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

TEST(AttentionFusion, FusedGraphsComputeTheSameResults) {
  const fs::path dir = sam3::test::fresh_test_dir("sam3_attention");
  for (const auto& file : attention_models()) {
    if (expected_fusions(file) == 0) continue;
    const fs::path fused_file = dir / file.filename();
    sam3::write_file_atomic(fused_file, sam3::optimize::fuse_attention(sam3::test::read_file(file), nullptr));
    std::map<std::string, std::vector<float>> inputs;
    const auto want = run(file, inputs);
    const auto got = run(fused_file, inputs);
    ASSERT_EQ(want.size(), got.size()) << file.filename();
    for (const auto& [name, values] : want) {
      const auto& other = got.at(name);
      ASSERT_EQ(values.size(), other.size()) << file.filename() << " " << name;
      double worst = 0;
      for (size_t i = 0; i < values.size(); ++i) worst = std::max(worst, std::abs(double(values[i]) - other[i]));
      EXPECT_LT(worst, 1e-5) << file.filename() << " output " << name;
    }
  }
}

TEST(AttentionFusion, RejectsBytesThatAreNotAModel) {
  EXPECT_THROW(sam3::optimize::fuse_attention("not a model", nullptr), sam3::Error);
}

}  // namespace
