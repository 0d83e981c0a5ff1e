// CLIP's split pattern, case-insensitive:
//   <start_of_text>|<end_of_text>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+
#pragma once

#include <string>
#include <vector>

namespace sam3::tokenizer {

std::vector<std::u32string> split_words(const std::u32string& text);

}  // namespace sam3::tokenizer
