// A file that grows line by line and is made durable at checkpoints (fsync), and cut back to
// a checkpoint's length when a run resumes.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

namespace sam3::video_io {

class AppendFile {
 public:
  AppendFile() = default;
  // Opens `path` for appending after cutting it to `keep_bytes` (-1 keeps it whole; 0 starts
  // empty, creating it). Throws kIo, also when the file is shorter than `keep_bytes` (then the
  // checkpoint does not describe it).
  void open(const std::filesystem::path& path, std::int64_t keep_bytes);
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  void append(const std::string& bytes);
  // Flushes to disk; returns the length now durable. Once a write or a flush has failed (a full
  // disk, a file-size limit) every later call throws too: stdio may have dropped what it held,
  // so no length it returns could be trusted by a checkpoint.
  std::int64_t sync();
  void close();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::int64_t size_ = 0;
  int failed_ = 0;  // the errno of the write or flush that failed; 0 while none has
};

}  // namespace sam3::video_io
