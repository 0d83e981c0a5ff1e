// The polarity words every front accepts for boxes and points.
#include <gtest/gtest.h>

#include "sam3/types.h"

namespace {

TEST(Polarity, EveryFrontSpellsItTheSameWay) {
  for (const char* w : {"pos", "positive", "POS", "Positive"}) EXPECT_EQ(sam3::parse_polarity(w), true) << w;
  for (const char* w : {"neg", "negative", "NEG", "Negative"}) EXPECT_EQ(sam3::parse_polarity(w), false) << w;
  for (const char* w : {"", "p", "posi", "yes", "1", "neg ", "ne\xc3\xa9"}) EXPECT_FALSE(sam3::parse_polarity(w)) << w;
}

}  // namespace
