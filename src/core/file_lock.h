// An exclusive advisory lock on a file (flock), held for the object's lifetime. The kernel
// drops it when the holder dies, so a crashed process never leaves a folder locked.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace sam3::core {

class FileLock {
 public:
  // Blocks until the lock is free; `on_wait` is called once if another holder is seen.
  FileLock(const std::filesystem::path& path, const std::function<void()>& on_wait);
  // Takes the lock if it is free and records this process's id and `what` in the file;
  // nullopt when another process holds it (then *holder, if given, is what that one wrote).
  static std::optional<FileLock> try_lock(const std::filesystem::path& path, const std::string& what, std::string* holder = nullptr);
  ~FileLock();
  FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace sam3::core
