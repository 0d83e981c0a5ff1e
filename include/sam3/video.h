// Video: frames in, tracked objects out, one result per frame with ids that stay.
// The data that flows between frame sources (video files, image folders, frames from Python),
// the tracker (sam3/video_tracker.h) and result sinks (JSON, DAVIS PNGs, MOTS, overlay video).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sam3/image.h"
#include "sam3/types.h"

namespace sam3 {

// What a source knows about its video before the first frame.
struct VideoInfo {
  std::string name;  // file or folder name, for messages and outputs
  int width = 0;     // every frame has this size (a frame of another size is refused)
  int height = 0;
  double fps = 0;                // 0 when unknown (an image folder without a rate given)
  std::int64_t frame_count = 0;  // frames the source will yield after the stride; 0 when unknown
  // frame_count is the source's own count (a folder's files, a container's declared frames), not
  // an estimate (a Matroska file's duration times its rate): only then does a click past it or a
  // video ending before it mean something is wrong.
  bool frame_count_exact = false;
};

// One decoded frame, RGB8 at the video's size.
struct VideoFrame {
  Image image;
  std::int64_t index = 0;  // frame number in the source, counted before any stride
  double time_s = 0;       // presentation time in seconds (index / fps for image folders)
};

struct TrackedObject {
  int id = 0;       // stable through the video, from 1; never reused after an object is removed
  float score = 0;  // concept tracking: the score of the detection that started the object;
                    // click tracking: the tracker's object score (sigmoid of its logit)
  Box box;          // the mask's bounding box in frame pixels
  Mask mask;        // at the frame's size; the objects of one frame never overlap
  int prompt = 0;   // which prompt found it: a text's index, or texts + the object prompt's index
};

struct VideoFrameResult {
  std::int64_t index = 0;  // the VideoFrame's index
  double time_s = 0;
  std::vector<TrackedObject> objects;  // by id
};

// Yields frames one at a time (streaming: a source never holds the whole video).
class FrameSource {
 public:
  virtual ~FrameSource() = default;
  virtual const VideoInfo& info() const = 0;
  // The next frame, or nullopt at the end. Throws sam3::Error for undecodable input.
  virtual std::optional<VideoFrame> next() = 0;
};

// Receives every frame's result in order (JSON per video, DAVIS PNGs, MOTS text, overlay video).
// Nothing a sink writes is visible under its final name before finish() succeeds.
class VideoSink {
 public:
  virtual ~VideoSink() = default;
  virtual void write(const VideoFrame& frame, const VideoFrameResult& result) = 0;
  virtual void finish() = 0;
};

}  // namespace sam3
