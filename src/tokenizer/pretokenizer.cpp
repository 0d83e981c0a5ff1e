#include "tokenizer/pretokenizer.h"

#include <array>
#include <string_view>

#include "tokenizer/unicode_props.h"

namespace sam3::tokenizer {
namespace {

char32_t ascii_lower(char32_t c) { return (c >= U'A' && c <= U'Z') ? c + 32 : c; }

bool matches_at(const std::u32string& text, size_t i, std::u32string_view pattern) {
  if (i + pattern.size() > text.size()) return false;
  for (size_t k = 0; k < pattern.size(); ++k) {
    if (ascii_lower(text[i + k]) != pattern[k]) return false;
  }
  return true;
}

// Matches no alternative of the case-insensitive pattern (its case variant is a letter, which
// excludes it from the negated class, while it is no letter itself), so the regex skips it.
bool is_unmatched(char32_t cp) { return cp == 0x345; }

bool is_other(char32_t cp) {
  return !unicode::is_white_space(cp) && !unicode::is_letter(cp) && !unicode::is_number(cp) && !is_unmatched(cp);
}

}  // namespace

std::vector<std::u32string> split_words(const std::u32string& text) {
  static constexpr std::array<std::u32string_view, 9> kFixed = {
      U"<start_of_text>", U"<end_of_text>", U"'s", U"'t", U"'re", U"'ve", U"'m", U"'ll", U"'d"};
  std::vector<std::u32string> words;
  size_t i = 0;
  while (i < text.size()) {
    bool matched = false;
    for (auto pattern : kFixed) {
      if (matches_at(text, i, pattern)) {
        words.emplace_back(text.substr(i, pattern.size()));
        i += pattern.size();
        matched = true;
        break;
      }
    }
    if (matched) continue;
    const char32_t cp = text[i];
    size_t end = i + 1;
    if (unicode::is_letter(cp)) {
      while (end < text.size() && unicode::is_letter(text[end])) ++end;
    } else if (unicode::is_number(cp)) {
      // one code point per number token
    } else if (is_other(cp)) {
      while (end < text.size() && is_other(text[end])) ++end;
    } else {
      ++i;  // white space (or an unmatched code point) separates tokens
      continue;
    }
    words.emplace_back(text.substr(i, end - i));
    i = end;
  }
  return words;
}

}  // namespace sam3::tokenizer
