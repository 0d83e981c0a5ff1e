// Writes RGB8 frames as a video file with FFmpeg's encoders (the overlay sink's segments,
// and the tests' input videos). Frames are timed in milliseconds, without B-frames, so that
// segments of one run can be joined by copying packets (concatenate_videos).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sam3/image.h"
#include "video_io/ffmpeg_util.h"

namespace sam3::video_io {

// The encoder `preference` names ("h264": libx264, then libopenh264; "mpeg4"; "auto": H.264,
// then MPEG-4 Part 2), or "" when this FFmpeg has none of them.
std::string find_video_encoder(const std::string& preference);

class VideoEncoder {
 public:
  // The container comes from the path's extension (.mp4, .mkv, ...). Odd sizes are padded to
  // even (4:2:0 chroma) by repeating the last row or column. `rotation` (0, 90, 180, 270)
  // is written as the stream's display matrix (for tests of rotated inputs).
  VideoEncoder(const std::filesystem::path& path, int width, int height, double fps, const std::string& encoder, int rotation = 0);
  ~VideoEncoder();
  VideoEncoder(const VideoEncoder&) = delete;
  VideoEncoder& operator=(const VideoEncoder&) = delete;

  // time_s must increase (1 ms apart at least).
  void add(const Image& rgb, double time_s);
  // Drains the encoder and writes the container's trailer; the file is complete after it.
  void finish();

 private:
  void send(AVFrame* frame);

  std::filesystem::path path_;
  OutputPtr output_;
  CodecPtr codec_;
  AVStream* stream_ = nullptr;
  FramePtr yuv_;
  ScalePtr scale_;
  PacketPtr packet_;
  int width_ = 0, height_ = 0;
  std::int64_t last_pts_ = -1, frame_ms_ = 0;
  bool finished_ = false;
};

// Joins video files written by VideoEncoder with the same encoder and size into one file
// (packets copied, timestamps kept). Throws kIo if they differ or cannot be read.
void concatenate_videos(const std::vector<std::filesystem::path>& parts, const std::filesystem::path& out);

}  // namespace sam3::video_io
