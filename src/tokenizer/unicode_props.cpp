#include "tokenizer/unicode_props.h"

#include <algorithm>
#include <iterator>

#include "unicode_tables.inc"

namespace sam3::tokenizer::unicode {
namespace {

namespace ud = unicode_data;

template <size_t N>
std::uint8_t run_value(const ud::Run (&runs)[N], char32_t cp) {
  const auto it = std::upper_bound(std::begin(runs), std::end(runs), static_cast<std::uint32_t>(cp),
                                   [](std::uint32_t v, const ud::Run& r) { return v < r.start; });
  return it == std::begin(runs) ? 0 : std::prev(it)->value;
}

ud::Category category(char32_t cp) { return cp > 0x10FFFF ? ud::kCn : static_cast<ud::Category>(run_value(ud::kCategoryRuns, cp)); }

int combining_class(char32_t cp) { return cp > 0x10FFFF ? 0 : run_value(ud::kCombiningRuns, cp); }

template <size_t N>
char32_t mapped(const ud::Mapping (&table)[N], char32_t cp) {
  const auto it = std::lower_bound(std::begin(table), std::end(table), static_cast<std::uint32_t>(cp),
                                   [](const ud::Mapping& m, std::uint32_t v) { return m.from < v; });
  return it != std::end(table) && it->from == cp ? static_cast<char32_t>(it->to) : cp;
}

char32_t simple_lower(char32_t cp) { return mapped(ud::kLower, cp); }
char32_t simple_upper(char32_t cp) { return mapped(ud::kUpper, cp); }

// Hangul syllables, decomposed and composed by rule (Unicode section 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr int kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

void decompose(char32_t cp, bool compat, std::u32string& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const int s = static_cast<int>(cp - kSBase);
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
    return;
  }
  const auto it = std::lower_bound(std::begin(ud::kDecompositions), std::end(ud::kDecompositions), static_cast<std::uint32_t>(cp),
                                   [](const ud::Decomposition& d, std::uint32_t v) { return d.cp < v; });
  if (it == std::end(ud::kDecompositions) || it->cp != cp) {
    out.push_back(cp);
    return;
  }
  const std::uint32_t first = compat ? it->nfkd : it->nfd, count = compat ? it->nfkd_len : it->nfd_len;
  for (std::uint32_t i = 0; i < count; ++i) out.push_back(static_cast<char32_t>(ud::kDecompositionPool[first + i]));
}

// The primary composite of a pair, or 0.
char32_t compose_pair(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount) {
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  }
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount) {
    return a + (b - kTBase);
  }
  const auto it = std::lower_bound(std::begin(ud::kCompositions), std::end(ud::kCompositions), std::pair{a, b},
                                   [](const ud::Composition& c, const std::pair<char32_t, char32_t>& v) {
                                     return c.first != v.first ? c.first < v.first : c.second < v.second;
                                   });
  if (it != std::end(ud::kCompositions) && it->first == a && it->second == b) return it->composite;
  return 0;
}

}  // namespace

const char* unicode_version() noexcept { return ud::kVersion; }

bool is_letter(char32_t cp) {
  switch (category(cp)) {
    case ud::kLu:
    case ud::kLl:
    case ud::kLt:
    case ud::kLm:
    case ud::kLo:
      return true;
    default:
      return false;
  }
}

bool is_number(char32_t cp) {
  switch (category(cp)) {
    case ud::kNd:
    case ud::kNl:
    case ud::kNo:
      return true;
    default:
      return false;
  }
}

bool is_white_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

bool is_python_space(char32_t cp) { return is_white_space(cp) || (cp >= 0x1C && cp <= 0x1F); }

bool is_cased(char32_t cp) {
  const auto c = category(cp);
  return c == ud::kLu || c == ud::kLl || c == ud::kLt || simple_lower(cp) != cp || simple_upper(cp) != cp;
}

bool is_case_ignorable(char32_t cp) {
  switch (category(cp)) {
    case ud::kMn:
    case ud::kMe:
    case ud::kCf:
    case ud::kLm:
    case ud::kSk:
      return true;
    default:
      break;
  }
  // Word_Break MidLetter / MidNumLet / Single_Quote characters.
  return cp == U'\'' || cp == U'.' || cp == U':' || cp == 0xB7 || cp == 0x2018 || cp == 0x2019 || cp == 0x2024 || cp == 0x2027 ||
         cp == 0xFE13 || cp == 0xFE52 || cp == 0xFE55 || cp == 0xFF07 || cp == 0xFF0E || cp == 0xFF1A;
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
    out.push_back(simple_lower(cp));
  }
  return out;
}

// Decomposition, canonical ordering, then canonical composition (UAX #15).
std::u32string normalize(const std::u32string& text, bool compat) {
  std::u32string d;
  d.reserve(text.size());
  for (char32_t cp : text) decompose(cp, compat, d);
  for (size_t i = 0; i < d.size();) {  // stable sort of each run of non-starters by class
    if (combining_class(d[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < d.size() && combining_class(d[j]) != 0) ++j;
    std::stable_sort(d.begin() + static_cast<std::ptrdiff_t>(i), d.begin() + static_cast<std::ptrdiff_t>(j),
                     [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
    i = j;
  }
  std::u32string out;
  out.reserve(d.size());
  std::ptrdiff_t starter = -1;
  int last_class = 0;
  for (char32_t cp : d) {
    const int cc = combining_class(cp);
    if (starter >= 0) {
      const bool adjacent = static_cast<std::ptrdiff_t>(out.size()) - 1 == starter;
      if (adjacent || (last_class != 0 && last_class < cc)) {
        if (const char32_t c = compose_pair(out[static_cast<size_t>(starter)], cp)) {
          out[static_cast<size_t>(starter)] = c;
          continue;
        }
      }
    }
    if (cc == 0) starter = static_cast<std::ptrdiff_t>(out.size());
    out.push_back(cp);
    last_class = cc;
  }
  return out;
}

}  // namespace sam3::tokenizer::unicode
