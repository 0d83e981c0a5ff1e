// Binds sam3cpp._native.open_frame_source (sam3/video_sources.h): video files (FFmpeg) and
// folders of frames, read one frame at a time; sam3cpp.read_video and Model.track use it.
#pragma once

#include <pybind11/pybind11.h>

// After bind_video (its VideoFrame class is what the source yields).
void bind_video_io(pybind11::module_& m);
