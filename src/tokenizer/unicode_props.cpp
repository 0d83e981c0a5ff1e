#include "tokenizer/unicode_props.h"

#include <utf8proc.h>

#include <cstdlib>

#include "tokenizer/utf8.h"

namespace sam3::unicode {
namespace {

utf8proc_category_t category(char32_t cp) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

}  // namespace

bool is_letter(char32_t cp) {
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO: return true;
    default: return false;
  }
}

bool is_number(char32_t cp) {
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO: return true;
    default: return false;
  }
}

bool is_white_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

bool is_python_space(char32_t cp) { return is_white_space(cp) || (cp >= 0x1C && cp <= 0x1F); }

bool is_cased(char32_t cp) {
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT ||
         utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)) != static_cast<utf8proc_int32_t>(cp) ||
         utf8proc_toupper(static_cast<utf8proc_int32_t>(cp)) != static_cast<utf8proc_int32_t>(cp);
}

bool is_case_ignorable(char32_t cp) {
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_ME: case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_SK: return true;
    default: break;
  }
  // Word_Break MidLetter / MidNumLet / Single_Quote characters.
  return cp == U'\'' || cp == U'.' || cp == U':' || cp == 0xB7 || cp == 0x2018 || cp == 0x2019 ||
         cp == 0x2024 || cp == 0x2027 || cp == 0xFE13 || cp == 0xFE52 || cp == 0xFE55 ||
         cp == 0xFF07 || cp == 0xFF0E || cp == 0xFF1A;
}

std::u32string lower(const std::u32string& text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char32_t cp = text[i];
    if (cp == 0x130) {  // LATIN CAPITAL I WITH DOT ABOVE: the one multi-character lowercase
      out += U"i\u0307";
      continue;
    }
    if (cp == 0x3A3) {  // GREEK CAPITAL SIGMA: final form at the end of a word
      size_t j = i;
      bool cased_before = false;
      while (j > 0) {
        --j;
        if (is_case_ignorable(text[j])) continue;
        cased_before = is_cased(text[j]);
        break;
      }
      bool cased_after = false;
      for (size_t k = i + 1; k < text.size(); ++k) {
        if (is_case_ignorable(text[k])) continue;
        cased_after = is_cased(text[k]);
        break;
      }
      out.push_back(cased_before && !cased_after ? 0x3C2 : 0x3C3);
      continue;
    }
    out.push_back(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
  }
  return out;
}

std::u32string normalize(const std::u32string& text, bool compat) {
  const std::string in = utf8::encode(text);
  const int options = UTF8PROC_STABLE | UTF8PROC_COMPOSE | (compat ? UTF8PROC_COMPAT : 0);
  utf8proc_uint8_t* raw = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(in.data()),
                              static_cast<utf8proc_ssize_t>(in.size()), &raw,
                              static_cast<utf8proc_option_t>(options));
  if (n < 0) return text;  // input is valid by construction; keep it unchanged on failure
  std::u32string out = utf8::decode(std::string_view(reinterpret_cast<char*>(raw), n));
  std::free(raw);
  return out;
}

}  // namespace sam3::unicode
