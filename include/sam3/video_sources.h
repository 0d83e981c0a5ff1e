// Frame sources (sam3/video.h's FrameSource): video files through FFmpeg's libraries, folders of
// images sorted naturally, and frames handed over one by one (Python's numpy arrays). Each
// streams: it holds one decoded frame at a time, whatever the video's length.
//
//   auto source = sam3::open_frame_source("clip.mp4", {.every = 2});
//   while (auto frame = source->next()) tracker.add(*frame);
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sam3/video.h"

namespace sam3 {

struct FrameSourceOptions {
  int every = 1;                          // the stride: frames whose source index is a multiple of it
  std::int64_t start_index = 0;           // the first source index yielded (a resumed run); earlier frames are skipped
  double fps = 0;                         // image folders: their frame rate; 0 means 25, as FFmpeg's image2 reader (finite, >= 0)
  std::int64_t max_pixels = 250'000'000;  // larger frames are refused (kImageTooLarge)
};

// A video file (any container and codec Debian's FFmpeg decodes). Frames are RGB8 at the
// displayed size: a rotation in the stream's display matrix (phone videos) is applied; time_s
// is the presentation time from the stream's start; fps is the stream's average rate. A frame
// that cannot be decoded (a damaged packet) is skipped with a warning, and the frames after it
// keep their index in the file (video_io/frame_numbering.h says how it is found).
// Throws kImageUnreadable (missing or unreadable file), kImageUnsupported (not a video, no
// video stream, no decoder), kImageCorrupt (nothing decodable), kImageTooLarge, kInvalidArgument
// (a bad stride or start).
std::unique_ptr<FrameSource> open_video_file(const std::filesystem::path& path, const FrameSourceOptions& options = {});

// The images of a folder (JPEG, PNG, WebP, BMP, TIFF; not its subfolders), sorted naturally
// (frame2 before frame10); index i is the i-th image, time_s = i / fps. Every image must have
// the first one's size (kInvalidArgument naming the file otherwise). An image that fails to
// decode (damaged) is skipped with a warning naming it, and the others keep their indices.
// Throws kImageUnreadable for a missing folder or an entry named as an image that is no file
// (a dangling link, a FIFO: skipping it would shift the later indices), kInvalidArgument for a
// folder without images.
std::unique_ptr<FrameSource> open_image_folder(const std::filesystem::path& folder, const FrameSourceOptions& options = {});

// A folder -> open_image_folder, anything else -> open_video_file.
std::unique_ptr<FrameSource> open_frame_source(const std::filesystem::path& path, const FrameSourceOptions& options = {});

// The video files directly in `folder` (by extension: mp4, mov, m4v, mkv, webm, avi, mpg,
// mpeg, ts, mts, m2ts, wmv, flv, 3gp, ogv; any case), in natural order: what `sam3 label` of a
// folder of videos shards. Throws kImageUnreadable for a missing folder.
std::vector<std::filesystem::path> list_video_files(const std::filesystem::path& folder);

// What identifies the content a path's frames come from (JSON text): for a folder, a digest of
// its frames' names, sizes and modification times, and their count; for a file, its size,
// modification time and a digest of its first MiB. VideoOutputs records it
// (VideoOutputOptions::source_json): a video or folder changed since is tracked again from its
// start, never spliced. Throws kImageUnreadable as the sources do (a missing path, a frame
// that is no file).
std::string video_source_identity(const std::filesystem::path& path);

// Refuses (kInvalidArgument) an object prompt on a frame the stride `every` skips, or past the
// last one `path` yields when that is known before reading (`info` its source's info): a folder
// of frames, or a video file whose container declares its count (info.frame_count_exact; an
// estimated count, as Matroska's, is not trusted: the video's end tells).
// frames[i] is named object<i+1>, as the outputs' labels name it.
void check_prompt_frames(const std::filesystem::path& path, const VideoInfo& info, int every, const std::vector<std::int64_t>& frames);

// Natural order of file names: runs of digits compare as numbers ("frame2" < "frame10"), the
// rest byte by byte; names equal that way ("a01", "a1") fall back to plain byte order.
bool natural_less(std::string_view a, std::string_view b);

// Frames pushed by the caller (one thread pushes, another pulls; or push a few, then pull).
// info() is what the constructor was given: every frame must have its width and height.
// At most `capacity` frames wait: push() blocks when they do, next() blocks until a frame is
// pushed or close() is called.
class PushFrameSource final : public FrameSource {
 public:
  explicit PushFrameSource(VideoInfo info, std::size_t capacity = 4);
  const VideoInfo& info() const override { return info_; }
  // The next frame (index counts pushes from 0; time_s defaults to index / fps, or 0 without
  // a rate). Throws kInvalidArgument for a frame of another size or a push after close().
  void push(Image image, std::optional<double> time_s = std::nullopt);
  // No more frames: next() returns nullopt once the waiting ones are taken.
  void close();
  std::optional<VideoFrame> next() override;

 private:
  VideoInfo info_;
  std::size_t capacity_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<VideoFrame> waiting_;
  std::int64_t pushed_ = 0;
  bool closed_ = false;
};

// Frames pulled from a function on demand (a Python iterator): `produce` returns the next image
// or nullopt at the end; sizes are checked as for PushFrameSource.
class CallbackFrameSource final : public FrameSource {
 public:
  CallbackFrameSource(VideoInfo info, std::function<std::optional<Image>()> produce);
  const VideoInfo& info() const override { return info_; }
  std::optional<VideoFrame> next() override;

 private:
  VideoInfo info_;
  std::function<std::optional<Image>()> produce_;
  std::int64_t produced_ = 0;
};

}  // namespace sam3
