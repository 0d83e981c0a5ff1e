// CLIP byte-level BPE tokenizer, exact to SAM3's (sam3/model/tokenizer_ve.py, clean="lower").
// No ONNX Runtime dependency. Thread-safe: encode() may be called from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sam3 {

inline constexpr int kContextLength = 32;
inline constexpr std::int64_t kStartOfText = 49406;
inline constexpr std::int64_t kEndOfText = 49407;

struct TokenizedText {
  std::array<std::int64_t, kContextLength> ids{};   // [SOT, bpe..., EOT, 0...]
  std::array<std::int64_t, kContextLength> mask{};  // 1 where id != 0 (SAM3's own rule)
  int length = 0;                                   // SOT..EOT inclusive
  int tokens = 0;  // what the whole text needs, SOT and EOT included: over kContextLength, it was cut to fit
};

// CLIP's vocabulary as sam3 ships it (bpe_simple_vocab_16e6.txt.gz): under $SAM3_DATA_DIR/clip
// when that is set, else the build tree's data/, else the installed share/sam3/. Models that
// bring no tokenizer file of their own use it.
std::filesystem::path bundled_vocabulary();

class ClipTokenizer {
 public:
  // Loads the vocabulary from any of the three formats, recognised by content:
  // bpe_simple_vocab_16e6.txt[.gz], a Hugging Face tokenizer.json, or the samexporter
  // clip_tokenizer.json ({"encoder", "merges", "byte_encoder"}). Throws sam3::Error.
  // use_cache keeps the BPE of each word seen (bounded); off only for measuring.
  static ClipTokenizer from_file(const std::filesystem::path& path, bool use_cache = true);
  // The same from the file's content, already decompressed (what the WebAssembly build uses:
  // the browser decompresses a .gz); `name` is the file's name, for errors and to mark JSON.
  static ClipTokenizer from_data(const std::string& data, std::string_view name, bool use_cache = true);

  // Cleans (ftfy-like fixes, html-unescape twice, whitespace collapse, lowercase), splits,
  // applies BPE and packs into 32 slots. Throws sam3::Error(kInvalidText) on invalid UTF-8.
  // A text too long for the 32 slots is cut, as SAM3 does; the first time this tokenizer cuts a
  // text, a warning (sam3/log.h) names it, its token count and the limit.
  TokenizedText encode(std::string_view text) const;

  // The cleaned text and the BPE pieces, for debugging and tests.
  std::string clean(std::string_view text) const;
  std::vector<std::string> pieces(std::string_view text) const;

  ClipTokenizer(ClipTokenizer&&) noexcept;
  ClipTokenizer& operator=(ClipTokenizer&&) noexcept;
  ~ClipTokenizer();

  struct Impl;

 private:
  explicit ClipTokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sam3
