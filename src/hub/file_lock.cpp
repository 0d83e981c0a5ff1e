#include "hub/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sam3/error.h"

namespace sam3::hub {

FileLock::FileLock(const std::filesystem::path& path, const std::function<void()>& on_wait) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(ErrorCode::kIo, path.string() + ": cannot create lock file (" + std::strerror(errno) + ")");
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  if (on_wait) on_wait();
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno != EINTR) {
      ::close(fd_);
      throw Error(ErrorCode::kIo, path.string() + ": cannot lock (" + std::strerror(errno) + ")");
    }
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

}  // namespace sam3::hub
