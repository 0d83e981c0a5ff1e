// What "segment everything" holds while it runs, counted by this program's own allocator: the
// candidates waiting for the final deduplication must not cost a full mask each. A denser grid
// gives many more candidates; what it costs beyond a sparse grid (whose per-thread scratch and
// final masks are the same) is compared with one full mask of the image. The results too hold
// their instances' bounds, not a full mask each.
#include <gtest/gtest.h>

#include <cstdio>

#include "sam3/model.h"
#include "support/segmenters.h"
#include "support/test_images.h"

#include "support/counted_allocations.h"

namespace {

TEST(EverythingMemory, CandidatesAreNotHeldAsFullMasks) {
  const auto model = sam3::test::load_interactive_segmenter(sam3::test::test_models_dir() / "tracker");
  const auto image = sam3::test::upscale(sam3::test::make_everything_scene().image, 4);  // 2048 x 1536
  const auto embedding = model->encode(image);
  const std::int64_t mask_bytes = static_cast<std::int64_t>(image.width) * image.height;
  // Both grids decode full batches of 64 clicks (the decoder's outputs are the same size);
  // the dense one has 16 times the candidates.
  sam3::EverythingOptions sparse, dense;
  sparse.points_per_side = 8;
  dense.points_per_side = 32;
  sparse.min_area = dense.min_area = 200 * 16;  // edge slivers of blended colours are no objects
  sam3::PromptResult few, many;
  // The first runs allocate once for good (ONNX Runtime's, the thread pool's): outside the count.
  model->segment_everything(embedding, sparse);
  model->segment_everything(embedding, dense);
  const auto sparse_peak = sam3::test::peak_of([&] { few = model->segment_everything(embedding, sparse); });
  const auto dense_peak = sam3::test::peak_of([&] { many = model->segment_everything(embedding, dense); });
  ASSERT_EQ(many.instances.size(), 3u) << "one mask per square";
  const double extra = static_cast<double>(dense_peak - sparse_peak) / static_cast<double>(mask_bytes);
  std::printf(
      "peak while segmenting everything: %.1f MB at 8 points per side, %.1f MB at 32 (%.2f full masks more; "
      "a full mask is %.1f MB)\n",
      sparse_peak / 1048576.0, dense_peak / 1048576.0, extra, mask_bytes / 1048576.0);
  // Held as full masks, the dense grid's candidates were dozens of masks more.
  EXPECT_LT(extra, 3.0) << "the dense grid's candidates cost " << extra << " full masks more than the sparse grid's";
  // What a result keeps: a copy of it costs its instances' bounds (three squares), where each
  // instance was a full mask of the image (5 MB an instance at 2000x2000, hundreds of them).
  const std::int64_t before = sam3::test::live_bytes();
  const sam3::PromptResult kept = many;
  const std::int64_t held = sam3::test::live_bytes() - before;
  std::int64_t squares = 0;
  for (const auto& inst : kept.instances) {
    const auto b = inst.mask.bounds();
    squares += static_cast<std::int64_t>(b.x1 - b.x0) * (b.y1 - b.y0);
  }
  std::printf("a result of %zu instances holds %.2f MB (their bounds: %.2f MB; a full mask: %.2f MB)\n", kept.instances.size(),
              held / 1048576.0, squares / 1048576.0, mask_bytes / 1048576.0);
  EXPECT_LT(held, mask_bytes) << "three instances held more than one full mask of the image";
  EXPECT_LT(held, squares + 64 * 1024) << "a result holds its instances' bounds and little else";
}

}  // namespace
