// A folder of images as a video: sorted naturally (video_io/frame_folder.h), one image decoded at a time.
#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "sam3/error.h"
#include "sam3/image.h"
#include "sam3/log.h"
#include "sam3/video_sources.h"
#include "video_io/frame_folder.h"
#include "video_io/stride.h"

namespace sam3 {
namespace {

namespace fs = std::filesystem;

// A frame that fails to decode is skipped, keeping the indices of the others (the tracker
// sees a gap, as with a stride), with a warning naming it: one damaged file does not end a
// long video. Errors that are not the file's content (unreadable, too large, another size) stop.
bool is_damaged(const Error& e) { return e.code() == ErrorCode::kImageCorrupt || e.code() == ErrorCode::kImageUnsupported; }

class FolderSource final : public FrameSource {
 public:
  FolderSource(const fs::path& folder, const FrameSourceOptions& options) : options_(options) {
    video_io::check_stride(options_);
    files_ = video_io::list_frame_files(folder);
    if (files_.empty()) {
      throw Error(ErrorCode::kInvalidArgument,
                  folder.string() + ": no images (JPEG, PNG, WebP, BMP, TIFF) in this folder; give a folder of frames or a video file");
    }
    // The first image that decodes sets the size: decoded now and kept as its frame if it is yielded.
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(files_.size()) && !first_; ++i) {
      try {
        first_ = load_image(files_[static_cast<size_t>(i)], limits());
        first_index_ = i;
      } catch (const Error& e) {
        if (!is_damaged(e) || i + 1 == static_cast<std::int64_t>(files_.size())) throw;
        log(LogLevel::kWarning, std::string(e.what()) + "; frame " + std::to_string(i) + " skipped (the others keep their indices)");
        skipped_before_first_.insert(i);
      }
    }
    fs::path named = fs::absolute(folder).lexically_normal();  // "frames/", "./frames/." and "." name their folder
    if (!named.has_filename()) named = named.parent_path();
    info_.name = named.filename().string();
    info_.width = first_->width;
    info_.height = first_->height;
    info_.fps = options_.fps > 0 ? options_.fps : 25.0;
    info_.frame_count = video_io::kept_count(options_, static_cast<std::int64_t>(files_.size()));
    info_.frame_count_exact = true;
  }

  const VideoInfo& info() const override { return info_; }

  std::optional<VideoFrame> next() override {
    for (;;) {
      while (next_ < static_cast<std::int64_t>(files_.size()) && !video_io::keeps(options_, next_)) ++next_;
      if (next_ >= static_cast<std::int64_t>(files_.size())) return std::nullopt;
      const std::int64_t index = next_++;
      const fs::path& file = files_[static_cast<size_t>(index)];
      if (skipped_before_first_.count(index)) continue;  // warned about when opening
      std::optional<Image> image;
      if (index == first_index_ && first_) {
        image = std::move(*first_);
        first_.reset();
      } else {
        try {
          image = load_image(file, limits());
        } catch (const Error& e) {
          if (!is_damaged(e)) throw;
          log(LogLevel::kWarning, std::string(e.what()) + "; frame " + std::to_string(index) + " skipped (the others keep their indices)");
          continue;
        }
      }
      if (image->width != info_.width || image->height != info_.height) {
        throw Error(ErrorCode::kInvalidArgument,
                    file.string() + " is " + std::to_string(image->width) + "x" + std::to_string(image->height) + " but " +
                        files_[static_cast<size_t>(first_index_)].filename().string() + " is " + std::to_string(info_.width) + "x" +
                        std::to_string(info_.height) + "; every frame of a folder must have the same size (resize it, or move it out)");
      }
      return VideoFrame{std::move(*image), index, static_cast<double>(index) / info_.fps};
    }
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
  std::int64_t first_index_ = 0;
  std::set<std::int64_t> skipped_before_first_;
  std::int64_t next_ = 0;
};

}  // namespace

std::unique_ptr<FrameSource> open_image_folder(const fs::path& folder, const FrameSourceOptions& options) {
  return std::make_unique<FolderSource>(folder, options);
}

std::vector<fs::path> list_video_files(const fs::path& folder) {
  static const std::array<std::string, 15> kVideo = {".mp4", ".mov", ".m4v",  ".mkv", ".webm", ".avi", ".mpg", ".mpeg",
                                                     ".ts",  ".mts", ".m2ts", ".wmv", ".flv",  ".3gp", ".ogv"};
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
  std::sort(videos.begin(), videos.end(),
            [](const fs::path& a, const fs::path& b) { return natural_less(a.filename().string(), b.filename().string()); });
  return videos;
}

void check_prompt_frames(const fs::path& path, const VideoInfo& info, int every, const std::vector<std::int64_t>& frames) {
  if (every < 1) return;
  std::error_code ec;
  // A folder's count and a container's declared one are known; an estimate (Matroska) is not.
  if ((info.frame_count_exact || fs::is_directory(path, ec)) && info.frame_count > 0) {
    const std::int64_t last = (info.frame_count - 1) * every;  // the last source index tracked
    for (size_t i = 0; i < frames.size(); ++i) {
      if (frames[i] <= last) continue;
      throw Error(ErrorCode::kInvalidArgument, "object" + std::to_string(i + 1) + " is on frame " + std::to_string(frames[i]) + ", but " +
                                                   info.name + " has frames 0 to " + std::to_string(last) +
                                                   (every > 1 ? " tracked (every " + std::to_string(every) + ")" : std::string()) +
                                                   ": give a frame the video has");
    }
  }
  for (size_t i = 0; i < frames.size(); ++i) {
    if (frames[i] < 0 || frames[i] % every == 0) continue;
    throw Error(ErrorCode::kInvalidArgument, "object" + std::to_string(i + 1) + " is on frame " + std::to_string(frames[i]) +
                                                 ", which a stride of " + std::to_string(every) + " skips (it tracks frames 0, " +
                                                 std::to_string(every) + ", " + std::to_string(2 * every) +
                                                 ", ...): give a frame it keeps, or another stride");
  }
}

std::unique_ptr<FrameSource> open_frame_source(const fs::path& path, const FrameSourceOptions& options) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return open_image_folder(path, options);
  return open_video_file(path, options);
}

}  // namespace sam3
