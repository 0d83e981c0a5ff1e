#include "hub/checksum.h"

#include <openssl/evp.h>

#include <fstream>
#include <memory>
#include <vector>

#include "sam3/error.h"

namespace sam3::hub {
namespace {

using Ctx = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

std::string hex(const unsigned char* data, unsigned n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (unsigned i = 0; i < n; ++i) {
    s.push_back(digits[data[i] >> 4]);
    s.push_back(digits[data[i] & 15]);
  }
  return s;
}

std::string finish(EVP_MD_CTX* ctx) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  EVP_DigestFinal_ex(ctx, md, &n);
  return hex(md, n);
}

}  // namespace

FileDigests digest_file(const std::filesystem::path& path, const std::function<void(std::int64_t)>& progress) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  if (ec || !in) throw Error(ErrorCode::kIo, path.string() + ": cannot read for checksum");
  Ctx sha256(EVP_MD_CTX_new(), EVP_MD_CTX_free), sha1(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(sha256.get(), EVP_sha256(), nullptr);
  EVP_DigestInit_ex(sha1.get(), EVP_sha1(), nullptr);
  const std::string header = "blob " + std::to_string(size) + std::string(1, '\0');
  EVP_DigestUpdate(sha1.get(), header.data(), header.size());
  std::vector<char> buf(1 << 20);
  std::int64_t done = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = in.gcount();
    if (n <= 0) break;
    EVP_DigestUpdate(sha256.get(), buf.data(), static_cast<size_t>(n));
    EVP_DigestUpdate(sha1.get(), buf.data(), static_cast<size_t>(n));
    done += n;
    if (progress) progress(done);
  }
  return {finish(sha256.get()), finish(sha1.get()), static_cast<std::int64_t>(size)};
}

}  // namespace sam3::hub
