// Stopping ONNX Runtime runs mid-session. ONNX Runtime ends a run between nodes once its
// RunOptions' terminate flag is set; sam3's StopToken is a plain atomic flag (so that a signal
// handler may set it), so one process-wide watcher thread polls the tokens of the runs in
// flight every few milliseconds and sets the terminate flag of those asked to stop.
//
// Which token a run obeys is the calling thread's current one (StopScope), set by Model
// around each encode and segment call, so the layouts' backends need not pass it along.
#pragma once

#include <onnxruntime_cxx_api.h>

#include "sam3/stop_token.h"

namespace sam3::runtime {

// Makes `token` the current thread's stop token for its lifetime (restoring the previous one).
class StopScope {
 public:
  explicit StopScope(const StopToken& token);
  ~StopScope();
  StopScope(const StopScope&) = delete;
  StopScope& operator=(const StopScope&) = delete;

 private:
  const StopToken* previous_;
};

// The current thread's token (a never-stopping one when no scope is open).
const StopToken& current_stop_token();

// While alive, `options` is terminated as soon as `token` asks to stop.
class WatchedRun {
 public:
  WatchedRun(const StopToken& token, Ort::RunOptions& options);
  ~WatchedRun();
  WatchedRun(const WatchedRun&) = delete;
  WatchedRun& operator=(const WatchedRun&) = delete;

 private:
  const StopToken& token_;
  Ort::RunOptions& options_;
};

}  // namespace sam3::runtime
