#include "track_io.h"

#include <algorithm>
#include <cctype>

#include "sam3/error.h"
#include "sam3/files.h"
#include "sam3/image.h"
#include "sam3/mask_encodings.h"

namespace sam3::cli {
namespace fs = std::filesystem;
namespace {

// "frame2" before "frame10": runs of digits compare as numbers.
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      std::string na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      na.erase(0, std::min(na.find_first_not_of('0'), na.size()));
      nb.erase(0, std::min(nb.find_first_not_of('0'), nb.size()));
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie, j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i, ++j;
  }
  return a.size() - i < b.size() - j;
}

class ImageFolder final : public FrameSource {
 public:
  ImageFolder(const fs::path& folder, int every, double fps) : every_(std::max(1, every)), fps_(fps) {
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) {
      throw Error(ErrorCode::kInvalidArgument, folder.string() + ": not a folder of frames (video files need the FFmpeg source)");
    }
    for (const auto& e : fs::directory_iterator(folder, ec)) {
      std::string ext = e.path().extension().string();
      std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
      if (e.is_regular_file() && (ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".webp" || ext == ".bmp" ||
                                  ext == ".tif" || ext == ".tiff")) {
        files_.push_back(e.path());
      }
    }
    if (files_.empty()) throw Error(ErrorCode::kInvalidArgument, folder.string() + ": no image frames in this folder (the video is empty)");
    std::sort(files_.begin(), files_.end(), [](const fs::path& a, const fs::path& b) {
      return natural_less(a.filename().string(), b.filename().string());
    });
    const Image first = load_image(files_.front());
    info_.name = folder.filename().empty() ? folder.parent_path().filename().string() : folder.filename().string();
    info_.width = first.width;
    info_.height = first.height;
    info_.fps = fps;
    info_.frame_count = static_cast<std::int64_t>((files_.size() + every_ - 1) / every_);
  }
  const VideoInfo& info() const override { return info_; }
  std::optional<VideoFrame> next() override {
    if (next_ >= files_.size()) return std::nullopt;
    VideoFrame f;
    f.index = static_cast<std::int64_t>(next_);
    f.time_s = fps_ > 0 ? f.index / fps_ : static_cast<double>(f.index);
    f.image = load_image(files_[next_]);
    next_ += every_;
    return f;
  }

 private:
  std::vector<fs::path> files_;
  size_t next_ = 0;
  int every_;
  double fps_;
  VideoInfo info_;
};

class JsonSink final : public VideoSink {
 public:
  JsonSink(fs::path path, nlohmann::json header) : path_(std::move(path)), doc_(std::move(header)) { doc_["frames"] = nlohmann::json::array(); }
  void write(const VideoFrame&, const VideoFrameResult& r) override {
    nlohmann::json objects = nlohmann::json::array();
    for (const auto& o : r.objects) {
      objects.push_back({{"id", o.id}, {"prompt", o.prompt}, {"score", o.score},
                         {"box", {o.box.x0, o.box.y0, o.box.x1, o.box.y1}},
                         {"mask", {{"size", {o.mask.height, o.mask.width}}, {"counts", rle_encode(o.mask)}}}});
    }
    doc_["frames"].push_back({{"index", r.index}, {"time", r.time_s}, {"objects", std::move(objects)}});
  }
  void finish() override { write_file_atomic(path_, doc_.dump() + "\n"); }

 private:
  fs::path path_;
  nlohmann::json doc_;
};

}  // namespace

std::unique_ptr<FrameSource> open_image_folder(const fs::path& folder, int every, double fps) {
  return std::make_unique<ImageFolder>(folder, every, fps);
}

std::unique_ptr<VideoSink> open_json_sink(const fs::path& out, const VideoInfo& info, nlohmann::json header) {
  fs::create_directories(out);
  header["video"] = {{"name", info.name}, {"width", info.width}, {"height", info.height}, {"fps", info.fps}};
  return std::make_unique<JsonSink>(out / (info.name + ".json"), std::move(header));
}

}  // namespace sam3::cli
