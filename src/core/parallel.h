// A parallel loop for the few CPU-bound steps outside ONNX Runtime (per-instance mask
// upsampling): contiguous chunks on short-lived threads, the caller's thread included.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace sam3::core {

// Calls fn(i) for every i in [0, n); rethrows the first exception a call threw. Small loops
// (fewer than `min_per_thread` items per extra thread) run on the caller's thread only.
template <typename Fn>
void parallel_for(size_t n, Fn&& fn, size_t min_per_thread = 4) {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  const size_t hw = 1;  // WebAssembly without threads: std::thread cannot start one
#else
  const size_t hw = std::max<size_t>(1, std::thread::hardware_concurrency());
#endif
  const size_t threads = std::clamp<size_t>(n / std::max<size_t>(min_per_thread, 1), 1, hw);
  std::vector<std::exception_ptr> errors(threads);
  const auto run_chunk = [&](size_t t) {
    try {
      for (size_t i = t * n / threads, end = (t + 1) * n / threads; i < end; ++i) fn(i);
    } catch (...) {
      errors[t] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(run_chunk, t);
  run_chunk(0);
  for (auto& th : pool) th.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace sam3::core
