// Binds sam3cpp._native.VideoTracker (sam3/video_tracker.h); sam3cpp.Model.track is the
// Python generator over it (sam3cpp/__init__.py).
#pragma once

#include <pybind11/pybind11.h>

#include "sam3/image.h"
#include "sam3/video.h"

// One frame's result as Python sees it (sam3cpp.VideoFrameResult): the masks' arrays need the
// frame's size. VideoOutputs.write (bind_video_io.cpp) takes it back.
struct VideoFrameOut {
  sam3::VideoFrameResult result;
  int width = 0, height = 0;
};

// `image_of`: the module's conversion of a path, numpy array or PIL image to an RGB image.
void bind_video(pybind11::module_& m, sam3::Image (*image_of)(const pybind11::object&));
