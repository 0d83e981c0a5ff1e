#include "core/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sam3/error.h"

namespace sam3::core {
namespace {

int open_lock_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) throw Error(ErrorCode::kIo, path.string() + ": cannot create lock file (" + std::strerror(errno) + ")");
  return fd;
}

}  // namespace

FileLock::FileLock(const std::filesystem::path& path, const std::function<void()>& on_wait) : fd_(open_lock_file(path)) {
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  if (on_wait) on_wait();
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno != EINTR) {
      ::close(fd_);
      throw Error(ErrorCode::kIo, path.string() + ": cannot lock (" + std::strerror(errno) + ")");
    }
  }
}

std::optional<FileLock> FileLock::try_lock(const std::filesystem::path& path, const std::string& what, std::string* holder) {
  const int fd = open_lock_file(path);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (holder) {
      char buf[512];
      const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      *holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "another process";
      while (!holder->empty() && (holder->back() == '\n' || holder->back() == '\0')) holder->pop_back();
    }
    ::close(fd);
    return std::nullopt;
  }
  const std::string text = what + " (pid " + std::to_string(::getpid()) + ")\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) < 0) {
    // The lock holds all the same; only the note for a second process is missing.
  }
  return FileLock(fd);
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

}  // namespace sam3::core
