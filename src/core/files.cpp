#include "sam3/files.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>

#include "sam3/error.h"

namespace sam3 {

void write_file_atomic(const std::filesystem::path& path, const std::string& bytes) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  // Random, not a counter: a crashed process with this pid may have left its temporaries.
  const auto tmp = path.string() + ".tmp" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  int err = fd < 0 ? errno : 0;
  for (size_t done = 0; !err && done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      err = n < 0 ? errno : EIO;
    else
      done += static_cast<size_t>(n);
  }
  // On disk before the rename makes it visible, so a power cut never shows a truncated file.
  if (!err && ::fsync(fd) != 0) err = errno;
  if (fd >= 0 && ::close(fd) != 0 && !err) err = errno;
  if (err) {
    std::filesystem::remove(tmp, ec);
    throw Error(ErrorCode::kIo, path.string() + ": cannot write (" + std::strerror(err) + "); check free disk space and permissions");
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();  // before remove() reuses ec
    std::filesystem::remove(tmp, ec);
    throw Error(ErrorCode::kIo, path.string() + ": cannot move the finished file into place (" + why + ")");
  }
}

void remove_stale_temporaries(const std::filesystem::path& dir) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const size_t at = name.rfind(".tmp");
    if (at == std::string::npos || !e.is_regular_file(ec)) continue;
    const std::string tail = name.substr(at + 4);
    const size_t dash = tail.find('-');
    if (dash == 0 || dash == std::string::npos || tail.find_first_not_of("0123456789-") != std::string::npos) continue;
    const long pid = std::strtol(tail.substr(0, dash).c_str(), nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) std::filesystem::remove(e.path(), ec);
  }
}

}  // namespace sam3
