#include "model/npy.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "sam3/error.h"

namespace sam3::detail {
namespace {

[[noreturn]] void bad(const std::filesystem::path& path, const std::string& what) {
  throw Error(ErrorCode::kModelMismatch, path.string() + ": not a NumPy array sam3 reads (" + what +
                                             "); the bundle's npy/ constants are little-endian float32, C order");
}

std::string field(const std::string& header, const std::string& key) {
  const auto at = header.find("'" + key + "'");
  if (at == std::string::npos) return {};
  auto start = header.find(':', at);
  if (start == std::string::npos) return {};
  ++start;
  while (start < header.size() && header[start] == ' ') ++start;
  const char open = header[start];
  const char close = open == '(' ? ')' : open == '\'' ? '\'' : ',';
  const auto end = header.find(close, start + 1);
  if (end == std::string::npos) return {};
  return header.substr(start, end - start + 1);
}

}  // namespace

NpyArray load_npy(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ErrorCode::kModelNotFound, path.string() + ": missing; the SAM 3.1 bundle keeps its constants in npy/ beside the graphs");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) bad(path, "no .npy magic");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) bad(path, "truncated header");
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    offset = 12;
  } else {
    bad(path, "format version " + std::to_string(major));
  }
  if (offset + header_len > bytes.size()) bad(path, "truncated header");
  const std::string header = bytes.substr(offset, header_len);
  const std::string descr = field(header, "descr");
  if (field(header, "fortran_order").find("True") != std::string::npos) bad(path, "Fortran order");
  size_t item = 0;
  if (descr == "'<f4'")
    item = 4;
  else if (descr == "'<f8'")
    item = 8;
  else
    bad(path, "dtype " + descr);
  NpyArray array;
  const std::string shape = field(header, "shape");
  if (shape.empty()) bad(path, "no shape");
  std::int64_t count = 1;
  for (size_t i = 1; i < shape.size();) {
    while (i < shape.size() && (shape[i] == ' ' || shape[i] == ',')) ++i;
    if (i >= shape.size() || shape[i] == ')') break;
    size_t used = 0;
    const long long dim = std::stoll(shape.substr(i), &used);
    if (dim < 0) bad(path, "negative dimension");
    array.shape.push_back(dim);
    count *= dim;
    i += used;
  }
  const size_t data_at = offset + header_len;
  if (bytes.size() - data_at < static_cast<size_t>(count) * item) bad(path, "fewer values than its shape");
  array.data.resize(count);
  for (std::int64_t i = 0; i < count; ++i) {
    if (item == 4) {
      std::memcpy(&array.data[i], bytes.data() + data_at + i * 4, 4);
    } else {
      double v;
      std::memcpy(&v, bytes.data() + data_at + i * 8, 8);
      array.data[i] = static_cast<float>(v);
    }
  }
  return array;
}

}  // namespace sam3::detail
