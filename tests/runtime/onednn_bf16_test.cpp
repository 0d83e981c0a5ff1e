// Precision "fast": the bf16 kernels on oneDNN (kernels/onednn_bf16.h) against ONNX Runtime's
// float operators on random inputs, the prepare step's choice of nodes, and whole test models
// giving the same masks under "fast" as under "exact".
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "kernels/onednn_bf16.h"
#include "optimize/onnx_attention.h"
#include "kernels/onnx_onednn_bf16.h"
#include "runtime/session.h"
#include "sam3/model.h"
#include "support/files.h"
#include "support/segmenters.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;

fs::path copy_of(const std::string& folder, const std::string& name) {
  const fs::path dir = sam3::test::fresh_test_dir("sam3_bf16_" + name);
  fs::copy(sam3::test::test_models_dir() / folder, dir, fs::copy_options::recursive);
  std::error_code ec;
  fs::remove_all(dir / ".sam3-cache", ec);  // each test prepares its own
  return dir;
}

sam3::runtime::SessionConfig config(bool bf16) {
  sam3::runtime::SessionConfig c;
  c.intra_op_threads = 2;
  c.cache.bf16 = bf16;
  return c;
}

std::vector<float> random_values(size_t n, float lo, float hi, std::mt19937& rng) {
  std::uniform_real_distribution<float> value(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = value(rng);
  return v;
}

TEST(OneDnnBf16, MovesFusedAttentionAndLargeFloatProducts) {
  sam3::kernels::OneDnnBf16Stats stats;
  const std::string file = sam3::test::read_file(sam3::test::test_models_dir() / "bf16" / "float_work.onnx");
  const std::string moved = sam3::kernels::move_float_work_to_onednn_bf16(file, &stats);
  EXPECT_EQ(stats.attention, 2) << "one head, with and without a scale; not two heads";
  EXPECT_EQ(stats.matmuls, 1) << "the 512 x 640 weights; not the 512 x 16 ones";
  EXPECT_NE(moved.find(sam3::kernels::kOneDnnBf16Domain), std::string::npos);
  sam3::kernels::move_float_work_to_onednn_bf16(moved, &stats);
  EXPECT_EQ(stats.attention + stats.matmuls, 0) << "already moved: nothing left to do";
  // What the attention fusion writes is what moves: every fused block of its test graphs.
  for (const auto& e : fs::directory_iterator(sam3::test::test_models_dir() / "attention")) {
    if (e.path().extension() != ".onnx") continue;
    sam3::optimize::AttentionFusionStats fused;
    const std::string bytes = sam3::optimize::fuse_attention(sam3::test::read_file(e.path()), &fused);
    sam3::kernels::move_float_work_to_onednn_bf16(bytes, &stats);
    EXPECT_EQ(stats.attention, fused.fused) << e.path().filename();
  }
}

// bf16 keeps 8 significant bits: each operand is off by at most 2^-9 of itself. The tolerances
// below are about 3x the largest differences seen on these inputs (0.0094 and 0.0060); a wrong
// scale, a transposed operand or a softmax over the wrong axis is off by 0.1 or more.
TEST(OneDnnBf16, KernelsMatchOnnxRuntimesFloatOperators) {
  if (!sam3::kernels::onednn_bf16_available()) GTEST_SKIP() << "bf16 here: " << sam3::kernels::bf16_kernels_description();
  const fs::path ort_dir = copy_of("bf16", "ort"), bf16_dir = copy_of("bf16", "onednn");
  const sam3::runtime::Session ort(ort_dir / "float_work.onnx", config(false));
  const sam3::runtime::Session bf16(bf16_dir / "float_work.onnx", config(true));
  ASSERT_EQ(ort.prepared().bf16_attention + ort.prepared().bf16_matmuls, 0);
  ASSERT_EQ(bf16.prepared().bf16_attention, 2);
  ASSERT_EQ(bf16.prepared().bf16_matmuls, 1);
  std::mt19937 rng(16);
  struct Case {
    std::int64_t b, s, l, d, dv;
  };
  // Small and odd; several query blocks (1100 keys: 16 blocks of 59 query rows and one of 56).
  for (const Case c : {Case{3, 7, 5, 8, 6}, Case{2, 1, 33, 64, 64}, Case{4, 1000, 1100, 64, 32}}) {
    auto q = random_values(static_cast<size_t>(c.b * c.s * c.d), -2, 2, rng);
    auto k = random_values(static_cast<size_t>(c.b * c.l * c.d), -2, 2, rng);
    auto v = random_values(static_cast<size_t>(c.b * c.l * c.dv), -1, 1, rng);
    auto x = random_values(2 * 37 * 512, -1, 1, rng);
    const Ort::Value vq = sam3::runtime::view(q.data(), q.size(), {c.b, c.s, c.d});
    const Ort::Value vk = sam3::runtime::view(k.data(), k.size(), {c.b, c.l, c.d});
    const Ort::Value vv = sam3::runtime::view(v.data(), v.size(), {c.b, c.l, c.dv});
    const Ort::Value vx = sam3::runtime::view(x.data(), x.size(), {2, 37, 512});
    const std::map<std::string, const OrtValue*> feeds = {{"q", vq}, {"k", vk}, {"v", vv}, {"x", vx}};
    auto expected = ort.run(feeds);
    auto got = bf16.run(feeds);
    for (const auto& [name, tolerance] : std::vector<std::pair<std::string, float>>{
             {"y_attention", 0.03f}, {"y_default_scale", 0.03f}, {"y_two_heads", 0.0f}, {"y_large", 0.02f}, {"y_small", 0.0f}}) {
      const auto& e = expected.at(name);
      ASSERT_EQ(sam3::runtime::shape_of(got.at(name)), sam3::runtime::shape_of(e)) << name;
      const auto n = e.GetTensorTypeAndShapeInfo().GetElementCount();
      const float* a = e.GetTensorData<float>();
      const float* g = got.at(name).GetTensorData<float>();
      float worst = 0;
      for (size_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(a[i] - g[i]));
      std::printf("%s [%lld, %lld, %lld, %lld, %lld]: largest difference %.5f\n", name.c_str(), static_cast<long long>(c.b),
                  static_cast<long long>(c.s), static_cast<long long>(c.l), static_cast<long long>(c.d), static_cast<long long>(c.dv),
                  static_cast<double>(worst));
      EXPECT_LE(worst, tolerance) << name << " [" << c.b << ", " << c.s << ", " << c.l << ", " << c.d << ", " << c.dv << "]";
      // Moved nodes really computed in bf16 (some rounding shows); the others are ONNX Runtime's.
      if (tolerance > 0) EXPECT_GT(worst, 1e-5f) << name << ": no bf16 rounding at all";
    }
  }
  fs::remove_all(ort_dir);
  fs::remove_all(bf16_dir);
}

double iou(const sam3::Mask& a, const sam3::Mask& b) {
  size_t both = 0, either = 0;
  const auto ra = a.to_raster(), rb = b.to_raster();
  for (size_t i = 0; i < ra.size() && i < rb.size(); ++i) {
    both += ra[i] && rb[i];
    either += ra[i] || rb[i];
  }
  return either == 0 ? 1.0 : static_cast<double>(both) / static_cast<double>(either);
}

// The bar for precision "fast": the same instances, each mask's IoU >= 0.99 and each
// score within 0.01 of the exact one.
TEST(OneDnnBf16, FastModelsGiveTheExactMasks) {
  const auto scene = sam3::test::make_scene(false);
  for (const std::string layout : {"usls", "geti"}) {
    sam3::ModelOptions exact, fast;
    fast.precision = sam3::Precision::kFast;
    const fs::path exact_dir = copy_of(layout, layout + "_exact"), fast_dir = copy_of(layout, layout + "_fast");
    const auto a = sam3::Model::load(exact_dir, exact);
    const auto b = sam3::Model::load(fast_dir, fast);
    int moved = 0;
    for (const auto& f : b->files()) moved += f.bf16_attention + f.bf16_matmuls;
    for (const auto& f : a->files()) EXPECT_EQ(f.bf16_attention + f.bf16_matmuls, 0) << f.file;
    if (sam3::kernels::onednn_bf16_available()) {
      EXPECT_GT(moved, 0) << layout << ": nothing ran in bf16";
    } else {
      EXPECT_EQ(moved, 0) << layout << ": no bf16 kernels here, so the exact path";
    }
    const sam3::ImageSegmenter sa(a), sb(b);
    const auto ea = sa.encode(scene.image), eb = sb.encode(scene.image);
    double worst_iou = 1, worst_score = 0;
    size_t instances = 0;
    for (const char* text : {"red", "blue", "white"}) {
      const auto ra = sa.segment(ea, {text, {}}), rb = sb.segment(eb, {text, {}});
      ASSERT_EQ(ra.instances.size(), rb.instances.size()) << layout << " " << text;
      for (size_t i = 0; i < ra.instances.size(); ++i) {
        EXPECT_NEAR(ra.instances[i].score, rb.instances[i].score, 0.01) << layout << " " << text;
        EXPECT_GE(iou(ra.instances[i].mask, rb.instances[i].mask), 0.99) << layout << " " << text;
        worst_iou = std::min(worst_iou, iou(ra.instances[i].mask, rb.instances[i].mask));
        worst_score = std::max(worst_score, static_cast<double>(std::abs(ra.instances[i].score - rb.instances[i].score)));
        ++instances;
      }
    }
    std::printf("%s: %d nodes in bf16; %zu instances: smallest mask IoU %.4f, largest score difference %.5f\n", layout.c_str(), moved,
                instances, worst_iou, worst_score);
    fs::remove_all(exact_dir);
    fs::remove_all(fast_dir);
  }
}

}  // namespace
