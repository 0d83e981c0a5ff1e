// Frames handed over by the caller: pushed (PushFrameSource) or pulled (CallbackFrameSource).
#include <string>

#include "sam3/error.h"
#include "sam3/video_sources.h"

namespace sam3 {
namespace {

void check_size(const VideoInfo& info, const Image& image, std::int64_t index) {
  if (image.width != info.width || image.height != info.height || image.rgb.size() != static_cast<size_t>(image.width) * image.height * 3) {
    throw Error(ErrorCode::kInvalidArgument, info.name + ": frame " + std::to_string(index) + " is " + std::to_string(image.width) + "x" +
                                                 std::to_string(image.height) + " RGB, the video is " + std::to_string(info.width) + "x" +
                                                 std::to_string(info.height) + "; every frame must have the video's size");
  }
}

void check_info(const VideoInfo& info) {
  if (info.width <= 0 || info.height <= 0) {
    throw Error(ErrorCode::kInvalidArgument, "frames pushed one by one need the video's width and height first");
  }
}

double default_time(const VideoInfo& info, std::int64_t index) { return info.fps > 0 ? static_cast<double>(index) / info.fps : 0.0; }

}  // namespace

PushFrameSource::PushFrameSource(VideoInfo info, std::size_t capacity) : info_(std::move(info)), capacity_(capacity == 0 ? 1 : capacity) {
  check_info(info_);
}

void PushFrameSource::push(Image image, std::optional<double> time_s) {
  std::unique_lock lock(mutex_);
  if (closed_) throw Error(ErrorCode::kInvalidArgument, info_.name + ": a frame was pushed after close()");
  check_size(info_, image, pushed_);
  changed_.wait(lock, [&] { return waiting_.size() < capacity_ || closed_; });
  if (closed_) throw Error(ErrorCode::kInvalidArgument, info_.name + ": a frame was pushed after close()");
  VideoFrame frame{std::move(image), pushed_, time_s.value_or(default_time(info_, pushed_))};
  ++pushed_;
  waiting_.push_back(std::move(frame));
  changed_.notify_all();
}

void PushFrameSource::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  changed_.notify_all();
}

std::optional<VideoFrame> PushFrameSource::next() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !waiting_.empty() || closed_; });
  if (waiting_.empty()) return std::nullopt;
  VideoFrame frame = std::move(waiting_.front());
  waiting_.pop_front();
  changed_.notify_all();
  return frame;
}

CallbackFrameSource::CallbackFrameSource(VideoInfo info, std::function<std::optional<Image>()> produce)
    : info_(std::move(info)), produce_(std::move(produce)) {
  check_info(info_);
}

std::optional<VideoFrame> CallbackFrameSource::next() {
  if (!produce_) return std::nullopt;
  auto image = produce_();
  if (!image) {
    produce_ = nullptr;  // the end stays the end
    return std::nullopt;
  }
  check_size(info_, *image, produced_);
  VideoFrame frame{std::move(*image), produced_, default_time(info_, produced_)};
  ++produced_;
  return frame;
}

}  // namespace sam3
