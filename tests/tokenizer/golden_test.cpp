// Every golden vector must come out exactly, whichever vocabulary format is loaded.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sam3/error.h"
#include "sam3/tokenizer.h"
#include "tokenizer/utf8.h"
#include "support/files.h"
#include "tokenizer/vocabulary.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kTestClip = SAM3_TEST_CLIP_DIR;
const fs::path kBundledVocab = fs::path(SAM3_DATA_DIR) / "clip" / "bpe_simple_vocab_16e6.txt.gz";

// Writes the samexporter clip_tokenizer.json format from the Hugging Face file.
fs::path write_samexporter_vocab() {
  const fs::path out = sam3::test::fresh_test_dir("sam3_samexporter_vocab") / "clip_tokenizer.json";
  std::ifstream in(kTestClip / "tokenizer.json");
  const json hf = json::parse(in);
  json j;
  j["encoder"] = hf["model"]["vocab"];
  j["merges"] = hf["model"]["merges"];
  json be = json::object();
  for (auto [byte, cp] : sam3::tokenizer::bytes_to_unicode()) be[std::to_string(byte)] = sam3::tokenizer::utf8::encode({&cp, 1});
  j["byte_encoder"] = be;
  std::ofstream(out) << j.dump();
  return out;
}

std::vector<json> golden_cases() {
  std::vector<json> cases;
  std::ifstream in(kTestClip / "golden_public.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) cases.push_back(json::parse(line));
  }
  return cases;
}

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, EveryVectorMatchesExactly) {
  ASSERT_TRUE(fs::exists(kTestClip / "golden_public.jsonl")) << "missing " << kTestClip;
  fs::path vocab = GetParam() == "bpe_txt_gz" ? kBundledVocab
                   : GetParam() == "hf_json"  ? kTestClip / "tokenizer.json"
                                              : write_samexporter_vocab();
  const auto tok = sam3::ClipTokenizer::from_file(vocab);
  const auto cases = golden_cases();
  ASSERT_EQ(cases.size(), 40u);
  for (const auto& c : cases) {
    const auto text = c["text"].get<std::string>();
    const auto got = tok.encode(text);
    EXPECT_EQ(std::vector<int64_t>(got.ids.begin(), got.ids.end()), c["ids"].get<std::vector<int64_t>>())
        << "ids differ for " << json(text).dump();
    EXPECT_EQ(std::vector<int64_t>(got.mask.begin(), got.mask.end()), c["mask"].get<std::vector<int64_t>>())
        << "mask differs for " << json(text).dump();
  }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, GoldenTest, ::testing::Values("bpe_txt_gz", "hf_json", "samexporter_json"));

class TokenizerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { tok_ = new sam3::ClipTokenizer(sam3::ClipTokenizer::from_file(kBundledVocab)); }
  static void TearDownTestSuite() { delete tok_; }
  static sam3::ClipTokenizer* tok_;
  static std::vector<int64_t> content(const sam3::TokenizedText& t) { return {t.ids.begin() + 1, t.ids.begin() + t.length - 1}; }
};
sam3::ClipTokenizer* TokenizerTest::tok_ = nullptr;

TEST_F(TokenizerTest, PublishedIds) {
  EXPECT_EQ(content(tok_->encode("a photo of a cat")), (std::vector<int64_t>{320, 1125, 539, 320, 2368}));
  EXPECT_EQ(content(tok_->encode("Hello, world!")), (std::vector<int64_t>{3306, 267, 1002, 256}));
  EXPECT_EQ(content(tok_->encode("road")), (std::vector<int64_t>{1759}));
}

TEST_F(TokenizerTest, DigitsAreOneTokenEach) {
  EXPECT_EQ(tok_->pieces("2024"), (std::vector<std::string>{"2</w>", "0</w>", "2</w>", "4</w>"}));
}

TEST_F(TokenizerTest, BoundariesAt30And31And32Tokens) {
  auto words = [](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += (i ? " " : "") + std::string("car");
    return s;
  };
  auto t30 = tok_->encode(words(30));
  EXPECT_EQ(t30.length, 32);
  EXPECT_EQ(t30.ids[31], sam3::kEndOfText);
  EXPECT_EQ(t30.ids[30], t30.ids[1]);
  auto t29 = tok_->encode(words(29));
  EXPECT_EQ(t29.length, 31);
  EXPECT_EQ(t29.ids[30], sam3::kEndOfText);
  EXPECT_EQ(t29.ids[31], 0);
  EXPECT_EQ(t29.mask[31], 0);
  for (int n : {31, 32, 100}) {
    auto t = tok_->encode(words(n));
    EXPECT_EQ(t.length, 32) << n;
    EXPECT_EQ(t.ids[31], sam3::kEndOfText) << "end token must stay last when " << n << " words";
    EXPECT_EQ(t.ids[0], sam3::kStartOfText);
  }
}

TEST_F(TokenizerTest, IdZeroIsMaskedLikeSam3) {
  auto t = tok_->encode("!/");
  EXPECT_EQ(t.ids[1], 0);
  EXPECT_EQ(t.ids[2], 270);
  EXPECT_EQ(t.mask[1], 0) << "SAM3 computes the mask as ids != 0";
  EXPECT_EQ(t.mask[2], 1);
}

TEST_F(TokenizerTest, CacheGivesSameAnswer) {
  auto a = tok_->encode("yellow school bus");
  auto b = tok_->encode("yellow school bus");
  EXPECT_EQ(a.ids, b.ids);
}

TEST_F(TokenizerTest, LiteralSpecialTokensMapToTheirIds) {
  auto t = tok_->encode("<start_of_text>");
  EXPECT_EQ(t.ids[1], sam3::kStartOfText);
}

TEST_F(TokenizerTest, InvalidUtf8IsAClearError) {
  for (std::string bad : {std::string("\xff"), std::string("ab\xc3"), std::string("\xed\xa0\x80"), std::string("\xc0\xaf")}) {
    try {
      tok_->encode(bad);
      FAIL() << "accepted invalid UTF-8";
    } catch (const sam3::Error& e) {
      EXPECT_EQ(e.code(), sam3::ErrorCode::kInvalidText);
      EXPECT_NE(std::string(e.what()).find("UTF-8"), std::string::npos);
    }
  }
}

TEST_F(TokenizerTest, OtherScriptsAndEmojiNeverLoseTokens) {
  for (const char* text : {"ελληνικά", "עברית", "हिन्दी", "ไทย", "🚗🚕", "👍🏽", "١٢٣"}) {
    auto t = tok_->encode(text);
    EXPECT_GT(t.length, 2) << text;
    for (int i = 1; i < t.length - 1; ++i) EXPECT_LT(t.ids[static_cast<size_t>(i)], 49406) << text;
  }
}

TEST(VocabularyTest, MissingAndMalformedFilesAreClearErrors) {
  const fs::path bad = sam3::test::fresh_test_dir("sam3_bad_vocab") / "vocab.json";
  std::ofstream(bad) << "{\"something\": 1}";
  for (const fs::path& p : {fs::path("/nonexistent/vocab.txt.gz"), bad}) {
    try {
      sam3::ClipTokenizer::from_file(p);
      FAIL() << "loaded " << p;
    } catch (const sam3::Error& e) {
      EXPECT_EQ(e.code(), sam3::ErrorCode::kTokenizer);
      EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
    }
  }
}

}  // namespace
