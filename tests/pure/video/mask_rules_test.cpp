// The mask rules the official SAM3 / SAM 3.1 code applies around the tracker, case by case on
// hand-made masks: hole filling and sprinkle removal (src/video/hole_filling.h), the
// area-shrinkage suppression before memory encoding (area_shrinkage.h), and the choice and
// blending of reconditioned tracks (recondition.h).
#include <gtest/gtest.h>

#include "pure/video/area_shrinkage.h"
#include "pure/video/hole_filling.h"
#include "pure/video/recondition.h"

namespace sam3::pure::video {
namespace {

constexpr int kSide = 32;

// Logits: +5 inside [x0,x1) x [y0,y1), -5 elsewhere.
std::vector<float> box_logits(int x0, int y0, int x1, int y1, int side = kSide) {
  std::vector<float> v(static_cast<size_t>(side) * side, -5.0f);
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) v[y * side + x] = 5.0f;
  return v;
}
void paint(std::vector<float>& v, int x0, int y0, int x1, int y1, float value) {
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) v[y * kSide + x] = value;
}
BinaryMask square(int x0, int y0, int x1, int y1) {
  const auto v = box_logits(x0, y0, x1, y1);
  return binarize(v.data(), kSide, kSide);
}
Detection det(int x0, int y0, int x1, int y1, float score) {
  return {square(x0, y0, x1, y1), score, (x0 + x1) / 2.0f / kSide, (y0 + y1) / 2.0f / kSide};
}

TEST(HoleFilling, ComponentsAreEightConnected) {
  std::vector<std::uint8_t> on(9, 0);  // a diagonal of three pixels in 3x3 is one component
  on[0] = on[4] = on[8] = 1;
  const auto areas = component_areas(on, 3, 3);
  EXPECT_EQ(areas[0], 3);
  EXPECT_EQ(areas[8], 3);
  EXPECT_EQ(areas[1], 0);
}

TEST(HoleFilling, ASmallHoleIsFilledAndALargeOneStays) {
  auto v = box_logits(4, 4, 28, 28);
  paint(v, 8, 8, 12, 12, -3.0f);    // 16 pixels: filled at max_area 16
  paint(v, 16, 16, 21, 21, -3.0f);  // 25 pixels: stays
  fill_holes_and_remove_sprinkles(v.data(), kSide, kSide, 16);
  EXPECT_FLOAT_EQ(v[9 * kSide + 9], kFilledHoleLogit);
  EXPECT_FLOAT_EQ(v[18 * kSide + 18], -3.0f);
  EXPECT_FLOAT_EQ(v[5 * kSide + 5], 5.0f);  // the object itself untouched
}

TEST(HoleFilling, SmallBackgroundAtTheBorderCountsAsAHole) {
  // The official rule takes every small background component, enclosed or not.
  auto v = box_logits(0, 0, kSide, kSide);
  paint(v, 0, 0, 3, 3, -1.0f);  // 9 pixels in the corner
  fill_holes_and_remove_sprinkles(v.data(), kSide, kSide, 16);
  EXPECT_FLOAT_EQ(v[0], kFilledHoleLogit);
}

TEST(HoleFilling, SprinklesGoButATinyObjectAloneStays) {
  auto v = box_logits(4, 4, 20, 20);  // 256 pixels
  paint(v, 26, 26, 28, 28, 2.0f);     // a 4-pixel sprinkle
  fill_holes_and_remove_sprinkles(v.data(), kSide, kSide, 16);
  EXPECT_FLOAT_EQ(v[26 * kSide + 26], kRemovedSprinkleLogit);
  EXPECT_FLOAT_EQ(v[10 * kSide + 10], 5.0f);

  auto tiny = box_logits(10, 10, 12, 12);  // 4 pixels, the whole object: half of it is 2 < 4
  fill_holes_and_remove_sprinkles(tiny.data(), kSide, kSide, 16);
  EXPECT_FLOAT_EQ(tiny[10 * kSide + 10], 5.0f);
}

TEST(HoleFilling, ZeroAreaChangesNothing) {
  auto v = box_logits(4, 4, 28, 28);
  paint(v, 8, 8, 9, 9, -3.0f);
  const auto before = v;
  fill_holes_and_remove_sprinkles(v.data(), kSide, kSide, 0);
  EXPECT_EQ(v, before);
}

TEST(AreaShrinkage, AMaskMostlyCoveredByAStrongerOneIsSuppressed) {
  const size_t n = kSide * kSide;
  auto big = box_logits(0, 0, 20, 20);    // 400 pixels, +5
  auto small = box_logits(2, 2, 12, 12);  // 100 pixels, +2 over the big one's +5
  for (auto& x : small) x = x > 0 ? 2.0f : x;
  auto far = box_logits(24, 24, 30, 30);
  ShrinkageVote vote(n);
  vote.add(big.data());
  vote.add(small.data());
  vote.add(far.data());
  EXPECT_EQ(vote.shrunk(0.3f), (std::vector<bool>{false, true, false}));
}

