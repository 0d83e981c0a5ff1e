#include "hub/zip_reader.h"

#include <zip.h>

#include <fstream>
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

void ZipReader::extract(const std::string& entry, const std::filesystem::path& destination) const {
  zip_file_t* f = zip_fopen(archive_, entry.c_str(), 0);
  if (!f) throw Error(ErrorCode::kIo, path_.string() + ": cannot open " + entry + " in the archive");
  std::ofstream out(destination, std::ios::binary | std::ios::trunc);
  std::vector<char> buf(1 << 20);
  zip_int64_t n;
  while ((n = zip_fread(f, buf.data(), buf.size())) > 0) out.write(buf.data(), n);
  zip_fclose(f);
  if (n < 0 || !out) throw Error(ErrorCode::kIo, path_.string() + ": " + entry + " is damaged in the archive or the disk is full");
}

}  // namespace sam3::hub
