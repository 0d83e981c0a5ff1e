#include "tokenizer/pretokenizer.h"

#include <gtest/gtest.h>

#include "tokenizer/utf8.h"

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  for (const auto& w : sam3::tokenizer::split_words(sam3::tokenizer::utf8::decode(s))) out.push_back(sam3::tokenizer::utf8::encode(w));
  return out;
}

TEST(SplitWords, ClipPattern) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split("don't stop"), (V{"don", "'t", "stop"}));
  EXPECT_EQ(split("rock'n'roll"), (V{"rock", "'", "n", "'", "roll"}));
  EXPECT_EQ(split("it's 42!!"), (V{"it", "'s", "4", "2", "!!"}));
  EXPECT_EQ(split("caf\xc3\xa9 \xd0\xbc\xd0\xb8\xd1\x80"), (V{"caf\xc3\xa9", "\xd0\xbc\xd0\xb8\xd1\x80"}));
  EXPECT_EQ(split("a\xcd\x85"
                  "b"),
            (V{"a", "b"}));  // U+0345 matches no alternative
  EXPECT_EQ(split("x<end_of_text>y"), (V{"x", "<end_of_text>", "y"}));
}

}  // namespace
