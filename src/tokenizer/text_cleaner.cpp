#include "tokenizer/text_cleaner.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "html_entities.inc"
#include "tokenizer/unicode_props.h"
#include "tokenizer/utf8.h"

namespace sam3::tokenizer {
namespace {

bool is_ftfy_control(char32_t cp) {
  return cp <= 0x08 || cp == 0x0B || (cp >= 0x0E && cp <= 0x1F) || cp == 0x7F || (cp >= 0x206A && cp <= 0x206F) || cp == 0xFEFF ||
         (cp >= 0xFFF9 && cp <= 0xFFFC) || (cp >= 0x1D173 && cp <= 0x1D17A) || (cp >= 0xE0000 && cp <= 0xE007F);
}

// ftfy's fix_latin_ligatures set; their expansions come from NFKC.
bool is_latin_ligature(char32_t cp) {
  return cp == 0x132 || cp == 0x133 || cp == 0x149 || (cp >= 0x1C4 && cp <= 0x1CC) || (cp >= 0x1F1 && cp <= 0x1F3) ||
         (cp >= 0xFB00 && cp <= 0xFB06);
}

// ftfy's fix_character_width set (full-width and half-width forms, ideographic space).
bool is_width_variant(char32_t cp) { return cp == 0x3000 || (cp >= 0xFF01 && cp <= 0xFFEF); }

std::u32string strip_python(const std::u32string& s) {
  size_t b = 0, e = s.size();
  while (b < e && unicode::is_python_space(s[b])) ++b;
  while (e > b && unicode::is_python_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

const std::unordered_map<std::u32string, std::u32string>& named_references() {
  static const auto* table = [] {
    auto* m = new std::unordered_map<std::u32string, std::u32string>();
    for (const auto& e : html_data::kNamed) m->emplace(utf8::decode(e.name), utf8::decode(e.text));
    return m;
  }();
  return *table;
}

std::u32string numeric_reference(char32_t num, bool overflow) {
  if (!overflow) {
    for (const auto& e : html_data::kInvalidCharrefs) {
      if (e.code == num) return utf8::decode(e.text);
    }
  }
  if (overflow || (num >= 0xD800 && num <= 0xDFFF) || num > 0x10FFFF) return U"\uFFFD";
  if (std::binary_search(std::begin(html_data::kInvalidCodepoints), std::end(html_data::kInvalidCodepoints), static_cast<uint32_t>(num))) {
    return U"";
  }
  return std::u32string(1, num);
}

bool is_ascii_digit(char32_t c) { return c >= U'0' && c <= U'9'; }
bool is_ascii_hex(char32_t c) { return is_ascii_digit(c) || (c >= U'a' && c <= U'f') || (c >= U'A' && c <= U'F'); }

// Replaces one reference starting at text[i] == '&'; returns the number of code points
// consumed (0 when the regex of html.unescape would not match here).
size_t replace_reference(const std::u32string& text, size_t i, std::u32string& out) {
  size_t j = i + 1;
  if (j < text.size() && text[j] == U'#') {
    const bool hex = j + 1 < text.size() && (text[j + 1] == U'x' || text[j + 1] == U'X');
    size_t k = j + (hex ? 2 : 1);
    const size_t digits_start = k;
    uint64_t num = 0;
    bool overflow = false;
    while (k < text.size() && (hex ? is_ascii_hex(text[k]) : is_ascii_digit(text[k]))) {
      const char32_t c = text[k];
      const uint64_t d = is_ascii_digit(c) ? c - U'0' : (c | 0x20) - U'a' + 10;
      num = num * (hex ? 16 : 10) + d;
      if (num > 0x10FFFF) overflow = true, num = 0x110000;
      ++k;
    }
    if (k == digits_start) return 0;
    if (k < text.size() && text[k] == U';') ++k;
    out += numeric_reference(static_cast<char32_t>(num), overflow);
    return k - i;
  }
  // Named: [^\t\n\f <&#;]{1,32};?
  size_t k = j;
  while (k < text.size() && k - j < 32) {
    const char32_t c = text[k];
    if (c == U'\t' || c == U'\n' || c == U'\f' || c == U' ' || c == U'<' || c == U'&' || c == U'#' || c == U';') {
      break;
    }
    ++k;
  }
  if (k == j) return 0;
  if (k < text.size() && text[k] == U';') ++k;
  const std::u32string name = text.substr(j, k - j);
  const auto& table = named_references();
  if (auto it = table.find(name); it != table.end()) {
    out += it->second;
    return k - i;
  }
  for (size_t x = name.size() - 1; x > 1; --x) {  // longest known prefix without ';'
    if (auto it = table.find(name.substr(0, x)); it != table.end()) {
      out += it->second;
      out += name.substr(x);
      return k - i;
    }
  }
  out += U'&';
  out += name;
  return k - i;
}

}  // namespace

std::u32string fix_text(const std::u32string& text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t cp : text) {
    if (is_ftfy_control(cp)) continue;
    if (cp == 0x2BC || (cp >= 0x2018 && cp <= 0x201B)) {
      out.push_back(U'\'');
    } else if (cp >= 0x201C && cp <= 0x201F) {
      out.push_back(U'"');
    } else if (is_latin_ligature(cp) || is_width_variant(cp)) {
      out += unicode::normalize(std::u32string(1, cp), /*compat=*/true);
    } else {
      out.push_back(cp);
    }
  }
  return unicode::normalize(out, /*compat=*/false);
}

std::u32string html_unescape(const std::u32string& text) {
  if (text.find(U'&') == std::u32string::npos) return text;
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text[i] == U'&') {
      if (const size_t used = replace_reference(text, i, out)) {
        i += used;
        continue;
      }
    }
    out.push_back(text[i++]);
  }
  return out;
}

std::u32string clean_prompt(const std::u32string& text) {
  const std::u32string basic = strip_python(html_unescape(html_unescape(fix_text(text))));
  std::u32string collapsed;
  collapsed.reserve(basic.size());
  for (char32_t cp : basic) {
    if (unicode::is_python_space(cp)) {
      if (collapsed.empty() || collapsed.back() != U' ') collapsed.push_back(U' ');
    } else {
      collapsed.push_back(cp);
    }
  }
  return unicode::lower(strip_python(collapsed));
}

}  // namespace sam3::tokenizer
