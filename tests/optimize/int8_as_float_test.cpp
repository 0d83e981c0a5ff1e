// The int8 products rewritten into float operators (the browser's WebGPU path) compute what the
// integer graph computes exactly, and leave alone what they cannot take.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numeric>
#include <random>

#include "optimize/onnx_int8_as_float.h"
#include "runtime/session.h"
#include "sam3/error.h"
#include "sam3/export.h"
#include "support/files.h"
#include "support/int8_reference.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;

fs::path linears() { return sam3::test::test_models_dir() / "int8" / "linears.onnx"; }

// ONNX Runtime on the file as written, with graph optimizations at `level`.
std::map<std::string, std::vector<float>> run(const fs::path& file, GraphOptimizationLevel level,
                                              std::map<std::string, std::vector<float>>& inputs) {
  Ort::SessionOptions options;
  options.SetGraphOptimizationLevel(level);
  options.SetIntraOpNumThreads(2);
  Ort::Session session(sam3::runtime::env(), file.c_str(), options);
  Ort::AllocatorWithDefaultOptions allocator;
  std::vector<Ort::Value> values;
  std::vector<std::string> in_names, out_names;
  for (size_t i = 0; i < session.GetInputCount(); ++i) {
    in_names.push_back(session.GetInputNameAllocated(i, allocator).get());
    auto shape = session.GetInputTypeInfo(i).GetTensorTypeAndShapeInfo().GetShape();
    auto& data = inputs.at(in_names.back());
    values.push_back(sam3::runtime::view(data.data(), data.size(), shape));
  }
  for (size_t i = 0; i < session.GetOutputCount(); ++i) out_names.push_back(session.GetOutputNameAllocated(i, allocator).get());
  std::vector<const char*> in_ptrs, out_ptrs;
  for (const auto& n : in_names) in_ptrs.push_back(n.c_str());
  for (const auto& n : out_names) out_ptrs.push_back(n.c_str());
  auto outputs = session.Run(Ort::RunOptions{}, in_ptrs.data(), values.data(), values.size(), out_ptrs.data(), out_ptrs.size());
  std::map<std::string, std::vector<float>> out;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const float* p = outputs[i].GetTensorData<float>();
    out[out_names[i]].assign(p, p + outputs[i].GetTensorTypeAndShapeInfo().GetElementCount());
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
  const std::string original = sam3::test::read_file(linears());
  sam3::write_file_atomic(rewritten_file, sam3::optimize::int8_products_as_float(original, nullptr));
  std::mt19937 rng(22);
  // Activations quantized with zero points 0 (all positive), 255 (all negative), in between; a
  // constant input; all zeros (scale 1 in DynamicQuantizeLinear, any finite one here); a wide range.
  const std::vector<std::pair<float, float>> ranges = {{-1, 1}, {0.5f, 3}, {-7, -0.1f}, {2, 2}, {0, 0}, {-1e4f, 3e4f}};
  const std::map<std::string, std::vector<std::int64_t>> shapes = {
      {"x_a", {2, 37, 64}}, {"x_b", {5, 19}}, {"x_c", {3, 4736}}, {"x_img", {1, 3, 12, 10}}};
  for (const auto& [lo, hi] : ranges) {
    std::uniform_real_distribution<float> value(lo, hi);
    std::map<std::string, std::vector<float>> inputs;
    std::map<std::string, sam3::test::RefTensor> exact_inputs;
    for (const auto& [name, shape] : shapes) {
      auto& x = inputs[name];
      x.resize(std::accumulate(shape.begin(), shape.end(), size_t{1}, std::multiplies<>()));
      for (float& v : x) v = value(rng);
      exact_inputs[name] = {shape, {x.begin(), x.end()}};
    }
    // The reference: the integer graph evaluated exactly (not ONNX Runtime's MatMulInteger, whose
    // u8 x s8 kernel saturates on AVX2). The float graph at the basic level, as the browser's
    // WebGPU provider sees it: native ONNX Runtime 1.30's extended fusions get y_per_column's
    // second row wrong (DequantizeLinear per column into MatMul; ONNX Runtime Web's WASM build
    // computes it exactly).
    const auto want = sam3::test::evaluate_int8_graph(original, exact_inputs);
    const auto got = run(rewritten_file, ORT_ENABLE_BASIC, inputs);
    ASSERT_EQ(want.size(), got.size());
    for (const auto& [name, w] : want) {
      const auto& g = got.at(name);
      ASSERT_EQ(w.values.size(), g.size()) << name;
      double largest = 0, worst = 0;
      for (size_t i = 0; i < g.size(); ++i) {
        largest = std::max(largest, std::abs(w.values[i]));
        worst = std::max(worst, std::abs(w.values[i] - g[i]));
      }
      // The same integers; the rewritten graph sums their products in float32 (exact below 2^24).
      // y_extreme's sums reach 1.5e8 over 4736 terms: rounding errors of random sign grow like
      // sqrt(4736) * 2^-24 = 4e-6 of the largest output; 2e-5 leaves 5x. A zero point or a
      // quantized value off by one moves y_extreme by about 1/255 = 4e-3 of it.
      EXPECT_LE(worst, 2e-5 * std::max(largest, 1.0)) << name << " on inputs in [" << lo << ", " << hi << "]";
    }
  }
  fs::remove_all(dir);
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
