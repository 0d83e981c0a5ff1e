// libFuzzer target: arbitrary bytes into the tokenizer. Invalid UTF-8 must be a sam3::Error,
// anything else a well-formed 32-slot result; never a crash, hang or sanitizer report.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sam3/error.h"
#include "sam3/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  static const auto tokenizer = sam3::ClipTokenizer::from_file(std::string(SAM3_DATA_DIR) + "/clip/bpe_simple_vocab_16e6.txt.gz");
  try {
    const auto t = tokenizer.encode(std::string_view(reinterpret_cast<const char*>(data), size));
    if (t.ids[0] != sam3::kStartOfText || t.length < 2 || t.length > sam3::kContextLength ||
        t.ids[static_cast<size_t>(t.length - 1)] != sam3::kEndOfText) {
      std::abort();
    }
    for (int i = t.length; i < sam3::kContextLength; ++i) {
      if (t.ids[static_cast<size_t>(i)] != 0 || t.mask[static_cast<size_t>(i)] != 0) std::abort();
    }
  } catch (const sam3::Error& e) {
    if (e.code() != sam3::ErrorCode::kInvalidText) std::abort();
  }
  return 0;
}
