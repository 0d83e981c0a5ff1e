// The int8 weight rewrite is exact, and the per-host model cache is used on later loads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "optimize/onnx_int8.h"
#include "optimize/onnx_uint8.h"
#include "runtime/session.h"
#include "runtime/cpu_features.h"
#include "sam3/error.h"
#include "sam3/log.h"
#include "sam3/model.h"
#include "support/files.h"
#include "support/int8_reference.h"
#include "support/segmenters.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;

using sam3::test::read_file;

fs::path fresh_copy(const std::string& layout, const std::string& name) {
  const fs::path dir = sam3::test::fresh_test_dir("sam3_int8_" + name);
  for (const auto& e : fs::directory_iterator(sam3::test::test_models_dir() / layout)) {
    if (e.is_regular_file()) fs::copy_file(e.path(), dir / e.path().filename());
  }
  return dir;
}

TEST(Int8Rewrite, RewritesEveryMatMulIntegerWeightOnce) {
  const std::string original = read_file(sam3::test::test_models_dir() / "usls" / "text-encoder.onnx");
  sam3::optimize::Int8RewriteStats stats;
  const std::string once = sam3::optimize::rewrite_matmulinteger_weights_to_int8(original, &stats);
  EXPECT_EQ(stats.weights, 1) << "the text encoder has one quantized Linear";
  EXPECT_EQ(stats.zero_points, 1);
  EXPECT_EQ(once.size(), original.size()) << "raw data and type change in place";
  EXPECT_NE(once, original);
  sam3::optimize::rewrite_matmulinteger_weights_to_int8(once, &stats);
  EXPECT_EQ(stats.weights, 0) << "already int8: nothing left to do";
  EXPECT_THROW(sam3::optimize::rewrite_matmulinteger_weights_to_int8("not a model", &stats), sam3::Error);
}

TEST(Int8Rewrite, ResultsAreIdenticalWithInt8Weights) {
  const auto scene = sam3::test::make_scene(false);
  for (const std::string layout : {"usls", "samexporter"}) {
    sam3::ModelOptions plain, int8;
    plain.int8_weights = sam3::Int8Weights::kOff;
    plain.cache_optimized = false;
    int8.int8_weights = sam3::Int8Weights::kOn;
    const auto a = sam3::test::load_text_segmenter(fresh_copy(layout, layout + "_plain"), plain);
    const auto b = sam3::test::load_text_segmenter(fresh_copy(layout, layout + "_int8"), int8);
    const auto ea = a->encode(scene.image), eb = b->encode(scene.image);
    for (const char* text : {"red", "blue", "white"}) {
      const auto ra = a->segment(ea, {text, {}}), rb = b->segment(eb, {text, {}});
      ASSERT_EQ(ra.instances.size(), rb.instances.size()) << layout << " " << text;
      for (size_t i = 0; i < ra.instances.size(); ++i) {
        EXPECT_EQ(ra.instances[i].score, rb.instances[i].score) << layout << " " << text;
        EXPECT_EQ(ra.instances[i].mask, rb.instances[i].mask) << layout << " " << text;
      }
    }
  }
}

// --int8 on where ONNX Runtime's u8 x s8 kernel saturates (no VNNI, AMX or dot-product) is the
// user's choice, but the load says what it costs; where int8 weights help, nothing is said.
TEST(Int8Rewrite, ForcingInt8WeightsWhereTheyCanSaturateIsWarned) {
  std::vector<std::string> warnings;
  sam3::set_log_sink([&](sam3::LogLevel level, const std::string& message) {
    if (level == sam3::LogLevel::kWarning) warnings.push_back(message);
  });
  sam3::ModelOptions int8;
  int8.int8_weights = sam3::Int8Weights::kOn;
  const fs::path dir = fresh_copy("usls", "usls_int8_forced");
  sam3::Model::load(dir, int8);
  sam3::Model::load(dir, int8);  // as `sam3 models optimize` does: once to prepare, once to check
  sam3::set_log_sink(nullptr);
  const auto encoder_warnings = std::count_if(warnings.begin(), warnings.end(), [](const std::string& w) {
    return w.find("vision-encoder.onnx: int8 weights forced") != std::string::npos;
  });
  EXPECT_EQ(encoder_warnings, sam3::runtime::detect_cpu_features().int8_weights_help() ? 0 : 1)
      << "once per file and process, where it applies; on " << sam3::runtime::detect_cpu_features().summary();
}

