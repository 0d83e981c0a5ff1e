// The hot-start output delay and what each frame shows (src/video/output_delay.h).
#include <gtest/gtest.h>

#include "pure/video/output_delay.h"

namespace sam3::pure::video {
namespace {

// An object whose low-res (8x8) mask covers columns x0..x1-1 of every row.
PendingObject object(int id, int x0, int x1, float tracker_score = 0.9f) {
  PendingObject o{id, 0, 0.8f, tracker_score, 8, 8, std::vector<float>(64, -10.0f)};
  for (int y = 0; y < 8; ++y)
    for (int x = x0; x < x1; ++x) o.logits[y * 8 + x] = 10.0f;
  return o;
}

PendingFrame frame(std::int64_t index, std::vector<PendingObject> objects) {
  PendingFrame f;
  f.index = index;
  f.time_s = index / 10.0;
  f.objects = std::move(objects);
  return f;
}

TEST(OutputDelay, HoldsFramesForTheHotStartDelay) {
  OutputDelay delay(3, 0, 16, 16);
  EXPECT_TRUE(delay.push(frame(0, {object(1, 0, 4)}), {}).empty());
  EXPECT_TRUE(delay.push(frame(1, {object(1, 0, 4)}), {}).empty());
  const auto out = delay.push(frame(2, {object(1, 0, 4)}), {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].index, 0);
  EXPECT_DOUBLE_EQ(out[0].time_s, 0.0);
  ASSERT_EQ(out[0].objects.size(), 1u);
  EXPECT_EQ(out[0].objects[0].mask.width(), 16);
  EXPECT_EQ(delay.flush().size(), 2u);
}

TEST(OutputDelay, AnObjectRemovedLaterIsNeverShown) {
  OutputDelay delay(3, 0, 16, 16);
  delay.push(frame(0, {object(1, 0, 4), object(2, 5, 8)}), {});
  delay.push(frame(1, {object(1, 0, 4), object(2, 5, 8)}), {});
  const auto out = delay.push(frame(2, {object(1, 0, 4)}), {2});  // hot-start removed 2 on frame 2
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].objects.size(), 1u);
  EXPECT_EQ(out[0].objects[0].id, 1);
}

TEST(OutputDelay, SuppressedAndLaterUnconfirmedObjectsAreHidden) {
  OutputDelay delay(4, 3, 16, 16);  // confirmation read 2 frames later
  auto f0 = frame(0, {object(1, 0, 4), object(2, 5, 8)});
  f0.suppressed = {1};
  f0.unconfirmed = {2};
  delay.push(std::move(f0), {});
  auto f1 = frame(1, {object(1, 0, 4), object(2, 5, 8)});
  f1.unconfirmed = {2};
  delay.push(std::move(f1), {});
  delay.push(frame(2, {object(1, 0, 4), object(2, 5, 8)}), {});  // 2 confirmed here
  const auto out = delay.push(frame(3, {object(1, 0, 4), object(2, 5, 8)}), {});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].objects.size(), 1u) << "1 suppressed on frame 0; 2 unconfirmed on frame 0 but confirmed on frame 2";
  EXPECT_EQ(out[0].objects[0].id, 2);
}

// sam3_multiplex_tracking.py propagate_in_video: unconfirmed_obj_ids_per_frame.get(f + 2) is
// None while frame f + 2 is not processed (and the dict is only filled when hotstart_delay > 0).
TEST(OutputDelay, AConfirmationFrameNotProcessedYetHidesNothing) {
  OutputDelay delay(1, 3, 16, 16);  // a frame leaves as soon as it comes: frame f + 2 not there yet
  for (int f = 0; f < 3; ++f) {
    auto pending = frame(f, {object(1, 0, 4)});
    pending.unconfirmed = {1};
    const auto out = delay.push(std::move(pending), {});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].objects.size(), 1u) << "no record for frame " << f + 2 << ": shown";
  }
  OutputDelay held(2, 3, 16, 16);
  for (int f = 0; f < 3; ++f) {
    auto pending = frame(f, {object(1, 0, 4)});
    pending.unconfirmed = {1};
    held.push(std::move(pending), {});
  }
  const auto end = held.flush();  // the video ended: the last frame's own record is read
  ASSERT_EQ(end.size(), 1u);
  EXPECT_TRUE(end[0].objects.empty());
}

TEST(OutputDelay, WithoutDelayNothingIsHiddenAsRemovedOrUnconfirmed) {
  OutputDelay delay(0, 3, 16, 16);
  auto pending = frame(0, {object(1, 0, 4), object(2, 5, 8)});
  pending.unconfirmed = {1, 2};
  const auto out = delay.push(std::move(pending), {2});  // 2 removed on this frame
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].objects.size(), 2u);
}

TEST(OutputDelay, OverlapsGoToTheHigherTrackerScore) {
  const auto a = object(1, 0, 6, 0.6f), b = object(2, 4, 8, 0.9f);
  const auto objects = render_objects({&a, &b}, 8, 8);
  ASSERT_EQ(objects.size(), 2u);
  EXPECT_FALSE(objects[0].mask.at(5, 0)) << "column 5 is shared: 2 scores higher";
  EXPECT_TRUE(objects[1].mask.at(5, 0));
  EXPECT_FLOAT_EQ(objects[0].box.x1, 4.0f);
  const auto c = object(3, 4, 6, 0.5f);
  const auto two = render_objects({&b, &c}, 8, 8);
  ASSERT_EQ(two.size(), 1u) << "an object that loses every pixel is not shown";
}

}  // namespace
}  // namespace sam3::pure::video