TEST(AreaShrinkage, KeepingAThirdIsEnoughAndTiesGoToTheFirst) {
  const size_t n = kSide * kSide;
  const auto a = box_logits(0, 0, 10, 10);  // 100 pixels
  const auto b = box_logits(0, 0, 10, 4);   // 40 pixels, all tied with a: a keeps them
  ShrinkageVote vote(n);
  vote.add(a.data());
  vote.add(b.data());
  EXPECT_EQ(vote.shrunk(0.3f), (std::vector<bool>{false, true}));

  ShrinkageVote reversed(n);  // b first: b keeps its 40, a keeps 60 of 100
  reversed.add(b.data());
  reversed.add(a.data());
  EXPECT_EQ(reversed.shrunk(0.3f), (std::vector<bool>{false, false}));
  EXPECT_EQ(reversed.shrunk(0.7f), (std::vector<bool>{false, true}));
}

TEST(Recondition, EveryNthProcessedFrame) {
  EXPECT_TRUE(is_recondition_frame(0, 16));
  EXPECT_TRUE(is_recondition_frame(32, 16));
  EXPECT_FALSE(is_recondition_frame(17, 16));
  EXPECT_FALSE(is_recondition_frame(16, 0));  // off
}

TEST(Recondition, AConfidentDetectionOverAConfidentTrackReconditionsIt) {
  VideoTrackerOptions o;
  const std::vector<TrackMask> tracks = {{1, square(4, 4, 12, 12)}, {2, square(18, 18, 26, 26)}};
  const auto m = recondition_matches({det(5, 5, 12, 12, 0.9f), det(18, 18, 26, 26, 0.7f)}, tracks, {0.95f, 0.95f}, o);
  EXPECT_EQ(m, (std::map<int, int>{{0, 0}}));  // the second detection is below 0.8
}

TEST(Recondition, TheTrackerMustBeConfidentToo) {
  VideoTrackerOptions o;
  const std::vector<TrackMask> tracks = {{1, square(4, 4, 12, 12)}};
  EXPECT_TRUE(recondition_matches({det(4, 4, 12, 12, 0.9f)}, tracks, {0.8f}, o).empty());   // not above 0.8
  EXPECT_TRUE(recondition_matches({det(4, 4, 12, 12, 0.9f)}, tracks, {-1.0f}, o).empty());  // not eligible (clicked)
}

TEST(Recondition, AmbiguousMatchesAreSkipped) {
  VideoTrackerOptions o;
  // One detection covering two tracks at IoM >= 0.5: neither is reconditioned.
  const std::vector<TrackMask> two = {{1, square(4, 4, 10, 10)}, {2, square(10, 4, 16, 10)}};
  EXPECT_TRUE(recondition_matches({det(4, 4, 16, 10, 0.9f)}, two, {0.9f, 0.9f}, o).empty());
  // One track under two detections at IoM >= 0.5: not reconditioned.
  const std::vector<TrackMask> one = {{1, square(4, 4, 16, 10)}};
  EXPECT_TRUE(recondition_matches({det(4, 4, 10, 10, 0.9f), det(10, 4, 16, 10, 0.9f)}, one, {0.9f}, o).empty());
}

TEST(Recondition, LowOverlapOrBoundaryDetectionsDoNotRecondition) {
  VideoTrackerOptions o;
  const std::vector<TrackMask> tracks = {{1, square(4, 4, 12, 12)}};
  // IoM 16/64 = 0.25 < 0.5 (it still matches the track for keep-alive at 0.1).
  EXPECT_TRUE(recondition_matches({det(8, 8, 16, 16, 0.9f)}, tracks, {0.9f}, o).empty());
  // A detection centred in the boundary margin is dropped before matching in SAM 3.1.
  const std::vector<TrackMask> edge = {{1, square(0, 0, 1, 1)}};
  EXPECT_TRUE(recondition_matches({det(0, 0, 1, 1, 0.9f)}, edge, {0.9f}, o).empty());
  o.boundary_margin = 0;
  EXPECT_EQ(recondition_matches({det(0, 0, 1, 1, 0.9f)}, edge, {0.9f}, o).size(), 1u);
}

TEST(Recondition, BlendTakesTheDetectionWhereTheyDisagree) {
  std::vector<float> track = {3.0f, -2.0f, 1.0f, -1.0f};
  const std::vector<float> detection = {5.0f, 4.0f, -6.0f, -7.0f};
  blend_recondition(track.data(), detection.data(), track.size());
  EXPECT_EQ(track, (std::vector<float>{3.0f, 4.0f, -6.0f, -1.0f}));
}

}  // namespace
}  // namespace sam3::pure::video
