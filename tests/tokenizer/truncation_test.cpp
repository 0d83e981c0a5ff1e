// A prompt longer than SAM3's 32-token context is cut as SAM3 cuts it, and the user is told once.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sam3/log.h"
#include "sam3/tokenizer.h"

namespace {

const std::filesystem::path kBundledVocab = std::filesystem::path(SAM3_DATA_DIR) / "clip" / "bpe_simple_vocab_16e6.txt.gz";

// The warnings logged while `body` runs.
template <typename Body>
std::vector<std::string> warnings_of(Body body) {
  std::vector<std::string> warnings;
  sam3::set_log_sink([&](sam3::LogLevel level, const std::string& message) {
    if (level == sam3::LogLevel::kWarning) warnings.push_back(message);
  });
  body();
  sam3::set_log_sink(nullptr);
  return warnings;
}

std::string words(int n) {
  std::string text = "cat";
  for (int i = 1; i < n; ++i) text += " cat";
  return text;
}

TEST(PromptTruncation, ALongPromptIsCutKeepingTheEndTokenAndWarnsOnceNamingIt) {
  const auto tok = sam3::ClipTokenizer::from_file(kBundledVocab);
  const std::string text = words(40);  // 40 pieces + SOT + EOT
  sam3::TokenizedText got;
  const auto warnings = warnings_of([&] {
    got = tok.encode(text);
    tok.encode(text);  // the same prompt again (another image of a batch): told once
  });
  EXPECT_EQ(got.tokens, 42);
  EXPECT_EQ(got.length, sam3::kContextLength);
  EXPECT_EQ(got.ids.front(), sam3::kStartOfText);
  EXPECT_EQ(got.ids.back(), sam3::kEndOfText);
  ASSERT_EQ(warnings.size(), 1u) << "a cut prompt must be reported, once";
  EXPECT_NE(warnings[0].find("\"" + text + "\""), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("has 42 tokens"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("32"), std::string::npos) << warnings[0];
}

TEST(PromptTruncation, APromptThatFillsTheContextExactlyIsNotReported) {
  const auto tok = sam3::ClipTokenizer::from_file(kBundledVocab);
  sam3::TokenizedText got;
  const auto warnings = warnings_of([&] { got = tok.encode(words(30)); });
  EXPECT_EQ(got.tokens, sam3::kContextLength);
  EXPECT_EQ(got.length, sam3::kContextLength);
  EXPECT_TRUE(warnings.empty()) << warnings[0];
}

}  // namespace
