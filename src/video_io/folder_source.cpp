// A folder of images as a video: sorted naturally, one image decoded at a time.
#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <vector>

#include "sam3/error.h"
#include "sam3/image.h"
#include "sam3/video_sources.h"
#include "video_io/stride.h"

namespace sam3 {
namespace {

namespace fs = std::filesystem;

// The extensions sam3::load_image decodes; anything else in the folder is not a frame.
bool is_image_name(const fs::path& p) {
  static const std::array<std::string, 7> kExtensions = {".jpg", ".jpeg", ".png", ".webp", ".bmp", ".tif", ".tiff"};
  std::string ext = p.extension().string();
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return std::find(kExtensions.begin(), kExtensions.end(), ext) != kExtensions.end();
}

class FolderSource final : public FrameSource {
 public:
  FolderSource(const fs::path& folder, const FrameSourceOptions& options) : options_(options) {
    video_io::check_stride(options_);
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) {
      throw Error(ErrorCode::kImageUnreadable, folder.string() + ": no such folder");
    }
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code type_ec;
      if (is_image_name(it->path()) && it->is_regular_file(type_ec)) files_.push_back(it->path());
    }
    if (ec) throw Error(ErrorCode::kImageUnreadable, folder.string() + ": cannot list the folder (" + ec.message() + ")");
    if (files_.empty()) {
      throw Error(ErrorCode::kInvalidArgument,
                  folder.string() + ": no images (JPEG, PNG, WebP, BMP, TIFF) in this folder; give a folder of frames or a video file");
    }
    std::sort(files_.begin(), files_.end(), [](const fs::path& a, const fs::path& b) {
      return natural_less(a.filename().string(), b.filename().string());
    });
    // The first image sets the size: decoded now and kept as the first frame if it is yielded.
    first_ = load_image(files_.front(), limits());
    info_.name = folder.filename().empty() ? folder.parent_path().filename().string() : folder.filename().string();
    info_.width = first_->width;
    info_.height = first_->height;
    info_.fps = options_.fps > 0 ? options_.fps : 25.0;
    info_.frame_count = video_io::kept_count(options_, static_cast<std::int64_t>(files_.size()));
  }

  const VideoInfo& info() const override { return info_; }

  std::optional<VideoFrame> next() override {
    while (next_ < static_cast<std::int64_t>(files_.size()) && !video_io::keeps(options_, next_)) ++next_;
    if (next_ >= static_cast<std::int64_t>(files_.size())) return std::nullopt;
    const std::int64_t index = next_++;
    Image image = index == 0 && first_ ? std::move(*first_) : load_image(files_[static_cast<size_t>(index)], limits());
    first_.reset();
    if (image.width != info_.width || image.height != info_.height) {
      throw Error(ErrorCode::kInvalidArgument,
                  files_[static_cast<size_t>(index)].string() + " is " + std::to_string(image.width) + "x" +
                      std::to_string(image.height) + " but " + files_.front().filename().string() + " is " +
                      std::to_string(info_.width) + "x" + std::to_string(info_.height) +
                      "; every frame of a folder must have the same size (resize it, or move it out)");
    }
    return VideoFrame{std::move(image), index, static_cast<double>(index) / info_.fps};
  }

 private:
  ImageLoadOptions limits() const {
    ImageLoadOptions o;
    o.max_pixels = options_.max_pixels;
    return o;
  }

  FrameSourceOptions options_;
  VideoInfo info_;
  std::vector<fs::path> files_;
  std::optional<Image> first_;
  std::int64_t next_ = 0;
};

}  // namespace

std::unique_ptr<FrameSource> open_image_folder(const fs::path& folder, const FrameSourceOptions& options) {
  return std::make_unique<FolderSource>(folder, options);
}

std::vector<fs::path> list_video_files(const fs::path& folder) {
  static const std::array<std::string, 15> kVideo = {".mp4", ".mov", ".m4v", ".mkv", ".webm", ".avi", ".mpg", ".mpeg",
                                                     ".ts",  ".mts", ".m2ts", ".wmv", ".flv", ".3gp", ".ogv"};
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) throw Error(ErrorCode::kImageUnreadable, folder.string() + ": no such folder");
  std::vector<fs::path> videos;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    std::string ext = it->path().extension().string();
    for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::error_code type_ec;
    if (std::find(kVideo.begin(), kVideo.end(), ext) != kVideo.end() && it->is_regular_file(type_ec)) {
      videos.push_back(it->path());
    }
  }
  if (ec) throw Error(ErrorCode::kImageUnreadable, folder.string() + ": cannot list the folder (" + ec.message() + ")");
  std::sort(videos.begin(), videos.end(), [](const fs::path& a, const fs::path& b) {
    return natural_less(a.filename().string(), b.filename().string());
  });
  return videos;
}

std::unique_ptr<FrameSource> open_frame_source(const fs::path& path, const FrameSourceOptions& options) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return open_image_folder(path, options);
  return open_video_file(path, options);
}

}  // namespace sam3
