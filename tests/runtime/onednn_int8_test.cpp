// The int8 products on oneDNN (kernels/onednn_int8.h) are exact, node by node, and whole models
// give ONNX Runtime's results with them.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "kernels/onednn_int8.h"
#include "optimize/onnx_int8.h"
#include "kernels/onnx_onednn_int8.h"
#include "runtime/session.h"
#include "sam3/model.h"
#include "support/files.h"
#include "support/int8_reference.h"
#include "support/segmenters.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;

// A copy of `files` of the test models' `folder` in an empty folder (each load writes its cache there).
fs::path copy_of(const std::string& folder, const std::string& name) {
  const fs::path dir = sam3::test::fresh_test_dir("sam3_onednn_" + name);
  for (const auto& e : fs::directory_iterator(sam3::test::test_models_dir() / folder)) {
    if (e.is_regular_file()) fs::copy_file(e.path(), dir / e.path().filename());
  }
  return dir;
}

sam3::runtime::SessionConfig config(bool onednn) {
  sam3::runtime::SessionConfig c;
  c.intra_op_threads = 2;
  c.cache.int8 = onednn ? sam3::runtime::Int8Weights::kOn : sam3::runtime::Int8Weights::kOff;  // off: the file as written
  c.cache.onednn = onednn;
  c.cache.onednn_min_weights = 0;  // the test graph's products are all small
  return c;
}

TEST(OneDnnInt8, MovesOnlyInt8ProductsOfQuantizedActivations) {
  const std::string original = sam3::test::read_file(sam3::test::test_models_dir() / "int8" / "matmulinteger.onnx");
  sam3::kernels::OneDnnInt8Stats stats;
  sam3::kernels::move_matmulinteger_to_onednn(original, &stats, 0);
  EXPECT_EQ(stats.nodes, 3) << "only the int8 weights; the uint8 ones stay with ONNX Runtime until the int8 rewrite";
  const std::string int8 = sam3::optimize::rewrite_matmulinteger_weights_to_int8(original, nullptr);
  const std::string moved = sam3::kernels::move_matmulinteger_to_onednn(int8, &stats, 0);
  EXPECT_EQ(stats.nodes, 6) << "every node once its weights are int8";
  sam3::kernels::move_matmulinteger_to_onednn(int8, &stats, 4736 * 40);
  EXPECT_EQ(stats.nodes, 1) << "only the largest, 4736 x 40, at a threshold of its size";
  sam3::kernels::move_matmulinteger_to_onednn(int8, &stats);
  EXPECT_EQ(stats.nodes, 0) << "all below the default threshold: ONNX Runtime's fused kernel";
  EXPECT_NE(moved.find(sam3::kernels::kOneDnnDomain), std::string::npos);
  sam3::kernels::move_matmulinteger_to_onednn(moved, &stats, 0);
  EXPECT_EQ(stats.nodes, 0) << "already moved: nothing left to do";
}

// Against the exact integer products (support/int8_reference.h), not ONNX Runtime's kernel:
// that one saturates 16-bit pair sums of u8 x s8 on CPUs without VNNI.
TEST(OneDnnInt8, EveryProductIsExact) {
  if (!sam3::kernels::onednn_int8_available()) {
    GTEST_SKIP() << "no exact oneDNN int8 kernel on this CPU, so none is used: " << sam3::kernels::int8_kernels_description();
  }
  const fs::path onednn_dir = copy_of("int8", "onednn");
  const std::string original = sam3::test::read_file(onednn_dir / "matmulinteger.onnx");
  for (int load = 0; load < 2; ++load) {  // the second load reads the cached optimized graph
    const sam3::runtime::Session onednn(onednn_dir / "matmulinteger.onnx", config(true));
    ASSERT_EQ(onednn.prepared().onednn_int8, 6) << "load " << load;
    ASSERT_EQ(onednn.prepared().pre_optimized, load == 1);
    std::mt19937 rng(26 + load);
    // Activations quantized with zero points 0 (all positive), 255 (all negative), in between,
    // and constant inputs; and a range wide enough for the largest sums.
    const std::vector<std::pair<float, float>> ranges = {{-1, 1}, {0.5f, 3}, {-7, -0.1f}, {2, 2}, {-1e4f, 3e4f}};
    for (const auto& [lo, hi] : ranges) {
      sam3::test::MatMulIntegerInputs in(rng, lo, hi);
      const Ort::Value va = sam3::runtime::view(in.a.data(), in.a.size(), {2, 37, 64});
      const Ort::Value vb = sam3::runtime::view(in.b.data(), in.b.size(), {5, 19});
      const Ort::Value vc = sam3::runtime::view(in.c.data(), in.c.size(), {3, 4736});
      const std::map<std::string, const OrtValue*> feeds = {{"x_a", va}, {"x_b", vb}, {"x_c", vc}};
      const auto expected = sam3::test::evaluate_int8_graph(original, in.reference_inputs());
      auto got = onednn.run(feeds);
      ASSERT_EQ(expected.size(), 6u);
      for (const auto& [name, want] : expected) {
        ASSERT_EQ(sam3::runtime::shape_of(got.at(name)), want.shape) << name;
        const auto* g = got.at(name).GetTensorData<std::int32_t>();
        size_t differ = 0;
        for (size_t i = 0; i < want.values.size(); ++i) differ += want.values[i] != g[i];
        EXPECT_EQ(differ, 0u) << name << ": " << differ << " of " << want.values.size() << " products differ for inputs in [" << lo << ", "
                              << hi << "], load " << load;
      }
    }
  }
  fs::remove_all(onednn_dir);
}

TEST(OneDnnInt8, ModelResultsAreIdentical) {
  if (!sam3::kernels::onednn_int8_available()) {
    GTEST_SKIP() << "int8 products here: " << sam3::kernels::int8_kernels_description();
  }
  const auto scene = sam3::test::make_scene(false);
  for (const std::string layout : {"usls", "samexporter"}) {
    sam3::ModelOptions ort, onednn;
    ort.int8_weights = onednn.int8_weights = sam3::Int8Weights::kOn;
    ort.onednn_kernels = false;
    onednn.onednn_min_weights = 0;  // the test models' products are small
    const fs::path ort_dir = copy_of(layout, layout + "_ort"), onednn_dir = copy_of(layout, layout + "_onednn");
    const auto a = sam3::Model::load(ort_dir, ort);
    const auto b = sam3::Model::load(onednn_dir, onednn);
    int moved = 0;
    for (const auto& f : b->files()) moved += f.onednn_int8;
    for (const auto& f : a->files()) EXPECT_EQ(f.onednn_int8, 0) << f.file;
    EXPECT_GT(moved, 0) << layout << ": no product ran on oneDNN";
    const sam3::ImageSegmenter sa(a), sb(b);
    const auto ea = sa.encode(scene.image), eb = sb.encode(scene.image);
    for (const char* text : {"red", "blue", "white"}) {
      const auto ra = sa.segment(ea, {text, {}}), rb = sb.segment(eb, {text, {}});
      ASSERT_EQ(ra.instances.size(), rb.instances.size()) << layout << " " << text;
      for (size_t i = 0; i < ra.instances.size(); ++i) {
        EXPECT_EQ(ra.instances[i].score, rb.instances[i].score) << layout << " " << text;
        EXPECT_EQ(ra.instances[i].mask, rb.instances[i].mask) << layout << " " << text;
      }
    }
    fs::remove_all(ort_dir);
    fs::remove_all(onednn_dir);
  }
}

}  // namespace
