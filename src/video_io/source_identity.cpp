// What a run's frames came from, to tell on resume (and before skipping a finished video)
// whether the video or folder changed since: a changed source is tracked again, never spliced.
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/hash.h"
#include "sam3/error.h"
#include "sam3/video_sources.h"
#include "video_io/frame_folder.h"

namespace sam3 {

namespace fs = std::filesystem;

namespace {

constexpr std::streamsize kHeadBytes = 1 << 20;  // a video file's first MiB: its header and first frames

std::int64_t mtime_ns(const fs::path& path) {
  std::error_code ec;
  const auto t = fs::last_write_time(path, ec);
  if (ec) throw Error(ErrorCode::kImageUnreadable, path.string() + ": cannot read its modification time (" + ec.message() + ")");
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::int64_t size_of(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) throw Error(ErrorCode::kImageUnreadable, path.string() + ": cannot read its size (" + ec.message() + ")");
  return static_cast<std::int64_t>(size);
}

}  // namespace

std::string video_source_identity(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    // Each frame's name, size and time: a frame added, removed, renamed or rewritten changes it.
    std::string all;
    const auto files = video_io::list_frame_files(path);
    for (const auto& f : files) {
      all += f.filename().string();
      all += '\0' + std::to_string(size_of(f)) + '\0' + std::to_string(mtime_ns(f)) + '\n';
    }
    return nlohmann::json{{"kind", "folder"}, {"frames", files.size()}, {"digest", core::hex64(core::fnv1a64(all))}}.dump();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::kImageUnreadable, path.string() + ": cannot open");
  std::string head(static_cast<size_t>(kHeadBytes), '\0');
  in.read(head.data(), kHeadBytes);
  head.resize(static_cast<size_t>(in.gcount()));
  return nlohmann::json{{"kind", "file"}, {"size", size_of(path)}, {"mtime_ns", mtime_ns(path)}, {"head", core::hex64(core::fnv1a64(head))}}
      .dump();
}

}  // namespace sam3
