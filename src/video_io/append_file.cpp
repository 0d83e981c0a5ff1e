#include "video_io/append_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sam3/error.h"

namespace sam3::video_io {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what, int err) {
  throw Error(ErrorCode::kIo, path.string() + ": " + what + " (" + std::strerror(err) + ")");
}

}  // namespace

void AppendFile::open(const std::filesystem::path& path, std::int64_t keep_bytes) {
  close();
  path_ = path;
  std::error_code ec;
  if (keep_bytes > 0 && !std::filesystem::exists(path, ec)) {
    throw Error(ErrorCode::kIo, path.string() + ": missing, though its checkpoint holds " + std::to_string(keep_bytes) + " bytes");
  }
  if (keep_bytes >= 0 && std::filesystem::exists(path, ec)) {
    const auto size = static_cast<std::int64_t>(std::filesystem::file_size(path, ec));
    if (size < keep_bytes) {
      throw Error(ErrorCode::kIo, path.string() + ": shorter than its checkpoint (" + std::to_string(size) + " of " +
                                      std::to_string(keep_bytes) + " bytes)");
    }
    if (size > keep_bytes) {
      std::filesystem::resize_file(path, static_cast<std::uintmax_t>(keep_bytes), ec);
      if (ec) throw Error(ErrorCode::kIo, path.string() + ": cannot cut back to the last checkpoint (" + ec.message() + ")");
    }
  }
  failed_ = 0;
  file_ = std::fopen(path.c_str(), "ab");
  if (file_ == nullptr) fail(path, "cannot open for writing", errno);
  size_ = static_cast<std::int64_t>(std::filesystem::file_size(path, ec));
}

AppendFile::~AppendFile() { close(); }

void AppendFile::append(const std::string& bytes) {
  if (failed_ != 0) fail(path_, "cannot write (disk full?)", failed_);
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    failed_ = errno != 0 ? errno : EIO;
    fail(path_, "cannot write (disk full?)", failed_);
  }
  size_ += static_cast<std::int64_t>(bytes.size());
}

std::int64_t AppendFile::sync() {
  if (failed_ != 0) fail(path_, "cannot write (disk full?)", failed_);
  if (file_ == nullptr) return size_;
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) {
    failed_ = errno != 0 ? errno : EIO;
    fail(path_, "cannot write (disk full?)", failed_);
  }
  return size_;
}

void AppendFile::close() {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
}

}  // namespace sam3::video_io
