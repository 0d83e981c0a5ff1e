// Unicode character classes the CLIP split pattern and Python's str methods rely on
// (tables generated at build time from Python's unicodedata: tools/gen_unicode_tables.py).
#pragma once

#include <string>

namespace sam3::tokenizer::unicode {

bool is_letter(char32_t cp);        // \p{L}
bool is_number(char32_t cp);        // \p{N}
bool is_white_space(char32_t cp);   // the White_Space property (the regex module's \s)
bool is_python_space(char32_t cp);  // str.isspace(): White_Space plus U+001C..U+001F
bool is_cased(char32_t cp);
bool is_case_ignorable(char32_t cp);
// Python's str.lower() on a whole string (full mappings, final sigma).
std::u32string lower(const std::u32string& text);
// Unicode normalization of a whole string; compat = NFKC, else NFC.
std::u32string normalize(const std::u32string& text, bool compat);
// The Unicode version of the tables (that of the Python that generated them).
const char* unicode_version() noexcept;

}  // namespace sam3::tokenizer::unicode
