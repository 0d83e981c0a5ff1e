// One bucket on the generated SAM 3.1 bundle, an object joining its free slot on a later frame
// as SAM 3.1 packs it (video/bucket.h, JoiningObjects; the official add_new_masks on a frame
// already tracked): the join frame stays a non-conditioning memory frame flagged for the new
// slot only, holds the new object's interactive pointer, and the frames before it hold the slot
// as empty (pointer 0); the object is still followed once its join frame has left the bank.
// The join frame's memory is encoded as SAM 3.1 re-encodes it: the old objects' raw masks (no
// occlusion suppression), the new ones' binarised, kept apart per pixel. A reconditioned object
// (the official add_new_masks(reconditioning=True), also on a frame already tracked) goes the
// same way: flagged in a non-conditioning frame.
#include <gtest/gtest.h>

#include <algorithm>

#include "model/video_decoder.h"
#include "video/bucket.h"
#include "video/synthetic_video.h"

namespace sam3::video {
namespace {

struct Encoded {
  std::unique_ptr<const detail::EncodedFrame> frame;
  FrameNeck neck;
};

Encoded encode(const VideoDecoder& bundle, int index) {
  Encoded e;
  e.frame = bundle.encode_frame(test::frame_of(index).image);
  e.neck.frame = e.frame.get();
  e.neck.rows = e.frame->rows;
  e.neck.pos_rows = e.frame->pos_rows;
  e.neck.t = index;
  return e;
}

// The interactive decoder clicked on the square's centre: its mask and pointer.
detail::PromptedObject click(const VideoDecoder& bundle, const Encoded& e, const test::Square& s, int index) {
  const auto box = *test::where(s, index);
  const float sx = static_cast<float>(bundle.input_size()) / test::kWidth, sy = static_cast<float>(bundle.input_size()) / test::kHeight;
  return bundle.prompt(*e.frame, {(box[0] + box[2]) / 2.0f * sx, (box[1] + box[3]) / 2.0f * sy}, {1}, nullptr);
}

bool all_zero(const Floats& pointers, int slot) {
  return std::all_of(pointers.begin() + slot * kChannels, pointers.begin() + (slot + 1) * kChannels, [](float v) { return v == 0.0f; });
}

TEST(BucketJoin, ALaterObjectJoinsAFreeSlotInANonConditioningFrameFlaggedForItAlone) {
  const auto model = Model::load(std::string(SAM3_TEST_MODELS_DIR) + "/sam3.1-video");
  const auto bundle = detail::video_decoder(model);
  const auto scene = test::scene();
  const auto &red = scene[0], &green = scene[1];  // green enters on frame 8
  const auto first = encode(*bundle, 0);
  auto r = click(*bundle, first, red, 0);
  Bucket bucket(*bundle, first.neck, {1}, {r.mask}, {r.pointer});
  constexpr int kJoin = 9, kLast = kJoin + 8;
  Floats joined_pointer;
  for (int i = 1; i <= kLast; ++i) {
    const auto e = encode(*bundle, i);
    bucket.propagate(*bundle, e.neck);
    if (i == kJoin) {
      auto g = click(*bundle, e, green, i);
      joined_pointer = g.pointer;
      const JoiningObjects joining{{2}, {g.mask}, {g.pointer}};
      bucket.remember(*bundle, e.neck, {}, {}, &joining);
      EXPECT_EQ(bucket.slots()[1], 2) << "the lowest free slot";
      EXPECT_EQ(bucket.conditioning_frames(), 1) << "the join frame is not a conditioning frame";
      const auto& joined = bucket.recent_memory().back();
      EXPECT_EQ(joined.t, kJoin);
      for (int k = 0; k < kSlots; ++k) EXPECT_EQ(joined.flagged[k], k == 1) << "flag channel of slot " << k;
      EXPECT_EQ(Floats(joined.pointers.begin() + kChannels, joined.pointers.begin() + 2 * kChannels), joined_pointer)
          << "the new slot's pointer is the interactive decoder's";
      for (const auto& f : bucket.recent_memory())
        if (f.t < kJoin) EXPECT_TRUE(all_zero(f.pointers, 1)) << "frame " << f.t << " holds the slot empty";
      EXPECT_TRUE(all_zero(bucket.conditioning_memory().front().pointers, 1));
      EXPECT_FALSE(bucket.conditioning_memory().front().flagged[1]);
      continue;
    }
    if (i > kJoin) EXPECT_TRUE(bucket.appearing(1)) << "green on frame " << i;
    bucket.remember(*bundle, e.neck, {}, {});
  }
  EXPECT_TRUE(std::none_of(bucket.recent_memory().begin(), bucket.recent_memory().end(), [](const MemoryFrame& f) { return f.t == kJoin; }))
      << "the join frame has left the bank";
  // Green's mask on the last tracked frame covers green's centre, red's does not.
  const auto box = *test::where(green, kLast);
  const int m = bundle->mask_side();
  const int cx = (box[0] + box[2]) / 2 * m / test::kWidth, cy = (box[1] + box[3]) / 2 * m / test::kHeight;
  const auto& masks = bucket.outputs().masks;
  const size_t plane = static_cast<size_t>(m) * m;
  EXPECT_GT(masks[plane + cy * m + cx], 0.0f) << "slot 1 follows green";
  EXPECT_LT(masks[cy * m + cx], 0.0f) << "slot 0 does not";
}

// Logits of a mask side x mask side plane: +5 inside the frame-pixel box [x0, y0, x1, y1), -5 outside.
Floats box_logits(int m, int x0, int y0, int x1, int y1) {
  Floats logits(static_cast<size_t>(m) * m, -5.0f);
  for (int y = y0 * m / test::kHeight; y < y1 * m / test::kHeight; ++y)
    for (int x = x0 * m / test::kWidth; x < x1 * m / test::kWidth; ++x) logits[static_cast<size_t>(y) * m + x] = 5.0f;
  return logits;
}

TEST(BucketJoin, TheJoinFrameTakesTheRawMasksKeptApartPerPixel) {
  const auto model = Model::load(std::string(SAM3_TEST_MODELS_DIR) + "/sam3.1-video");
  const auto bundle = detail::video_decoder(model);
  const auto scene = test::scene();
  const auto& red = scene[0];
  const auto first = encode(*bundle, 0);
  auto r = click(*bundle, first, red, 0);
  Bucket bucket(*bundle, first.neck, {1}, {r.mask}, {r.pointer});
  constexpr int kJoin = 3;
  for (int i = 1; i < kJoin; ++i) {
    const auto e = encode(*bundle, i);
    bucket.propagate(*bundle, e.neck);
    bucket.remember(*bundle, e.neck, {}, {});
  }
  const auto e = encode(*bundle, kJoin);
  bucket.propagate(*bundle, e.neck);
  ASSERT_TRUE(bucket.appearing(0));
  // Red, occluded by the rules (its memory would be suppressed on another frame), and two new
  // objects: one elsewhere, one over the left half of red.
  const auto box = *test::where(red, kJoin);
  const int mid = (box[0] + box[2]) / 2, cy = (box[1] + box[3]) / 2;
  const int m = bundle->mask_side();
  SlotMemory memory;
  memory.empty[0] = true;
  const JoiningObjects joining{
      {2, 3}, {box_logits(m, 0, 0, 10, 10), box_logits(m, box[0] - 2, box[1] - 2, mid, box[3] + 2)}, {r.pointer, r.pointer}};
  const auto in = bucket.join_input(*bundle, memory, joining);
  const int side = bundle->memory_side();
  const size_t plane = static_cast<size_t>(side) * side;
  const auto at = [&](int slot, int x, int y) {
    return in.masks32[slot * plane + static_cast<size_t>(y * side / test::kHeight) * side + x * side / test::kWidth];
  };
  const int left = (box[0] + mid) / 2, right = (mid + box[2]) / 2;
  EXPECT_GT(at(2, left, cy), 0.99f) << "the new object over red's left half holds it (binarised: +-1024)";
  EXPECT_LT(at(0, left, cy), -0.999f) << "red loses the pixels the new object wins (clamped to -10)";
  EXPECT_GT(at(0, right, cy), 0.0f) << "red keeps its right half: its raw mask, not the occlusion's suppression";
  EXPECT_LT(at(2, right, cy), 0.0f);
  EXPECT_GT(at(1, 2, 2), 0.99f) << "the new object elsewhere";
  for (int k = 0; k < kSlots; ++k) {
    EXPECT_EQ(in.masks32[(kSlots + k) * plane], k == 1 || k == 2 ? 1.0f : 0.0f) << "flag channel of slot " << k;
    EXPECT_EQ(in.no_object[k], k > 2) << "no-object embedding of slot " << k;
  }
}

TEST(BucketRecondition, AReconditionedSlotIsFlaggedInANonConditioningFrameThatLeavesTheBank) {
  const auto model = Model::load(std::string(SAM3_TEST_MODELS_DIR) + "/sam3.1-video");
  const auto bundle = detail::video_decoder(model);
  const auto scene = test::scene();
  const auto &red = scene[0], &blue = scene[2];  // both from frame 0, blue until frame 11
  const auto first = encode(*bundle, 0);
  auto r = click(*bundle, first, red, 0), b = click(*bundle, first, blue, 0);
  Bucket bucket(*bundle, first.neck, {1, 2}, {r.mask, b.mask}, {r.pointer, b.pointer});
  constexpr int kRecondition = 4, kLast = 11;
  for (int i = 1; i <= kLast; ++i) {
    const auto e = encode(*bundle, i);
    bucket.propagate(*bundle, e.neck);
    if (i == kRecondition) {  // red re-prompted with its clicked mask, as a detection would
      auto again = click(*bundle, e, red, i);
      SlotMemory memory;
      memory.masks[0] = again.mask;
      memory.pointers[0] = again.pointer;
      bucket.remember(*bundle, e.neck, memory, {});
      const auto& f = bucket.recent_memory().back();
      EXPECT_EQ(f.t, kRecondition) << "the reconditioned frame is a recent (non-conditioning) one";
      for (int k = 0; k < kSlots; ++k) EXPECT_EQ(f.flagged[k], k == 0) << "flag channel of slot " << k;
      EXPECT_EQ(Floats(f.pointers.begin(), f.pointers.begin() + kChannels), again.pointer)
          << "the reconditioned slot's pointer is the interactive decoder's";
      EXPECT_FALSE(all_zero(f.pointers, 1)) << "blue's pointer is the tracker's";
    } else {
      bucket.remember(*bundle, e.neck, {}, {});
    }
    ASSERT_EQ(bucket.conditioning_frames(), 1) << "frame " << i << ": the bucket's first frame only";
    EXPECT_EQ(bucket.conditioning_memory().front().t, 0);
  }
  EXPECT_TRUE(std::none_of(bucket.recent_memory().begin(), bucket.recent_memory().end(), [](const MemoryFrame& f) {
    return f.t == kRecondition || f.flagged[0];
  })) << "the reconditioned frame has left the bank after 6 frames";
  const auto box = *test::where(red, kLast);
  const int m = bundle->mask_side();
  const int cx = (box[0] + box[2]) / 2 * m / test::kWidth, cy = (box[1] + box[3]) / 2 * m / test::kHeight;
  EXPECT_GT(bucket.outputs().masks[cy * m + cx], 0.0f) << "slot 0 still follows red";
}

}  // namespace
}  // namespace sam3::video