TEST(Uint8Rewrite, RewritesTheInt8WeightsOfDynamicallyQuantizedProducts) {
  const std::string original = read_file(sam3::test::test_models_dir() / "int8" / "matmulinteger.onnx");
  sam3::optimize::Int8RewriteStats stats;
  const std::string once = sam3::optimize::rewrite_matmulinteger_weights_to_uint8(original, &stats);
  EXPECT_EQ(stats.weights, 3) << "y_no_b_zp, y_no_zp and y_extreme have int8 weights";
  EXPECT_EQ(stats.zero_points, 1) << "y_extreme's -128; the other two get an explicit 128";
  sam3::optimize::rewrite_matmulinteger_weights_to_uint8(once, &stats);
  EXPECT_EQ(stats.weights, 0) << "all uint8 now: nothing left to do";
  EXPECT_THROW(sam3::optimize::rewrite_matmulinteger_weights_to_uint8("not a model", &stats), sam3::Error);
}

// What sam3 prepares for this CPU computes the exact integer products, whichever kernels it
// has: int8 weights where VNNI/AMX sum u8 x s8 exactly, uint8 ones where they saturate (AVX2).
TEST(Int8Rewrite, ProductsAreExactOnThisCpu) {
  const fs::path dir = fresh_copy("int8", "exact_here");
  const std::string original = read_file(dir / "matmulinteger.onnx");
  sam3::runtime::SessionConfig config;
  config.intra_op_threads = 2;
  const sam3::runtime::Session session(dir / "matmulinteger.onnx", config);
  std::mt19937 rng(31);
  for (const auto& [lo, hi] : std::vector<std::pair<float, float>>{{-1, 1}, {0.5f, 3}, {-7, -0.1f}, {-1e4f, 3e4f}}) {
    sam3::test::MatMulIntegerInputs in(rng, lo, hi);
    const Ort::Value va = sam3::runtime::view(in.a.data(), in.a.size(), {2, 37, 64});
    const Ort::Value vb = sam3::runtime::view(in.b.data(), in.b.size(), {5, 19});
    const Ort::Value vc = sam3::runtime::view(in.c.data(), in.c.size(), {3, 4736});
    auto got = session.run({{"x_a", va}, {"x_b", vb}, {"x_c", vc}});
    const auto want = sam3::test::evaluate_int8_graph(original, in.reference_inputs());
    for (const auto& [name, w] : want) {
      const auto* g = got.at(name).GetTensorData<std::int32_t>();
      size_t differ = 0;
      for (size_t i = 0; i < w.values.size(); ++i) differ += w.values[i] != g[i];
      EXPECT_EQ(differ, 0u) << name << ": " << differ << " of " << w.values.size() << " products differ for inputs in [" << lo << ", " << hi
                            << "] on " << sam3::runtime::detect_cpu_features().summary();
    }
  }
}

TEST(ModelFileCache, SecondLoadUsesTheSavedOptimizedGraph) {
  const auto dir = fresh_copy("usls", "cache");
  sam3::Model::load(dir);
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir / ".sam3-cache")) {
    EXPECT_TRUE(fs::exists(e.path() / "optimized.onnx")) << e.path();
    EXPECT_TRUE(fs::exists(e.path() / "meta.json")) << e.path();
    ++entries;
  }
  EXPECT_EQ(entries, 3);
  // A damaged cache entry is thrown away and the original file loads instead.
  for (const auto& e : fs::directory_iterator(dir / ".sam3-cache")) std::ofstream(e.path() / "optimized.onnx") << "junk";
  const auto model = sam3::test::load_text_segmenter(dir);
  const auto r = model->segment(model->encode(sam3::test::make_scene(false).image), {"red", {}});
  EXPECT_EQ(r.instances.size(), 2u);
  for (const auto& e : fs::directory_iterator(dir / ".sam3-cache")) {
    EXPECT_FALSE(fs::exists(e.path() / "optimized.onnx")) << e.path() << ": the damaged file is removed";
  }
  sam3::Model::load(dir);
  for (const auto& e : fs::directory_iterator(dir / ".sam3-cache")) {
    EXPECT_NE(read_file(e.path() / "optimized.onnx"), "junk") << e.path() << ": rebuilt on the next load";
  }
}

