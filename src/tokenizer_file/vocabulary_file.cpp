// The vocabulary from a file, gzip-compressed or plain: the tokenizer's one use of zlib, kept
// out of the pure core (the WebAssembly build hands the decompressed text to from_data).
#include <zlib.h>

#include "sam3/error.h"
#include "sam3/tokenizer.h"
#include "tokenizer/vocabulary.h"

namespace sam3::tokenizer {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw Error(ErrorCode::kTokenizer, "tokenizer vocabulary " + path.string() + ": " + what +
                                         "; use bpe_simple_vocab_16e6.txt.gz, a Hugging Face tokenizer.json or "
                                         "clip_tokenizer.json");
}

std::string read_file(const std::filesystem::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files too
  if (!f) fail(path, "cannot be opened");
  std::string data;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) data.append(buf, static_cast<size_t>(n));
  const bool error = n < 0;
  gzclose(f);
  if (error) fail(path, "is not a readable gzip file");
  return data;
}

}  // namespace

Vocabulary load_vocabulary(const std::filesystem::path& path) {
  if (!std::filesystem::is_regular_file(path)) fail(path, "does not exist");
  return parse_vocabulary(path.string(), read_file(path));
}

}  // namespace sam3::tokenizer

namespace sam3 {

ClipTokenizer ClipTokenizer::from_file(const std::filesystem::path& path, bool use_cache) {
  if (!std::filesystem::is_regular_file(path)) tokenizer::fail(path, "does not exist");
  return from_data(tokenizer::read_file(path), path.string(), use_cache);
}

}  // namespace sam3
