// Where `sam3 track` gets frames and puts results, in one small replaceable place: until the
// video-io work (FFmpeg files, natural-sorted folders, DAVIS PNGs, MOTS, overlay video) is
// merged, a folder of images sorted by name (digits compared as numbers) and one JSON file per
// video (per frame: ids, boxes, scores, COCO RLE masks). Both speak sam3/video.h's
// FrameSource / VideoSink, which the real sources and sinks implement.
#pragma once

#include <filesystem>
#include <memory>

#include "nlohmann/json.hpp"
#include "sam3/video.h"

namespace sam3::cli {

// Image files of a folder (JPEG, PNG, WebP, BMP, TIFF) in natural order; every `every`-th
// kept; timestamps index / fps (fps 0: unknown, time = index). Throws kInvalidArgument for a
// folder without images, kImage* for a frame that cannot be decoded.
std::unique_ptr<FrameSource> open_image_folder(const std::filesystem::path& folder, int every, double fps);

// <out>/<video name>.json, written atomically when finish() succeeds: {"video", "model",
// "settings", "frames": [{"index", "time", "objects": [{"id", "prompt", "score", "box",
// "mask": {"size": [h, w], "counts": COCO RLE}}]}]}.
std::unique_ptr<VideoSink> open_json_sink(const std::filesystem::path& out, const VideoInfo& info, nlohmann::json header);

}  // namespace sam3::cli
