#include "tokenizer/vocabulary.h"

#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "sam3/error.h"
#include "tokenizer/utf8.h"

namespace sam3::tokenizer {
namespace {

constexpr size_t kVocabSize = 49408;
constexpr size_t kMergeCount = 49152 - 256 - 2;  // merges CLIP uses from the .txt file

[[noreturn]] void fail(std::string_view path, const std::string& what) {
  throw Error(ErrorCode::kTokenizer, "tokenizer vocabulary " + std::string(path) + ": " + what +
                                         "; use bpe_simple_vocab_16e6.txt.gz, a Hugging Face tokenizer.json or "
                                         "clip_tokenizer.json");
}

std::array<std::string, 256> standard_byte_encoder() {
  std::array<std::string, 256> out;
  for (auto [byte, cp] : bytes_to_unicode()) out[static_cast<size_t>(byte)] = utf8::encode({&cp, 1});
  return out;
}

Vocabulary from_bpe_text(std::string_view path, const std::string& data) {
  Vocabulary v;
  v.byte_encoder = standard_byte_encoder();
  std::vector<std::string> vocab;
  vocab.reserve(kVocabSize);
  for (auto [byte, cp] : bytes_to_unicode()) vocab.push_back(utf8::encode({&cp, 1}));
  for (size_t i = 0; i < 256; ++i) vocab.push_back(vocab[i] + "</w>");
  std::istringstream lines(data);
  std::string line;
  std::getline(lines, line);  // '"bpe_simple_vocab_16e6.txt#version: 0.2' in OpenAI's file
  if (line.find("#version") == std::string::npos) {
    fail(path,
         "is neither a tokenizer JSON file nor CLIP's BPE merges file (which starts with '#version: 0.2'); "
         "the file is damaged or of another kind");
  }
  while (v.merge_ranks.size() < kMergeCount && std::getline(lines, line)) {
    const auto space = line.find(' ');
    if (space == std::string::npos) fail(path, "merge line without a space: '" + line + "'");
    v.merge_ranks.emplace(line, static_cast<int>(v.merge_ranks.size()));
    vocab.push_back(line.substr(0, space) + line.substr(space + 1));
  }
  if (v.merge_ranks.size() != kMergeCount) fail(path, "has fewer than 48894 merges");
  vocab.emplace_back("<start_of_text>");
  vocab.emplace_back("<end_of_text>");
  for (size_t i = 0; i < vocab.size(); ++i) v.encoder.emplace(vocab[i], static_cast<int64_t>(i));
  return v;
}

void load_merges(std::string_view path, const nlohmann::json& merges, Vocabulary& v) {
  if (!merges.is_array()) fail(path, "'merges' is not a list");
  for (const auto& m : merges) {
    std::string key;
    if (m.is_string())
      key = m.get<std::string>();
    else if (m.is_array() && m.size() == 2)
      key = m[0].get<std::string>() + " " + m[1].get<std::string>();
    else
      fail(path, "a merge is neither \"a b\" nor [a, b]");
    v.merge_ranks.emplace(std::move(key), static_cast<int>(v.merge_ranks.size()));
  }
}

void load_encoder(std::string_view path, const nlohmann::json& map, Vocabulary& v) {
  if (!map.is_object()) fail(path, "the vocabulary is not a token -> id object");
  for (const auto& [token, id] : map.items()) v.encoder.emplace(token, id.get<int64_t>());
}

Vocabulary from_json(std::string_view path, const std::string& data) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(data);
  } catch (const nlohmann::json::exception& e) {
    fail(path, std::string("is not valid JSON (") + e.what() + ")");
  }
  Vocabulary v;
  try {
    if (j.contains("model")) {  // Hugging Face tokenizers
      load_encoder(path, j["model"]["vocab"], v);
      load_merges(path, j["model"]["merges"], v);
      v.byte_encoder = standard_byte_encoder();
    } else if (j.contains("encoder") && j.contains("merges")) {  // samexporter
      load_encoder(path, j["encoder"], v);
      load_merges(path, j["merges"], v);
      v.byte_encoder = standard_byte_encoder();
      if (j.contains("byte_encoder")) {
        for (const auto& [byte, text] : j["byte_encoder"].items()) {
          const int b = std::stoi(byte);
          if (b < 0 || b > 255) fail(path, "byte_encoder has a key outside 0..255");
          v.byte_encoder[static_cast<size_t>(b)] = text.get<std::string>();
        }
      }
    } else {
      fail(path, "has neither 'model' (Hugging Face) nor 'encoder'/'merges' keys");
    }
  } catch (const nlohmann::json::exception& e) {
    fail(path, std::string("has unexpected JSON content (") + e.what() + ")");
  } catch (const std::invalid_argument&) {
    fail(path, "byte_encoder has a non-numeric key");
  }
  // Both JSON formats spell the special tokens the OpenAI way; SAM3 uses other names, same ids.
  for (auto [alias, name] : {std::pair{"<|startoftext|>", "<start_of_text>"}, std::pair{"<|endoftext|>", "<end_of_text>"}}) {
    if (auto it = v.encoder.find(alias); it != v.encoder.end()) v.encoder.emplace(name, it->second);
  }
  return v;
}

}  // namespace

std::array<std::pair<int, char32_t>, 256> bytes_to_unicode() {
  std::array<std::pair<int, char32_t>, 256> out{};
  bool printable[256] = {};
  size_t n = 0;
  for (int b = 0; b < 256; ++b) {
    if ((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)) {
      printable[b] = true;
      out[n++] = {b, static_cast<char32_t>(b)};
    }
  }
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    if (!printable[b]) out[n++] = {b, next++};
  }
  return out;
}

Vocabulary parse_vocabulary(std::string_view path, const std::string& data) {
  if (data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f && static_cast<unsigned char>(data[1]) == 0x8b) {
    fail(path, "is still gzip-compressed; decompress it first (the file loader does)");
  }
  const auto first = data.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) fail(path, "is empty");
  // A damaged .json is still judged as JSON.
  const bool json = data[first] == '{' || (path.size() >= 5 && path.substr(path.size() - 5) == ".json");
  Vocabulary v = json ? from_json(path, data) : from_bpe_text(path, data);
  if (!v.encoder.contains("<start_of_text>") || !v.encoder.contains("<end_of_text>")) {
    fail(path, "lacks the start/end-of-text tokens");
  }
  return v;
}

}  // namespace sam3::tokenizer
