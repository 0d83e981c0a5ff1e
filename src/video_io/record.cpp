#include "video_io/record.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sam3/error.h"
#include "sam3/mask_encodings.h"

namespace sam3::video_io {

std::vector<VideoFrameResult> read_recent_results(const std::filesystem::path& record, std::int64_t bytes, int count) {
  std::ifstream in(record, std::ios::binary);
  std::deque<std::string> lines;
  std::string line;
  std::int64_t read = 0;
  while (count > 0 && read < bytes && std::getline(in, line)) {
    read += static_cast<std::int64_t>(line.size()) + 1;
    if (read > bytes) break;  // past the checkpoint: not part of the record
    lines.push_back(std::move(line));
    if (static_cast<int>(lines.size()) > count) lines.pop_front();
  }
  std::vector<VideoFrameResult> results;
  for (const auto& text : lines) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object()) throw Error(ErrorCode::kIo, record.string() + ": a damaged line; remove the partial run to start over");
    VideoFrameResult r;
    r.index = j.value("index", std::int64_t{0});
    r.time_s = j.value("time_s", 0.0);
    for (const auto& o : j.value("objects", nlohmann::json::array())) {
      TrackedObject t;
      t.id = o.value("id", 0);
      t.score = o.value("score", 0.0f);
      const auto& b = o.at("box");
      t.box = {b.at(0).get<float>(), b.at(1).get<float>(), b.at(2).get<float>(), b.at(3).get<float>()};
      const auto& m = o.at("mask");
      t.mask = rle_decode(m.at("counts").get<std::string>(), m.at("size").at(0).get<int>(), m.at("size").at(1).get<int>());
      r.objects.push_back(std::move(t));
    }
    results.push_back(std::move(r));
  }
  return results;
}

void sync_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  const bool ok = fd >= 0 && ::fsync(fd) == 0;
  const int err = errno;
  if (fd >= 0) ::close(fd);
  if (!ok) throw Error(ErrorCode::kIo, path.string() + ": cannot write to disk (" + std::strerror(err) + ")");
}

}  // namespace sam3::video_io
