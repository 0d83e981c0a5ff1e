// Scenes for the video tests: frames with a moving square, written as real video files with
// FFmpeg's encoders, and temporary folders that are removed after each test.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "sam3/image.h"
#include "video_io/video_encoder.h"

namespace sam3::test {

// A folder under the temporary directory, removed when the test ends.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            (prefix + "_" + info->test_suite_name() + "_" + info->name() + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline int square_x(int width, int frame) { return (8 + 4 * frame) % (width - 24); }

// A grey frame (level set by the frame number) with a 16x16 white square whose top-left
// corner moves 4 pixels right per frame: where the square is tells which frame it is.
inline Image scene_frame(int width, int height, int frame) {
  Image image;
  image.width = width;
  image.height = height;
  image.rgb.assign(static_cast<size_t>(width) * height * 3, 0);
  const std::uint8_t grey = static_cast<std::uint8_t>(40 + (frame * 7) % 100);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      std::uint8_t* p = &image.rgb[(static_cast<size_t>(y) * width + x) * 3];
      const bool square = x >= square_x(width, frame) && x < square_x(width, frame) + 16 && y >= 8 && y < 24;
      p[0] = square ? 250 : grey;
      p[1] = square ? 250 : static_cast<std::uint8_t>(grey / 2);
      p[2] = square ? 250 : static_cast<std::uint8_t>(255 - grey);
    }
  }
  return image;
}

// Mean absolute difference of two images' bytes (lossy codecs: a few levels).
inline double mean_abs_diff(const Image& a, const Image& b) {
  if (a.rgb.size() != b.rgb.size() || a.rgb.empty()) return 1e9;
  double sum = 0;
  for (size_t i = 0; i < a.rgb.size(); ++i) sum += std::abs(int(a.rgb[i]) - int(b.rgb[i]));
  return sum / static_cast<double>(a.rgb.size());
}

// An MP4 as `ffmpeg -movflags +faststart` leaves it (downloads and phones' exports often are):
// the moov box moved in front of the mdat box, every chunk offset (stco, co64) moved with the
// data. The file unchanged when moov already comes first.
inline std::string with_moov_first(const std::string& mp4) {
  const auto read = [](const std::string& s, size_t at, int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = v << 8 | static_cast<unsigned char>(s[at + i]);
    return v;
  };
  const auto write = [](std::string& s, size_t at, int bytes, std::uint64_t v) {
    for (int i = bytes - 1; i >= 0; --i, v >>= 8) s[at + i] = static_cast<char>(v & 0xff);
  };
  struct Box {
    size_t at, size;
    std::string type;
  };
  const auto children = [&](const std::string& s, size_t from, size_t to) {
    std::vector<Box> boxes;
    for (size_t at = from; at + 8 <= to;) {
      std::uint64_t size = read(s, at, 4);
      if (size == 1) size = read(s, at + 8, 8);
      if (size == 0) size = to - at;
      if (size < 8 || at + size > to) break;
      boxes.push_back({at, static_cast<size_t>(size), s.substr(at + 4, 4)});
      at += size;
    }
    return boxes;
  };
  const auto top = children(mp4, 0, mp4.size());
  const auto find = [&](const char* type) {
    for (const auto& b : top)
      if (b.type == type) return b;
    return Box{0, 0, ""};
  };
  const Box moov = find("moov"), mdat = find("mdat");
  if (moov.size == 0 || mdat.size == 0 || moov.at < mdat.at) return mp4;
  std::string moved = mp4.substr(moov.at, moov.size);
  const std::function<void(size_t, size_t)> shift = [&](size_t from, size_t to) {
    for (const Box& b : children(moved, from, to)) {
      if (b.type == "trak" || b.type == "mdia" || b.type == "minf" || b.type == "stbl") shift(b.at + 8, b.at + b.size);
      const int width = b.type == "stco" ? 4 : b.type == "co64" ? 8 : 0;
      if (width == 0) continue;
      const std::uint64_t count = read(moved, b.at + 12, 4);
      for (std::uint64_t i = 0; i < count && b.at + 16 + (i + 1) * width <= b.at + b.size; ++i) {
        const size_t at = b.at + 16 + i * width;
        write(moved, at, width, read(moved, at, width) + moov.size);
      }
    }
  };
  shift(8, moved.size());
  return mp4.substr(0, mdat.at) + moved + mp4.substr(mdat.at, moov.at - mdat.at) + mp4.substr(moov.at + moov.size);
}

// Writes `times.size()` scene frames at those presentation times.
inline void write_scene_video(const std::filesystem::path& path, int width, int height, const std::vector<double>& times,
                              const std::string& encoder, int rotation = 0) {
  const double fps = times.size() > 1 ? (times.size() - 1) / (times.back() - times.front()) : 25.0;
  video_io::VideoEncoder writer(path, width, height, fps, encoder, rotation);
  for (size_t i = 0; i < times.size(); ++i) writer.add(scene_frame(width, height, static_cast<int>(i)), times[i]);
  writer.finish();
}

inline std::string davis_name(int index) {
  char name[32];
  std::snprintf(name, sizeof name, "%05d.png", index);
  return name;
}

inline std::string mots_png_name(int index) {
  char name[32];
  std::snprintf(name, sizeof name, "frame_%06d.png", index);
  return name;
}

inline std::vector<double> regular_times(int count, double fps) {
  std::vector<double> t;
  for (int i = 0; i < count; ++i) t.push_back(i / fps);
  return t;
}

}  // namespace sam3::test
