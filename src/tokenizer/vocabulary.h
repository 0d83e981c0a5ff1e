// The CLIP BPE tables, loaded from any of the three published formats.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>

namespace sam3::tokenizer {

struct Vocabulary {
  std::unordered_map<std::string, std::int64_t> encoder;  // token -> id
  std::unordered_map<std::string, int> merge_ranks;       // "left right" -> rank
  std::array<std::string, 256> byte_encoder;              // byte -> UTF-8 of its stand-in
};

// Recognises the format by content (`name`, the file's name, only names it in errors and marks a
// .json); throws sam3::Error(kTokenizer) saying what is wrong. Pure: no file or zlib access.
Vocabulary parse_vocabulary(std::string_view name, const std::string& data);
// Reads the file (gzip or plain: vocabulary_file.cpp, on zlib), then parse_vocabulary.
Vocabulary load_vocabulary(const std::filesystem::path& path);

// GPT-2/CLIP bytes_to_unicode(), in the order CLIP builds its vocabulary from.
std::array<std::pair<int, char32_t>, 256> bytes_to_unicode();

}  // namespace sam3::tokenizer
