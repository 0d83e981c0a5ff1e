// A fixed set of inference workers fed by a bounded queue. Full queue = the caller is told
// to come back later (HTTP 503) instead of piling up requests.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace sam3::server {

class WorkQueue {
 public:
  WorkQueue(int workers, std::size_t capacity);
  ~WorkQueue();  // finishes queued jobs, then joins

  // nullopt when the queue is full or stopping. The job and what it captures are destroyed
  // before its result is ready: a request's temporary files are gone before it is answered (they
  // outlived the answer, and a server killed right after it left them behind).
  template <typename F>
  auto submit(F&& job) -> std::optional<std::future<decltype(job())>> {
    using R = decltype(job());
    auto task = std::make_shared<std::packaged_task<R()>>([job = std::forward<F>(job)]() mutable {
      auto run = std::move(job);  // a local: destroyed after the result is made, before it is stored
      return run();
    });
    if (!push([task] { (*task)(); })) return std::nullopt;
    return task->get_future();
  }

  std::size_t queued();
  std::size_t capacity() const { return capacity_; }
  int workers() const { return static_cast<int>(threads_.size()); }
  void stop();  // no new jobs; queued ones still run

 private:
  bool push(std::function<void()> job);

  std::size_t capacity_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace sam3::server
