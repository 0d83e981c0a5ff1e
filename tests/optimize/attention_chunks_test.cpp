// The query chunks written around MultiHeadAttention (for ONNX Runtime Web's WASM build, whose
// attention kernel materialises every score): the chunked graphs compute what the fused and the
// original graphs compute, with chunks that divide the queries, leave a padded remainder, or
// hold them all.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "optimize/onnx_attention.h"
#include "optimize/onnx_attention_chunks.h"
#include "runtime/session.h"
#include "sam3/error.h"
#include "sam3/export.h"
#include "support/files.h"
#include "support/random_feeds.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;

sam3::runtime::SessionConfig uncached() {
  sam3::runtime::SessionConfig config;
  config.cache.enabled = false;
  return config;
}

std::map<std::string, std::vector<float>> run(const fs::path& file, std::map<std::string, std::vector<float>>& inputs) {
  return sam3::test::run_on_random_inputs(sam3::runtime::Session(file, uncached()), inputs, 5);
}

// The fused graphs of tools/make_attention_models.py: 7 queries over 5 keys (4-D heads, 3-D), 9
// over 9 (projected), 40 over 3 (few keys: chunks of 2 and 4 queries stay, 8 widen to 16, 64 to
// all 40).
const char* const kFused[] = {"scaled_4d.fuse1.onnx", "div_scale_3d.fuse1.onnx", "projected.fuse2.onnx",
                              "torch_sdpa_default_scale.fuse1.onnx", "few_keys.fuse1.onnx"};

TEST(AttentionChunks, ChunkedGraphsComputeTheOriginalResults) {
  const fs::path dir = sam3::test::fresh_test_dir("sam3_attention_chunks");
  for (const char* name : kFused) {
    const fs::path original = sam3::test::test_models_dir() / "attention" / name;
    sam3::optimize::AttentionFusionStats fusion;
    const std::string fused = sam3::optimize::fuse_attention(sam3::test::read_file(original), &fusion);
    ASSERT_GT(fusion.fused, 0) << name;
    std::map<std::string, std::vector<float>> inputs;
    const auto want = run(original, inputs);
    // 2 and 4: several chunks, the last one padded (7 and 9 queries); 8: chunks widened for a
    // few keys (40 queries over 3 keys: 3 chunks of 14, the last padded); 64: one chunk of them all.
    for (std::int64_t chunk : {2, 4, 8, 64}) {
      sam3::optimize::AttentionChunkStats stats;
      const fs::path chunked = dir / (std::to_string(chunk) + "_" + name);
      sam3::write_file_atomic(chunked, sam3::optimize::chunk_attention_queries(fused, chunk, &stats));
      EXPECT_EQ(stats.chunked, fusion.fused) << name << ": every fused node chunked";
      const auto got = run(chunked, inputs);
      ASSERT_EQ(got.size(), want.size()) << name;
      for (const auto& [output, values] : want) {
        const auto& other = got.at(output);
        ASSERT_EQ(values.size(), other.size()) << name << " chunk " << chunk << " " << output;
        double worst = 0;
        for (size_t i = 0; i < values.size(); ++i) worst = std::max(worst, std::abs(double(values[i]) - other[i]));
        EXPECT_LT(worst, 1e-5) << name << " chunk " << chunk << " output " << output;
      }
    }
  }
  fs::remove_all(dir);
}

TEST(AttentionChunks, LeavesGraphsWithoutMultiHeadAttentionAlone) {
  const std::string original = sam3::test::read_file(sam3::test::test_models_dir() / "attention" / "masked.fuse0.onnx");
  sam3::optimize::AttentionChunkStats stats;
  EXPECT_EQ(sam3::optimize::chunk_attention_queries(original, 4, &stats), original);
  EXPECT_EQ(stats.chunked, 0);
}

TEST(AttentionChunks, RejectsChunksWithoutQueriesAndBytesThatAreNotAModel) {
  const std::string fused =
      sam3::optimize::fuse_attention(sam3::test::read_file(sam3::test::test_models_dir() / "attention" / "scaled_4d.fuse1.onnx"), nullptr);
  EXPECT_THROW(sam3::optimize::chunk_attention_queries(fused, 0, nullptr), sam3::Error);
  EXPECT_THROW(sam3::optimize::chunk_attention_queries("not a model", 64, nullptr), sam3::Error);
}

}  // namespace
