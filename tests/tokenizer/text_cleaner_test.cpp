#include "tokenizer/text_cleaner.h"

#include <gtest/gtest.h>

#include "tokenizer/utf8.h"

namespace {

std::string clean(const std::string& s) {
  return sam3::tokenizer::utf8::encode(sam3::tokenizer::clean_prompt(sam3::tokenizer::utf8::decode(s)));
}
std::string unescape(const std::string& s) {
  return sam3::tokenizer::utf8::encode(sam3::tokenizer::html_unescape(sam3::tokenizer::utf8::decode(s)));
}

TEST(HtmlUnescape, MatchesPythonHtmlUnescape) {
  // Expected values are what Python 3.11's html.unescape returns.
  EXPECT_EQ(unescape("&amp; &lt; &gt; &quot; &#39; &#x41;"), "& < > \" ' A");
  EXPECT_EQ(unescape("&ampx &amp"), "&x &");  // longest prefix without ';'
  EXPECT_EQ(unescape("&notit; &notin;"), "\xc2\xacit; \xe2\x88\x89");
  EXPECT_EQ(unescape("&#128;"), "\xe2\x82\xac");  // cp1252 fix-up: euro sign
  EXPECT_EQ(unescape("&#0;"), "\xef\xbf\xbd");
  EXPECT_EQ(unescape("&#xD800;"), "\xef\xbf\xbd");
  EXPECT_EQ(unescape("&#99999999999999;"), "\xef\xbf\xbd");
  EXPECT_EQ(unescape("&#1;"), "");  // invalid code point dropped
  EXPECT_EQ(unescape("&unknown; & &#; &#x;"), "&unknown; & &#; &#x;");
}

TEST(CleanPrompt, TwiceUnescapedStrippedCollapsedLowered) {
  EXPECT_EQ(clean("  Red\t\tCAR \n"), "red car");
  EXPECT_EQ(clean("&amp;lt;"), "<");                                         // unescaped twice
  EXPECT_EQ(clean("\xc4\xb0"), "i\xcc\x87");                                 // İ lowers to two code points
  EXPECT_EQ(clean("\xce\xa3\xce\x91\xce\xa3"), "\xcf\x83\xce\xb1\xcf\x82");  // ΣΑΣ -> σας
  EXPECT_EQ(clean("a\xe3\x80\x80"
                  "b"),
            "a b");  // ideographic space
}

TEST(FixText, FtfyFixesThatMatterForPrompts) {
  EXPECT_EQ(clean("\xe2\x80\x9c"
                  "don\xe2\x80\x99"
                  "t\xe2\x80\x9d"),
            "\"don't\"");  // curly quotes
  EXPECT_EQ(clean("\xef\xac\x81"
                  "sh"),
            "fish");                                                // ligature fi
  EXPECT_EQ(clean("\xef\xbc\xa3\xef\xbd\x81\xef\xbd\x92"), "car");  // full-width
  EXPECT_EQ(clean("e\xcc\x81"), "\xc3\xa9");                        // NFC
  EXPECT_EQ(clean("a\x0b"
                  "b"),
            "ab");  // \v removed
}

}  // namespace
