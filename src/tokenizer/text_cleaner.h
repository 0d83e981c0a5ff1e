// SAM3's prompt cleaning (clean="lower"): ftfy-like fixes, html.unescape twice, strip,
// whitespace collapse, strip, str.lower().
#pragma once

#include <string>

namespace sam3::tokenizer {

// The subset of ftfy.fix_text that changes prompts: curly quotes to ASCII, Latin ligatures
// expanded, full-width forms narrowed, control characters removed, NFC. Mojibake repair is
// left out (prompts are typed, not mis-decoded files).
std::u32string fix_text(const std::u32string& text);
// Python's html.unescape, exactly (HTML5 named references, numeric references and their
// WHATWG fix-ups), with tables generated from Python's own html module.
std::u32string html_unescape(const std::u32string& text);
// The whole SAM3 cleaning pipeline.
std::u32string clean_prompt(const std::u32string& text);

}  // namespace sam3::tokenizer
