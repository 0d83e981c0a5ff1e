// UTF-8 <-> code points. Decoding rejects invalid input instead of guessing.
#pragma once

#include <string>
#include <string_view>

namespace sam3::tokenizer::utf8 {

// Throws sam3::Error(kInvalidText) naming the byte offset of the first invalid sequence.
std::u32string decode(std::string_view text);
void append(std::string& out, char32_t cp);
std::string encode(std::u32string_view text);

}  // namespace sam3::tokenizer::utf8
