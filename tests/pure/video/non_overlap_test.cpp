// SAM 3.1's per-pixel non-overlap (pure/video/non_overlap.h) on a few pixels whose winners are
// known: the highest logit keeps its pixel, the others are clamped to at most -10, ties go to
// the first object, and one object alone is left as it is.
#include <gtest/gtest.h>

#include "pure/video/non_overlap.h"

namespace sam3::pure::video {
namespace {

TEST(NonOverlap, TheHighestLogitKeepsEachPixelAndTheOthersAreClampedToMinusTen) {
  std::vector<float> a{5.0f, -3.0f, 2.0f, -20.0f, 1.0f};
  std::vector<float> b{1.0f, 4.0f, 2.0f, -30.0f, -15.0f};
  std::vector<float> c{-1.0f, 4.0f, 7.0f, -25.0f, -12.0f};
  keep_highest_per_pixel({a.data(), b.data(), c.data()}, a.size());
  EXPECT_EQ(a, (std::vector<float>{5.0f, -10.0f, -10.0f, -20.0f, 1.0f})) << "a wins pixels 0, 3 and 4";
  EXPECT_EQ(b, (std::vector<float>{-10.0f, 4.0f, -10.0f, -30.0f, -15.0f})) << "b ties c on pixel 1 and keeps it (the first)";
  EXPECT_EQ(c, (std::vector<float>{-10.0f, -10.0f, 7.0f, -25.0f, -12.0f})) << "c wins pixel 2; losers already below -10 stay";
}

TEST(NonOverlap, OneObjectAloneIsLeftAsItIs) {
  std::vector<float> a{-20.0f, 3.0f, -5.0f};
  const auto before = a;
  keep_highest_per_pixel({a.data()}, a.size());
  EXPECT_EQ(a, before);
}

}  // namespace
}  // namespace sam3::pure::video
