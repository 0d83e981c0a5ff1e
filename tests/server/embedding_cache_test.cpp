// The embedding cache shares one encode between requests for the same new image; an encode
// stopped because its own request was given up must not fail the others waiting on it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "embedding_cache.h"
#include "model/embedding_access.h"
#include "sam3/error.h"

namespace {

using namespace std::chrono_literals;
using sam3::server::EmbeddingCache;

sam3::ImageEmbedding embedding(int width) { return sam3::detail::EmbeddingAccess::make(nullptr, width, 1, 0, 0, 0); }

// Starts a first encode of "k" that waits for `release`, then throws `error`; returns once a
// second caller is waiting on it.
struct SharedEncode {
  EmbeddingCache cache{1 << 20};
  std::promise<void> release;
  std::future<void> first;

  explicit SharedEncode(sam3::ErrorCode error) {
    std::shared_future<void> go = release.get_future().share();
    first = std::async(std::launch::async, [this, go, error] {
      bool hit = false;
      EXPECT_THROW(cache.get_or_encode(
                       "k",
                       [&]() -> sam3::ImageEmbedding {
                         go.wait();
                         throw sam3::Error(error, "first encode");
                       },
                       &hit),
                   sam3::Error);
    });
    while (cache.stats().misses < 1) std::this_thread::sleep_for(1ms);
  }
};

TEST(EmbeddingCache, AWaiterEncodesItselfWhenTheEncodeItWaitedOnWasStoppedForAnotherRequest) {
  SharedEncode shared(sam3::ErrorCode::kCancelled);
  std::atomic<int> own_encodes{0};
  auto second = std::async(std::launch::async, [&] {
    bool hit = true;
    auto entry = shared.cache.get_or_encode(
        "k",
        [&] {
          ++own_encodes;
          return embedding(7);
        },
        &hit);
    EXPECT_FALSE(hit);
    return entry;
  });
  while (shared.cache.stats().hits < 1) std::this_thread::sleep_for(1ms);  // the second caller waits on the first encode
  shared.release.set_value();
  shared.first.get();
  const auto entry = second.get();
  EXPECT_EQ(own_encodes, 1);
  EXPECT_EQ(entry->embedding.width(), 7);
  EXPECT_EQ(shared.cache.find("k"), entry);
}

TEST(EmbeddingCache, AnyOtherFailureOfTheSharedEncodeIsTheWaitersToo) {
  SharedEncode shared(sam3::ErrorCode::kImageCorrupt);
  std::atomic<int> own_encodes{0};
  auto second = std::async(std::launch::async, [&] {
    bool hit = false;
    try {
      shared.cache.get_or_encode(
          "k",
          [&] {
            ++own_encodes;
            return embedding(7);
          },
          &hit);
    } catch (const sam3::Error& e) {
      return e.code();
    }
    return sam3::ErrorCode::kRuntime;
  });
  while (shared.cache.stats().hits < 1) std::this_thread::sleep_for(1ms);
  shared.release.set_value();
  shared.first.get();
  EXPECT_EQ(second.get(), sam3::ErrorCode::kImageCorrupt);
  EXPECT_EQ(own_encodes, 0);
}

}  // namespace
