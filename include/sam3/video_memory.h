// What tracking a video holds in memory at its frame size, checked before the first frame: a
// small file may declare frames of gigabytes (a 729-byte GIF of 15000x15000 pixels).
//
//   sam3::check_video_tracking_memory(source->info(), options.hotstart_delay, outputs.needs_pixels());
#pragma once

#include <cstdint>

#include "sam3/video.h"

namespace sam3 {

// Bytes a run holds at least besides the model, at `width` x `height`: the frame being decoded
// and converted, the outputs' label map and per-format buffers, one object's masks while the
// hot-start delay holds its results, and with `hold_frames` (the overlay needs pixels) the
// frames waiting for their results. More objects hold more (a mask a frame each).
std::int64_t video_tracking_bytes(int width, int height, int hotstart_delay, bool hold_frames);

// The memory this process can still take: the least of the system's available memory
// (/proc/meminfo), its cgroup's room (a Slurm job, a container) and its address-space limit
// (ulimit -v); -1 when none is known.
std::int64_t available_memory_bytes();

// Throws kImageTooLarge naming the video when video_tracking_bytes() is more than
// available_memory_bytes(), saying what to do (scale the video down; leave out the overlay).
void check_video_tracking_memory(const VideoInfo& info, int hotstart_delay, bool hold_frames);

}  // namespace sam3
