// Reading a .zip archive (libzip) for `sam3 models import`.
#pragma once

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
  void extract(const std::string& entry, const std::filesystem::path& destination) const;  // throws kIo

 private:
  zip* archive_ = nullptr;
  std::filesystem::path path_;
};

}  // namespace sam3::hub
