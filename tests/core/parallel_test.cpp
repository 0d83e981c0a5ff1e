// parallel_for visits every index exactly once and reports a failure from any thread.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "core/parallel.h"

namespace {

TEST(ParallelFor, VisitsEveryIndexOnce) {
  for (size_t n : {0u, 1u, 7u, 8u, 101u, 1000u}) {
    std::vector<std::atomic<int>> seen(n);
    sam3::core::parallel_for(n, [&](size_t i) { seen[i]++; });
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(seen[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ParallelFor, RethrowsAFailureFromAnyChunk) {
  EXPECT_THROW(sam3::core::parallel_for(100,
                                        [](size_t i) {
                                          if (i == 99) throw std::runtime_error("last item failed");
                                        }),
               std::runtime_error);
}

}  // namespace
