// File digests for download verification (OpenSSL): sha256 for LFS files, git blob sha1
// (the ETag the hub gives small non-LFS files).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace sam3::hub {

struct FileDigests {
  std::string sha256;    // lowercase hex
  std::string git_sha1;  // sha1("blob <size>\0" + content), lowercase hex
  std::int64_t size = 0;
};

// Throws kIo when the file cannot be read. `progress(bytes_done)` is called as it goes.
FileDigests digest_file(const std::filesystem::path& path, const std::function<void(std::int64_t)>& progress = {});

}  // namespace sam3::hub
