// What "segment everything" holds while it runs, counted by this program's own allocator: the
// candidates waiting for the final deduplication must not cost a full mask each. A denser grid
// gives many more candidates; what it costs beyond a sparse grid (whose per-thread scratch and
// final masks are the same) is compared with one full mask of the image.
#include <gtest/gtest.h>
#include <malloc.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "sam3/model.h"
#include "support/segmenters.h"
#include "support/test_images.h"

namespace {

std::atomic<std::int64_t> live{0}, peak{0};

void* counted(void* p) {
  if (!p) throw std::bad_alloc();
  const auto now = live.fetch_add(static_cast<std::int64_t>(malloc_usable_size(p))) + static_cast<std::int64_t>(malloc_usable_size(p));
  for (auto seen = peak.load(); now > seen && !peak.compare_exchange_weak(seen, now);) {
  }
  return p;
}

void uncounted(void* p) {
  if (!p) return;
  live.fetch_sub(static_cast<std::int64_t>(malloc_usable_size(p)));
  std::free(p);
}

// The peak of live bytes while `run` runs, above what was live when it began.
template <typename F>
std::int64_t peak_of(F&& run) {
  const auto before = live.load();
  peak.store(before);
  run();
  return peak.load() - before;
}

}  // namespace

void* operator new(std::size_t n) { return counted(std::malloc(n ? n : 1)); }
void* operator new[](std::size_t n) { return counted(std::malloc(n ? n : 1)); }
void* operator new(std::size_t n, std::align_val_t a) {
  return counted(std::aligned_alloc(static_cast<std::size_t>(a), (n + static_cast<std::size_t>(a) - 1) / static_cast<std::size_t>(a) * static_cast<std::size_t>(a)));
}
void* operator new[](std::size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p) noexcept { uncounted(p); }
void operator delete[](void* p) noexcept { uncounted(p); }
void operator delete(void* p, std::size_t) noexcept { uncounted(p); }
void operator delete[](void* p, std::size_t) noexcept { uncounted(p); }
void operator delete(void* p, std::align_val_t) noexcept { uncounted(p); }
void operator delete[](void* p, std::align_val_t) noexcept { uncounted(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { uncounted(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { uncounted(p); }

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
  const auto sparse_peak = peak_of([&] { few = model->segment_everything(embedding, sparse); });
  const auto dense_peak = peak_of([&] { many = model->segment_everything(embedding, dense); });
  ASSERT_EQ(many.instances.size(), 3u) << "one mask per square";
  const double extra = static_cast<double>(dense_peak - sparse_peak) / static_cast<double>(mask_bytes);
  std::printf("peak while segmenting everything: %.1f MB at 8 points per side, %.1f MB at 32 (%.2f full masks more; "
              "a full mask is %.1f MB)\n", sparse_peak / 1048576.0, dense_peak / 1048576.0, extra, mask_bytes / 1048576.0);
  // Held as full masks, the dense grid's candidates were dozens of masks more.
  EXPECT_LT(extra, 3.0) << "the dense grid's candidates cost " << extra << " full masks more than the sparse grid's";
}

}  // namespace
