// The int8 products rewritten into float operators (the browser's WebGPU path) compute what the
// integer graph computes, in ONNX Runtime, and leave alone what they cannot take.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "optimize/onnx_int8_as_float.h"
#include "runtime/session.h"
#include "sam3/error.h"
#include "sam3/export.h"
#include "support/files.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;

fs::path linears() { return sam3::test::test_models_dir() / "int8" / "linears.onnx"; }

sam3::rt::SessionConfig as_written() {
  sam3::rt::SessionConfig config;
  config.cache.enabled = false;
  config.cache.int8 = sam3::rt::Int8Weights::kOff;
  config.cache.onednn = false;
  return config;
}

std::map<std::string, std::vector<float>> run(const sam3::rt::Session& session, std::map<std::string, std::vector<float>>& inputs) {
  std::vector<Ort::Value> values;
  std::map<std::string, const OrtValue*> feeds;
  values.reserve(session.inputs().size());
  for (const auto& in : session.inputs()) {
    auto& data = inputs.at(in.name);
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

TEST(Int8AsFloat, RewritesEveryQuantizedProductItCanAndNothingElse) {
  const std::string original = sam3::test::read_file(linears());
  sam3::optimize::Int8AsFloatStats stats;
  const std::string rewritten = sam3::optimize::int8_products_as_float(original, &stats);
  EXPECT_EQ(stats.matmuls, 4);
  EXPECT_EQ(stats.convs, 1);
  EXPECT_EQ(stats.skipped, 1) << "y_kept's product is read by an Add, not a Cast to float";
  EXPECT_EQ(stats.quantizers, 4);
  EXPECT_EQ(rewritten.find("ConvInteger"), std::string::npos);
  EXPECT_NE(rewritten.find("MatMulInteger"), std::string::npos) << "y_kept's product stays";
  EXPECT_NE(rewritten.find("DequantizeLinear"), std::string::npos);
  // Once more: only y_kept's product is left, and it still cannot be taken.
  const std::string again = sam3::optimize::int8_products_as_float(rewritten, &stats);
  EXPECT_EQ(stats.matmuls + stats.convs, 0);
  EXPECT_EQ(stats.skipped, 1);
  EXPECT_EQ(again, rewritten);
}

TEST(Int8AsFloat, ComputesTheIntegerGraphsResults) {
  const fs::path dir = sam3::test::fresh_test_dir("sam3_int8_as_float");
  const fs::path rewritten_file = dir / "linears.onnx";
  sam3::write_file_atomic(rewritten_file, sam3::optimize::int8_products_as_float(sam3::test::read_file(linears()), nullptr));
  const sam3::rt::Session integer(linears(), as_written()), floats(rewritten_file, as_written());
  std::mt19937 rng(22);
  // Activations quantized with zero points 0 (all positive), 255 (all negative), in between; a
  // constant input; all zeros (scale 1 in DynamicQuantizeLinear, any finite one here); a wide range.
  const std::vector<std::pair<float, float>> ranges = {{-1, 1}, {0.5f, 3}, {-7, -0.1f}, {2, 2}, {0, 0}, {-1e4f, 3e4f}};
  const std::map<std::string, size_t> sizes = {{"x_a", 2 * 37 * 64}, {"x_b", 5 * 19}, {"x_c", 3 * 4736}, {"x_img", 3 * 12 * 10}};
  for (const auto& [lo, hi] : ranges) {
    std::uniform_real_distribution<float> value(lo, hi);
    std::map<std::string, std::vector<float>> inputs;
    for (const auto& [name, n] : sizes) {
      inputs[name].resize(n);
      for (float& x : inputs[name]) x = value(rng);
    }
    const auto want = run(integer, inputs), got = run(floats, inputs);
    ASSERT_EQ(want.size(), got.size());
    for (const auto& [name, w] : want) {
      const auto& g = got.at(name);
      ASSERT_EQ(w.size(), g.size()) << name;
      double largest = 0, worst = 0;
      for (size_t i = 0; i < w.size(); ++i) {
        largest = std::max(largest, std::abs(double(w[i])));
        worst = std::max(worst, std::abs(double(w[i]) - g[i]));
      }
      // The same integers up to float rounding of the sums (exact below 2^24).
      EXPECT_LE(worst, 1e-6 * std::max(largest, 1.0)) << name << " on inputs in [" << lo << ", " << hi << "]";
    }
  }
}

TEST(Int8AsFloat, LeavesOldOpsetsAndNonModelsAlone) {
  EXPECT_THROW(sam3::optimize::int8_products_as_float("not a model", nullptr), sam3::Error);
  // The attention test graphs hold no integer products: returned as they are.
  const std::string attention = sam3::test::read_file(sam3::test::test_models_dir() / "attention" / "scaled_4d.fuse1.onnx");
  sam3::optimize::Int8AsFloatStats stats;
  EXPECT_EQ(sam3::optimize::int8_products_as_float(attention, &stats), attention);
  EXPECT_EQ(stats.matmuls + stats.convs + stats.skipped, 0);
}

}  // namespace
