#include <algorithm>
#include <climits>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <unordered_set>

#include "sam3/error.h"
#include "sam3/log.h"
#include "sam3/tokenizer.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/text_cleaner.h"
#include "tokenizer/utf8.h"
#include "tokenizer/vocabulary.h"

namespace sam3 {

struct ClipTokenizer::Impl {
  tokenizer::Vocabulary vocab;
  bool use_cache = true;
  mutable std::shared_mutex cache_mutex;
  mutable std::unordered_map<std::string, std::vector<std::string>> cache;  // word -> pieces
  static constexpr size_t kCacheLimit = 1 << 16;
  mutable std::mutex cut_mutex;
  mutable std::unordered_set<std::string> cut_texts;  // texts already warned about, told once (bounded)

  std::vector<std::string> bpe_uncached(const std::string& word) const;
  std::vector<std::string> bpe(const std::string& word) const;
  std::vector<std::string> word_pieces(std::string_view text) const;
  void warn_cut(std::string_view text, int tokens) const;  // once per text
};

std::vector<std::string> ClipTokenizer::Impl::bpe_uncached(const std::string& word) const {
  // Symbols: one per byte (as its stand-in character), "</w>" glued to the last one.
  std::vector<std::string> symbols;
  for (unsigned char b : word) symbols.push_back(vocab.byte_encoder[b]);
  if (symbols.empty()) return symbols;
  symbols.back() += "</w>";
  std::string key;
  while (symbols.size() > 1) {
    int best_rank = INT_MAX;
    size_t best = 0;
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
      key.assign(symbols[i]).append(" ").append(symbols[i + 1]);
      if (auto it = vocab.merge_ranks.find(key); it != vocab.merge_ranks.end() && it->second < best_rank) {
        best_rank = it->second;
        best = i;
      }
    }
    if (best_rank == INT_MAX) break;
    // Merge every occurrence of the best pair, left to right.
    const std::string first = symbols[best], second = symbols[best + 1];
    std::vector<std::string> merged;
    merged.reserve(symbols.size());
    for (size_t i = 0; i < symbols.size(); ++i) {
      if (i + 1 < symbols.size() && symbols[i] == first && symbols[i + 1] == second) {
        merged.push_back(first + second);
        ++i;
      } else {
        merged.push_back(std::move(symbols[i]));
      }
    }
    symbols = std::move(merged);
  }
  return symbols;
}

std::vector<std::string> ClipTokenizer::Impl::bpe(const std::string& word) const {
  if (!use_cache) return bpe_uncached(word);
  {
    std::shared_lock lock(cache_mutex);
    if (auto it = cache.find(word); it != cache.end()) return it->second;
  }
  auto pieces = bpe_uncached(word);
  std::unique_lock lock(cache_mutex);
  if (cache.size() >= kCacheLimit) cache.clear();
  cache.emplace(word, pieces);
  return pieces;
}

std::vector<std::string> ClipTokenizer::Impl::word_pieces(std::string_view text) const {
  std::vector<std::string> out;
  for (const auto& word : tokenizer::split_words(tokenizer::clean_prompt(tokenizer::utf8::decode(text)))) {
    const std::string bytes = tokenizer::utf8::encode(word);
    if (bytes == "<start_of_text>" || bytes == "<end_of_text>") {
      out.push_back(bytes);  // SAM3 maps these literals to the special ids
      continue;
    }
    for (auto& piece : bpe(bytes)) out.push_back(std::move(piece));
  }
  return out;
}

void ClipTokenizer::Impl::warn_cut(std::string_view text, int tokens) const {
  {
    std::lock_guard lock(cut_mutex);
    if (cut_texts.size() >= kCacheLimit) cut_texts.clear();
    if (!cut_texts.emplace(text).second) return;
  }
  log(LogLevel::kWarning, "prompt \"" + std::string(text) + "\" has " + std::to_string(tokens) + " tokens, more than SAM3's limit of " +
                              std::to_string(kContextLength) + ": it was cut to " + std::to_string(kContextLength) +
                              " (as SAM3 cuts it); shorten it to use all its words");
}

ClipTokenizer::ClipTokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClipTokenizer::ClipTokenizer(ClipTokenizer&&) noexcept = default;
ClipTokenizer& ClipTokenizer::operator=(ClipTokenizer&&) noexcept = default;
ClipTokenizer::~ClipTokenizer() = default;

ClipTokenizer ClipTokenizer::from_data(const std::string& data, std::string_view name, bool use_cache) {
  auto impl = std::make_unique<Impl>();
  impl->vocab = tokenizer::parse_vocabulary(name, data);
  impl->use_cache = use_cache;
  return ClipTokenizer(std::move(impl));
}

std::string ClipTokenizer::clean(std::string_view text) const {
  return tokenizer::utf8::encode(tokenizer::clean_prompt(tokenizer::utf8::decode(text)));
}

std::vector<std::string> ClipTokenizer::pieces(std::string_view text) const { return impl_->word_pieces(text); }

TokenizedText ClipTokenizer::encode(std::string_view text) const {
  TokenizedText out;
  const auto pieces = impl_->word_pieces(text);
  out.tokens = static_cast<int>(std::min<size_t>(pieces.size(), INT_MAX - 2)) + 2;
  int n = 0;
  out.ids[static_cast<size_t>(n++)] = kStartOfText;
  for (const auto& piece : pieces) {
    if (n == kContextLength - 1) break;  // SAM3's rule: cut, keeping the end token last
    auto it = impl_->vocab.encoder.find(piece);
    if (it == impl_->vocab.encoder.end()) {
      throw Error(ErrorCode::kTokenizer, "token '" + piece +
                                             "' is not in the vocabulary; the "
                                             "vocabulary file does not match CLIP's");
    }
    out.ids[static_cast<size_t>(n++)] = it->second;
  }
  out.ids[static_cast<size_t>(n++)] = kEndOfText;
  out.length = n;
  for (size_t i = 0; i < out.ids.size(); ++i) out.mask[i] = out.ids[i] != 0 ? 1 : 0;
  if (out.tokens > kContextLength) impl_->warn_cut(text, out.tokens);
  return out;
}

}  // namespace sam3
