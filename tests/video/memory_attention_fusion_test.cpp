// The memory attention of SAM 3.1 (cross-attention from the 5184 image tokens to every memory
// token of the bank: 7 x 5184 + 256 at steady state) must run fused: unfused, ONNX Runtime holds
// the [heads, 5184, keys] scores and their softmax (1.9 GB above resident with one memory frame
// at SAM 3.1's widths, 5.3 GB with two; fused 0.2 GB, docs/video.md). These check, on the
// generated bench graphs (tools/make_sam31_bench_bundle.py), that sam3's fusion
// (src/optimize/onnx_attention.cpp) matches the graph's self- and cross-attention as the tracker
// loads it, and that the fused graph's output equals the unfused one's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "runtime/session.h"

namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kD = 256, kTokens = 72 * 72, kSlots = 16;

sam3::runtime::SessionConfig config(bool fuse) {
  sam3::runtime::SessionConfig c;  // as Model::load makes the video graphs' sessions
  c.intra_op_threads = 2;
  c.cache.fuse_attention = fuse;
  return c;
}

TEST(Sam31MemoryAttention, TheQuickBundlesMemoryAttentionLoadsWithBothAttentionsFused) {
  const sam3::runtime::Session s(fs::path(SAM3_BENCH_BUNDLE_DIR) / "sam3.1_memory_attention.onnx", config(true));
  // One layer (quick widths): its self-attention and its cross-attention to the memories.
  EXPECT_EQ(s.prepared().fused_attention, 2) << "the memory attention is not fused as the tracker loads it: each call "
                                                "would hold the whole [heads, 5184, memory tokens] score matrix";
  const sam3::runtime::Session plain(fs::path(SAM3_BENCH_BUNDLE_DIR) / "sam3.1_memory_attention.onnx", config(false));
  EXPECT_EQ(plain.prepared().fused_attention, 0);
}

TEST(Sam31MemoryAttention, FusedEqualsUnfusedWithMemoryFramesAndPointers) {
  const fs::path file = fs::path(SAM3_BENCH_MEMORY_ATTENTION_DIR) / "sam3.1_memory_attention.onnx";
  const sam3::runtime::Session fused(file, config(true)), plain(file, config(false));
  // Two layers, each a self-attention and a cross-attention (the real graph alone: its output is
  // the attention's, not the behaviour graph's).
  ASSERT_EQ(fused.prepared().fused_attention, 4);
  ASSERT_EQ(plain.prepared().fused_attention, 0);
  // One memory frame and two pointer frames (the unfused reference holds its scores: keep it small).
  const std::int64_t ti = kTokens, t = ti + 2 * kSlots;
  std::mt19937 rng(44);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::map<std::string, std::vector<float>> data;
  std::map<std::string, Ort::Value> values;
  const std::map<std::string, std::int64_t> rows = {{"curr_obj", kTokens}, {"curr_obj_pos", kTokens}, {"curr_img", kTokens},
                                                    {"memory_obj", t},     {"memory_obj_pos", t},     {"memory_img", ti},
                                                    {"memory_img_pos", ti}};
  for (const auto& [name, n] : rows) {
    auto& v = data[name];
    v.resize(static_cast<size_t>(n * kD));
    for (auto& x : v) x = normal(rng);
    values.emplace(name, sam3::runtime::view(v.data(), v.size(), {n, 1, kD}));
  }
  std::map<std::string, const OrtValue*> feeds;
  for (const auto& [k, v] : values) feeds[k] = v;
  auto a = fused.run(feeds), b = plain.run(feeds);
  const auto& name = fused.outputs().at(0).name;
  const auto n = a.at(name).GetTensorTypeAndShapeInfo().GetElementCount();
  ASSERT_EQ(n, static_cast<size_t>(kTokens * kD));
  ASSERT_EQ(b.at(name).GetTensorTypeAndShapeInfo().GetElementCount(), n);
  const float *x = a.at(name).GetTensorData<float>(), *y = b.at(name).GetTensorData<float>();
  float worst = 0, largest = 0;
  for (size_t i = 0; i < n; ++i) {
    worst = std::max(worst, std::fabs(x[i] - y[i]));
    largest = std::max(largest, std::fabs(y[i]));
  }
  EXPECT_GT(largest, 0.1f) << "the output is the attention's (not zero)";
  EXPECT_LT(worst, 1e-5f) << "the fused memory attention differs from the unfused graph";
}

}  // namespace
