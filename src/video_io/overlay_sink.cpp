// overlay.mp4: the frames with each object tinted in its id's colour and its id drawn, at the
// frames' own times. Written in segments (overlay/seg-<first frame>.mkv) closed at every
// checkpoint, so a resumed run keeps the finished ones; joined by copying packets at the end.
// Without an H.264 or MPEG-4 encoder (or with "png"), overlay/ holds one PNG per frame.
#include <algorithm>
#include <opencv2/imgproc.hpp>

#include "sam3/error.h"
#include "sam3/export.h"
#include "sam3/log.h"
#include "video_io/partial_sink.h"
#include "video_io/record.h"
#include "video_io/video_encoder.h"

namespace sam3::video_io {
namespace {

namespace fs = std::filesystem;

// Colours far apart, by id (ids are stable, so are colours).
const std::uint8_t kColours[][3] = {{230, 25, 75},  {60, 180, 75},  {0, 130, 200},   {245, 130, 48}, {145, 30, 180},  {70, 240, 240},
                                    {240, 50, 230}, {210, 245, 60}, {250, 190, 212}, {0, 128, 128},  {220, 190, 255}, {170, 110, 40}};

const std::uint8_t* colour_of(int id) { return kColours[static_cast<size_t>(id) % std::size(kColours)]; }

Image render(const FrameOutput& out) {
  Image image = out.frame.image;
  for (size_t p = 0; p < out.labels.size(); ++p) {
    if (out.labels[p] == 0) continue;
    const std::uint8_t* c = colour_of(out.labels[p]);
    std::uint8_t* px = &image.rgb[p * 3];
    for (int k = 0; k < 3; ++k) px[k] = static_cast<std::uint8_t>((px[k] + c[k]) / 2);
  }
  cv::Mat canvas(image.height, image.width, CV_8UC3, image.rgb.data());
  const double scale = std::max(0.4, std::min(image.width, image.height) / 600.0);
  const int thickness = std::max(1, static_cast<int>(scale * 1.5));
  for (const auto& object : out.result.objects) {
    if (object.box.x1 <= object.box.x0 || object.box.y1 <= object.box.y0) continue;
    const std::uint8_t* c = colour_of(object.id);
    const std::string text = std::to_string(object.id);
    int baseline = 0;
    const auto size = cv::getTextSize(text, cv::FONT_HERSHEY_SIMPLEX, scale * 0.6, thickness, &baseline);
    // The id's tag: above the box where there is room, else below it, else inside it.
    const int tag_h = size.height + baseline + 4;
    const int x = std::clamp(static_cast<int>(object.box.x0), 0, std::max(0, image.width - size.width - 4));
    int top = static_cast<int>(object.box.y0) - tag_h;
    if (top < 0) top = static_cast<int>(object.box.y1) + 1;
    if (top + tag_h > image.height) top = std::max(0, static_cast<int>(object.box.y0));
    const int y = top + size.height + 2;  // the text's baseline
    cv::rectangle(canvas, cv::Point(x, top), cv::Point(x + size.width + 4, top + tag_h - 1), cv::Scalar(c[0], c[1], c[2]), cv::FILLED);
    cv::putText(canvas, text, cv::Point(x + 2, y - 2), cv::FONT_HERSHEY_SIMPLEX, scale * 0.6, cv::Scalar(255, 255, 255), thickness,
                cv::LINE_AA);
  }
  return image;
}

class OverlaySink final : public PartialSink {
 public:
  explicit OverlaySink(const SinkContext& context) : context_(context) {
    if (context.overlay_encoder != "png") {
      encoder_ = find_video_encoder(context.overlay_encoder);
      if (encoder_.empty()) log(LogLevel::kWarning, "no H.264 or MPEG-4 encoder in this FFmpeg: the overlay is written as PNGs");
    }
  }
  std::vector<std::string> entries() const override { return {encoder_.empty() ? "overlay" : "overlay.mp4"}; }

  void open(const fs::path& work, const nlohmann::json* saved, std::int64_t last_committed_index) override {
    folder_ = work;
    fs::create_directories(folder_);
    written_ = saved ? saved->value("frames", std::int64_t{0}) : 0;
    if (encoder_.empty()) {
      remove_frame_files_after(folder_, "", ".png", last_committed_index);
      remove_stale_temporaries(folder_);
    } else {
      remove_frame_files_after(folder_, "seg-", ".mkv", written_ - 1);  // the segment cut short
    }
  }

  void write(const FrameOutput& out) override {
    const Image image = render(out);
    if (encoder_.empty()) {
      write_file_atomic(folder_ / frame_file_name("", out.result.index, 5, ".png"), encode_rgb_png(image));
    } else {
      if (!segment_) {
        segment_ = std::make_unique<VideoEncoder>(folder_ / frame_file_name("seg-", written_, 8, ".mkv"), image.width, image.height,
                                                  context_.info.fps, encoder_);
      }
      segment_->add(image, out.result.time_s);
    }
    ++written_;
  }

  nlohmann::json checkpoint() override {
    if (segment_) {
      segment_->finish();
      segment_.reset();
    }
    return {{"frames", written_}};
  }

  void finish(OutputFolderUpdate& update) override {
    checkpoint();
    if (encoder_.empty()) {
      link_into_stage(folder_, update, "overlay");
      return;
    }
    std::vector<fs::path> parts;
    for (const auto& e : fs::directory_iterator(folder_)) {
      if (e.path().extension() == ".mkv" && e.path().filename().string().rfind("seg-", 0) == 0) parts.push_back(e.path());
    }
    if (parts.empty()) return;              // no frame: no video
    std::sort(parts.begin(), parts.end());  // fixed-width numbers: name order is frame order
    const fs::path target = update.stage("overlay.mp4");
    concatenate_videos(parts, target);
    sync_file(target);
  }

 private:
  SinkContext context_;
  std::string encoder_;
  fs::path folder_;
  std::int64_t written_ = 0;
  std::unique_ptr<VideoEncoder> segment_;
};

}  // namespace

std::unique_ptr<PartialSink> make_overlay_sink(const SinkContext& context) { return std::make_unique<OverlaySink>(context); }

}  // namespace sam3::video_io
