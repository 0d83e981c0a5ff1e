// Reading a .zip archive (libzip) for `sam3 models import` and zipped models on the hub.
// Archives are untrusted: an entry is written only up to a bound the caller sets and never
// past the size its header declares (a zip bomb, a lying header), and a failed entry leaves
// no file behind.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

struct zip;

namespace sam3::hub {

class ZipReader {
 public:
  ZipReader() = default;
  ~ZipReader();
  ZipReader(const ZipReader&) = delete;
  ZipReader& operator=(const ZipReader&) = delete;

  void open(const std::filesystem::path& path);  // throws kInvalidArgument
  std::vector<std::string> entries() const;
  // The unpacked size the archive declares for `entry`; throws kInvalidArgument when it has none.
  std::int64_t declared_size(const std::string& entry) const;
  // Writes `entry` to `destination`. Throws kInvalidArgument when it declares more than
  // `max_bytes` or inflates past its declared size, kIo when the disk fails; `destination`
  // is removed on every failure.
  void extract(const std::string& entry, const std::filesystem::path& destination, std::int64_t max_bytes) const;

 private:
  zip* archive_ = nullptr;
  std::filesystem::path path_;
};

}  // namespace sam3::hub
