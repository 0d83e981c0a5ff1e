#include "hub/zip_reader.h"

#include <zip.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <memory>
#include <vector>

#include "sam3/error.h"

namespace sam3::hub {

ZipReader::~ZipReader() {
  if (archive_) zip_discard(archive_);
}

void ZipReader::open(const std::filesystem::path& path) {
  int error = 0;
  archive_ = zip_open(path.c_str(), ZIP_RDONLY, &error);
  path_ = path;
  if (!archive_) {
    zip_error_t e;
    zip_error_init_with_code(&e, error);
    const std::string why = zip_error_strerror(&e);
    zip_error_fini(&e);
    throw Error(ErrorCode::kInvalidArgument, path.string() + ": cannot read as a zip archive (" + why + ")");
  }
}

std::vector<std::string> ZipReader::entries() const {
  std::vector<std::string> names;
  const zip_int64_t n = zip_get_num_entries(archive_, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    if (const char* name = zip_get_name(archive_, static_cast<zip_uint64_t>(i), 0)) names.emplace_back(name);
  }
  return names;
}

std::int64_t ZipReader::declared_size(const std::string& entry) const {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat(archive_, entry.c_str(), 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE) || st.size > static_cast<zip_uint64_t>(INT64_MAX)) {
    throw Error(ErrorCode::kInvalidArgument, path_.string() + ": " + entry + " has no readable size in the archive; it is damaged");
  }
  return static_cast<std::int64_t>(st.size);
}

void ZipReader::extract(const std::string& entry, const std::filesystem::path& destination, std::int64_t max_bytes) const {
  const std::int64_t declared = declared_size(entry);
  if (declared > max_bytes) {
    throw Error(ErrorCode::kInvalidArgument, path_.string() + ": " + entry + " says it unpacks to " + std::to_string(declared) +
                                                 " bytes, more than the " + std::to_string(max_bytes) +
                                                 " allowed for it (SAM3_MAX_UNPACKED_BYTES raises the limit); nothing was written");
  }
  const auto close = [](zip_file_t* f) { zip_fclose(f); };
  std::unique_ptr<zip_file_t, decltype(close)> f(zip_fopen(archive_, entry.c_str(), 0), close);
  if (!f)
    throw Error(ErrorCode::kInvalidArgument,
                path_.string() + ": cannot open " + entry + " in the archive (" + zip_strerror(archive_) + ")");
  std::string problem;
  ErrorCode code = ErrorCode::kInvalidArgument;  // the archive's fault, unless the disk fails
  {
    std::ofstream out(destination, std::ios::binary | std::ios::trunc);
    std::vector<char> buf(1 << 20);
    std::int64_t written = 0;
    for (;;) {
      // One byte more than declared is read when there is any: the proof of a lying header.
      const auto want = static_cast<zip_uint64_t>(std::min<std::int64_t>(static_cast<std::int64_t>(buf.size()), declared - written + 1));
      const zip_int64_t n = zip_fread(f.get(), buf.data(), want);
      if (n < 0) {
        problem = entry + " is damaged in the archive (" + zip_file_strerror(f.get()) + "); nothing was kept";
        break;
      }
      if (n == 0) break;
      written += n;
      if (written > declared) {
        problem = entry + " unpacks to more than the " + std::to_string(declared) +
                  " bytes its header declares: a damaged archive or a zip bomb; nothing was kept";
        break;
      }
      if (!out.write(buf.data(), n)) break;
    }
    out.close();
    if (problem.empty() && !out) {
      code = ErrorCode::kIo;
      problem = entry + ": cannot write " + destination.string() + " (is the disk full?); nothing was kept";
    }
    if (problem.empty() && written != declared) {
      problem = entry + " unpacks to " + std::to_string(written) + " bytes, not the " + std::to_string(declared) +
                " its header declares; the archive is damaged; nothing was kept";
    }
  }
  if (!problem.empty()) {
    std::error_code ec;
    std::filesystem::remove(destination, ec);
    throw Error(code, path_.string() + ": " + problem);
  }
}

}  // namespace sam3::hub