// Loads of one folder at once (a Slurm array, parallel tests, a server loading two models)
// share cache entries: each writes under its own names and removes only what it wrote.
TEST(ModelFileCache, ConcurrentFirstLoadsOfOneFolderAllSucceed) {
  const auto dir = fresh_copy("usls", "concurrent");
  for (int round = 0; round < 3; ++round) {
    fs::remove_all(dir / ".sam3-cache");
    std::vector<std::thread> loads;
    std::atomic<int> failed{0};
    for (int i = 0; i < 4; ++i) {
      loads.emplace_back([&] {
        try {
          const auto model = sam3::test::load_text_segmenter(dir);
          if (model->segment(model->encode(sam3::test::make_scene(false).image), {"red", {}}).instances.size() != 2) ++failed;
        } catch (const std::exception& e) {
          ADD_FAILURE() << "round " << round << ": " << e.what();
          ++failed;
        }
      });
    }
    for (auto& t : loads) t.join();
    EXPECT_EQ(failed.load(), 0) << "round " << round;
    for (const auto& entry : fs::directory_iterator(dir / ".sam3-cache")) {
      EXPECT_TRUE(fs::exists(entry.path() / "optimized.onnx")) << entry.path();
      EXPECT_TRUE(fs::exists(entry.path() / "meta.json")) << entry.path();
      for (const auto& f : fs::directory_iterator(entry.path())) {
        const std::string name = f.path().filename().string();
        EXPECT_TRUE(name == "optimized.onnx" || name == "meta.json") << f.path() << ": left behind";
      }
    }
  }
  fs::remove_all(dir);
}

TEST(ModelFileCache, AttentionIsFusedOnceAndRecorded) {
  const auto dir = fresh_copy("usls", "fused");
  const auto check = [](const sam3::Model& model, bool pre_optimized) {
    for (const auto& f : model.files()) {
      const bool encoder = f.file.filename() == "vision-encoder.onnx";
      EXPECT_EQ(f.fused_attention, encoder ? 1 : 0) << f.file << ": only the image encoder has attention";
      EXPECT_EQ(f.pre_optimized, pre_optimized) << f.file;
    }
  };
  const auto first = sam3::Model::load(dir);
  check(*first, false);
  const auto second = sam3::Model::load(dir);
  check(*second, true);  // from meta.json
  sam3::ModelOptions unfused;
  unfused.fuse_attention = false;
  unfused.cache_optimized = false;
  const auto plain = sam3::Model::load(dir, unfused);
  for (const auto& f : plain->files()) EXPECT_EQ(f.fused_attention, 0) << f.file;
  const auto scene = sam3::test::make_scene(false);
  const sam3::ImageSegmenter fused_segmenter(second), plain_segmenter(plain);
  const auto a = fused_segmenter.segment(fused_segmenter.encode(scene.image), {"red", {}});
  const auto b = plain_segmenter.segment(plain_segmenter.encode(scene.image), {"red", {}});
  ASSERT_EQ(a.instances.size(), b.instances.size());
  for (size_t i = 0; i < a.instances.size(); ++i) {
    EXPECT_EQ(a.instances[i].mask, b.instances[i].mask) << "the fused block adds exactly zero";
  }
  fs::remove_all(dir);
}

TEST(CpuFeatures, SummaryNamesWhatWasFound) {
  const auto f = sam3::runtime::detect_cpu_features();
  EXPECT_FALSE(f.summary().empty());
  if (f.int8_weights_help()) EXPECT_NE(f.summary(), "baseline");
}

}  // namespace
