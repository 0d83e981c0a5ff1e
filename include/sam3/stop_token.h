// Stopping a running encode or decode from another thread, a timer or a signal handler.
//
//   sam3::StopSource stop;                                  // kept by whoever may cancel
//   std::thread worker([&] {
//     try { auto e = model->encode(image, {.stop = stop.token()}); }
//     catch (const sam3::Error& e) { /* e.code() == sam3::ErrorCode::kCancelled */ }
//   });
//   stop.request_stop();                                    // any thread, or a signal handler
//
// A run given a token stops within about one network node of the request (ONNX Runtime's
// RunOptions terminate flag, checked between nodes), not at the end of the encode, and throws
// sam3::Error kCancelled. A token already stopped fails the next run at once.
#pragma once

#include <atomic>
#include <memory>

namespace sam3 {

class StopToken {
 public:
  StopToken() noexcept = default;  // never stops
  // Follows a flag the caller owns (e.g. one a signal handler sets); the flag must outlive
  // every run given this token.
  static StopToken following(const std::atomic<bool>* flag) noexcept {
    StopToken t;
    t.flag_ = flag;
    return t;
  }
  bool stop_requested() const noexcept { return flag_ && flag_->load(std::memory_order_relaxed); }
  bool stoppable() const noexcept { return flag_ != nullptr; }

 private:
  friend class StopSource;
  std::shared_ptr<const std::atomic<bool>> owned_;  // keeps a StopSource's flag alive
  const std::atomic<bool>* flag_ = nullptr;
};

class StopSource {
 public:
  StopSource() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
  // Lock-free (one atomic store): safe in a signal handler. Runs in flight with this source's
  // tokens are terminated by the library's watcher within a few milliseconds.
  void request_stop() const noexcept { flag_->store(true); }
  bool stop_requested() const noexcept { return flag_->load(); }
  StopToken token() const noexcept {
    StopToken t;
    t.owned_ = flag_;
    t.flag_ = flag_.get();
    return t;
  }

 private:
  std::shared_ptr<std::atomic<bool>> flag_;
};

}  // namespace sam3
