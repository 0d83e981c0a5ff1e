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

std::vector<std::string> read_recent_lines(const std::filesystem::path& record, std::int64_t bytes, int count) {
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
  return {lines.begin(), lines.end()};
}

VideoFrameResult parse_result_line(const std::string& line, const std::filesystem::path& record) {
  try {
    const auto j = nlohmann::json::parse(line);
    VideoFrameResult r;
    r.index = j.at("index").get<std::int64_t>();
    r.time_s = j.at("time_s").get<double>();
    for (const auto& o : j.at("objects")) {
      TrackedObject t;
      t.id = o.at("id").get<int>();
      t.score = o.at("score").get<float>();
      t.prompt = o.value("prompt", 0);
      const auto& b = o.at("box");
      t.box = {b.at(0).get<float>(), b.at(1).get<float>(), b.at(2).get<float>(), b.at(3).get<float>()};
      const auto& m = o.at("mask");
      t.mask = rle_decode(m.at("counts").get<std::string>(), m.at("size").at(0).get<int>(), m.at("size").at(1).get<int>());
      r.objects.push_back(std::move(t));
    }
    return r;
  } catch (const nlohmann::json::exception&) {
  } catch (const Error&) {
  }
  throw Error(ErrorCode::kIo, record.string() + ": a damaged line; the partial run cannot be resumed");
}

void sync_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  const bool ok = fd >= 0 && ::fsync(fd) == 0;
  const int err = errno;
  if (fd >= 0) ::close(fd);
  if (!ok) throw Error(ErrorCode::kIo, path.string() + ": cannot write to disk (" + std::strerror(err) + ")");
}

}  // namespace sam3::video_io
