#include "work_queue.h"

namespace sam3::server {

WorkQueue::WorkQueue(int workers, std::size_t capacity) : capacity_(capacity) {
  for (int i = 0; i < workers; ++i) {
    threads_.emplace_back([this] {
      for (;;) {
        std::function<void()> job;
        {
          std::unique_lock lock(mutex_);
          cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
          if (jobs_.empty()) return;
          job = std::move(jobs_.front());
          jobs_.pop_front();
        }
        job();
      }
    });
  }
}

WorkQueue::~WorkQueue() {
  stop();
  for (auto& t : threads_) t.join();
}

void WorkQueue::stop() {
  std::lock_guard lock(mutex_);
  stopping_ = true;
  cv_.notify_all();
}

bool WorkQueue::push(std::function<void()> job) {
  std::lock_guard lock(mutex_);
  if (stopping_ || jobs_.size() >= capacity_) return false;
  jobs_.push_back(std::move(job));
  cv_.notify_one();
  return true;
}

std::size_t WorkQueue::queued() {
  std::lock_guard lock(mutex_);
  return jobs_.size();
}

}  // namespace sam3::server
