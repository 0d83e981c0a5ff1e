// An exclusive advisory lock on a file (flock), held for the object's lifetime, so two
// processes never download the same file at once.
#pragma once

#include <filesystem>
#include <functional>

namespace sam3::hub {

class FileLock {
 public:
  // Blocks until the lock is free; `on_wait` is called once if another holder is seen.
  FileLock(const std::filesystem::path& path, const std::function<void()>& on_wait);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace sam3::hub
