// Which source frames a FrameSourceOptions keeps, shared by every source.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "sam3/error.h"
#include "sam3/video_sources.h"

namespace sam3::video_io {

inline void check_stride(const FrameSourceOptions& options) {
  if (options.every < 1) {
    throw Error(ErrorCode::kInvalidArgument, "the frame stride must be at least 1 (got " + std::to_string(options.every) + ")");
  }
  if (!std::isfinite(options.fps) || options.fps < 0) {
    throw Error(ErrorCode::kInvalidArgument, "fps must be a finite number from 0 (0: 25 for a folder of frames)");
  }
  if (options.max_pixels < 1) throw Error(ErrorCode::kInvalidArgument, "max_pixels must be at least 1");
  if (options.start_index < 0) {
    throw Error(ErrorCode::kInvalidArgument, "the first frame index must not be negative");
  }
}

inline bool keeps(const FrameSourceOptions& options, std::int64_t index) {
  return index >= options.start_index && index % options.every == 0;
}

// How many of the source indices 0..total-1 are kept.
inline std::int64_t kept_count(const FrameSourceOptions& options, std::int64_t total) {
  if (total <= options.start_index) return 0;
  const std::int64_t every = options.every;
  const std::int64_t first = (options.start_index + every - 1) / every * every;  // first multiple >= start
  return first >= total ? 0 : (total - 1 - first) / every + 1;
}

}  // namespace sam3::video_io
