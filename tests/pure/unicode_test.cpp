// The generated Unicode tables (tools/gen_unicode_tables.py) behave as Python's str.lower()
// and unicodedata.normalize(): a few cases per rule; the golden token vectors cover the rest.
#include "tokenizer/unicode_props.h"

#include <gtest/gtest.h>

namespace u = sam3::tokenizer::unicode;

TEST(UnicodeTables, NormalizationComposesReordersAndDecomposesCompatibility) {
  EXPECT_EQ(u::normalize(U"e\u0301", false), U"\u00e9") << "canonical composition";
  EXPECT_EQ(u::normalize(U"\ufb01", false), U"\ufb01") << "NFC keeps the ligature";
  EXPECT_EQ(u::normalize(U"\ufb01", true), U"fi") << "NFKC expands it";
  EXPECT_EQ(u::normalize(U"a\u0323\u0302", false), U"\u1ead") << "composed step by step";
  EXPECT_EQ(u::normalize(U"a\u0302\u0323", false), U"\u1ead") << "reordered by combining class, then composed";
  EXPECT_EQ(u::normalize(U"\u1100\u1161\u11a8", false), U"\uac01") << "Hangul jamo compose by rule";
  EXPECT_EQ(u::normalize(U"\uac01", true), U"\uac01");
  EXPECT_EQ(u::normalize(U"\u0958", false), U"\u0915\u093c") << "a composition exclusion stays decomposed";
  EXPECT_EQ(u::normalize(U"\uff21\u2460", true), U"A1") << "full width and circled forms";
}

TEST(UnicodeTables, LowerAndClasses) {
  EXPECT_EQ(u::lower(U"\u0130"), U"i\u0307");
  EXPECT_EQ(u::lower(U"\u039f\u0394\u039f\u03a3"), U"\u03bf\u03b4\u03bf\u03c2") << "final sigma";
  EXPECT_EQ(u::lower(U"\u03a3A"), U"\u03c3a");
  EXPECT_TRUE(u::is_letter(U'\u4e00'));
  EXPECT_TRUE(u::is_number(U'\u2460'));
  EXPECT_FALSE(u::is_letter(U'1'));
  EXPECT_TRUE(u::is_case_ignorable(U'\u0301'));
  EXPECT_FALSE(u::is_letter(0x110000)) << "past the last code point";
}
