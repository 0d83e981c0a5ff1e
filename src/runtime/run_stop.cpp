#include "runtime/run_stop.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace sam3::runtime {
namespace {

thread_local const StopToken* current = nullptr;

// The runs in flight that have a stoppable token; a thread polls them while there are any.
class Watcher {
 public:
  void add(const StopToken* token, Ort::RunOptions* options) {
    std::lock_guard lock(mutex_);
    runs_.push_back({token, options, false});
    if (!started_) {
      std::thread([this] { loop(); }).detach();  // lives as long as the process
      started_ = true;
    }
    cv_.notify_one();
  }

  void remove(const Ort::RunOptions* options) {
    std::lock_guard lock(mutex_);
    runs_.erase(std::remove_if(runs_.begin(), runs_.end(), [&](const Run& r) { return r.options == options; }), runs_.end());
  }

 private:
  struct Run {
    const StopToken* token;
    Ort::RunOptions* options;
    bool terminated;
  };

  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      cv_.wait(lock, [this] { return !runs_.empty(); });
      for (auto& r : runs_) {
        if (!r.terminated && r.token->stop_requested()) {
          r.options->SetTerminate();  // ONNX Runtime ends the run at its next node
          r.terminated = true;
        }
      }
      cv_.wait_for(lock, std::chrono::milliseconds(5));
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Run> runs_;
  bool started_ = false;
};

Watcher& watcher() {
  static Watcher* instance = new Watcher;  // never freed: its thread outlives static destruction
  return *instance;
}

const StopToken& never() {
  static const StopToken token;
  return token;
}

}  // namespace

StopScope::StopScope(const StopToken& token) : previous_(current) { current = &token; }
StopScope::~StopScope() { current = previous_; }

const StopToken& current_stop_token() { return current ? *current : never(); }

WatchedRun::WatchedRun(const StopToken& token, Ort::RunOptions& options) : token_(token), options_(options) {
  watcher().add(&token_, &options_);
}

WatchedRun::~WatchedRun() { watcher().remove(&options_); }

}  // namespace sam3::runtime
