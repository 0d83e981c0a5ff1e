// The server's work queue: a job's captures (a request's temporary video, its decoded frames)
// are released before its caller sees the result, so that nothing a request made outlives its
// answer (a server killed right after answering left /tmp/sam3-ls-video-* behind).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

#include "work_queue.h"

namespace sam3::server {
namespace {

// Stands for a capture whose release takes a while (removing a folder); says when it is done.
struct SlowRelease {
  std::shared_ptr<std::atomic<bool>> done;
  ~SlowRelease() {
    if (!done) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    *done = true;
  }
};

TEST(WorkQueue, AJobsCapturesAreReleasedBeforeItsResultIsReady) {
  WorkQueue queue(1, 4);
  for (const bool throws : {false, true}) {
    auto done = std::make_shared<std::atomic<bool>>(false);
    auto held = std::make_shared<SlowRelease>();
    held->done = done;
    auto future = queue.submit([held, throws]() -> int {
      if (throws) throw std::runtime_error("the job failed");
      return 7;
    });
    held.reset();  // the job's capture is the last owner
    ASSERT_TRUE(future);
    if (throws)
      EXPECT_THROW(future->get(), std::runtime_error);
    else
      EXPECT_EQ(future->get(), 7);
    EXPECT_TRUE(*done) << (throws ? "a failed" : "a finished") << " job's captures were still held when its caller got the result";
  }
}

}  // namespace
}  // namespace sam3::server
