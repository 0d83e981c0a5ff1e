// What tracking holds per object on a large frame, counted by this program's own allocator
// (issue 42, item 9): each shown object's mask was upsampled to a frame-sized raster before the
// non-overlap rule, so one CVAT tracker call with 64 rectangles on a 6000x6000 frame peaked at
// 2.6 GB though CVAT reads only boxes. Masks now cost their objects' bounds.
#include <gtest/gtest.h>

#include <cstdio>

#include "sam3/video_tracker.h"
#include "support/counted_allocations.h"
#include "pure/video/output_delay.h"

namespace sam3 {
namespace {

// An object whose 16x16 logits are hot in one cell: a small square on any frame.
pure::video::PendingObject small_object(int id, int cell, float tracker_score) {
  pure::video::PendingObject o{id, 0, 0.8f, tracker_score, 16, 16, std::vector<float>(256, -10.0f)};
  o.logits[static_cast<size_t>(cell)] = 10.0f;
  return o;
}

TEST(FrameMemory, SixtyFourObjectsOnALargeFrameAreNotAFrameEach) {
  constexpr int kSide = 4000;  // 16 MP: a frame-sized byte raster is 16 MB
  std::vector<pure::video::PendingObject> objects;
  for (int k = 0; k < 64; ++k) objects.push_back(small_object(k + 1, k * 4 % 256, 0.5f + 0.001f * static_cast<float>(k)));
  std::vector<const pure::video::PendingObject*> shown;
  for (const auto& o : objects) shown.push_back(&o);
  std::vector<TrackedObject> out;
  const std::int64_t peak = test::peak_of([&] { out = pure::video::render_objects(shown, kSide, kSide); });
  ASSERT_EQ(out.size(), 64u);
  std::int64_t held = 0;
  for (const auto& o : out) held += static_cast<std::int64_t>(o.mask.bytes());
  const std::int64_t frame = std::int64_t{kSide} * kSide;
  std::printf("64 objects on a %dx%d frame: peak %.1f MB while rendering, %.2f MB held (a frame-sized raster: %.1f MB)\n", kSide, kSide,
              peak / 1048576.0, held / 1048576.0, frame / 1048576.0);
  EXPECT_LT(peak, frame) << "rendering held frame-sized rasters (64 of them were 1 GB)";
  EXPECT_LT(held, frame / 2) << "the objects' masks hold more than their bounds (64 frame-sized ones were 64 frames)";
  for (const auto& o : out) {
    const TileRect b = o.mask.bounds();
    EXPECT_FLOAT_EQ(o.box.x0, static_cast<float>(b.x0));
    EXPECT_FLOAT_EQ(o.box.y1, static_cast<float>(b.y1));
  }
}

// The same through the tracker, as CVAT's tracker function starts 64 rectangles on a frame:
// what 64 boxes cost beyond one box on the same frame (the frame's own preprocessing, features
// and first memories are in both) is compared with frame-sized rasters.
TEST(FrameMemory, StartingSixtyFourBoxesOnALargeFrameHoldsNoFrameSizedMaskEach) {
  const auto model = Model::load(std::string(SAM3_TEST_MODELS_DIR) + "/sam3.1-video");
  constexpr int kSide = 2400, kGrid = 8, kCell = kSide / kGrid;
  VideoFrame frame;
  frame.image.width = frame.image.height = kSide;
  frame.image.rgb.assign(static_cast<size_t>(kSide) * kSide * 3, 40);
  VideoPrompts many, one;
  for (int k = 0; k < kGrid * kGrid; ++k) {
    const float x0 = static_cast<float>(k % kGrid * kCell + kCell / 4), y0 = static_cast<float>(k / kGrid * kCell + kCell / 4);
    many.objects.push_back({.frame = 0, .points = {}, .box = Box{x0, y0, x0 + kCell / 2, y0 + kCell / 2}});
    for (int y = static_cast<int>(y0); y < static_cast<int>(y0) + kCell / 2; ++y) {
      for (int x = static_cast<int>(x0); x < static_cast<int>(x0) + kCell / 2; ++x) {
        std::uint8_t* p = &frame.image.rgb[(static_cast<size_t>(y) * kSide + x) * 3];
        p[0] = static_cast<std::uint8_t>(60 + k * 3), p[1] = 200, p[2] = static_cast<std::uint8_t>(250 - k * 3);
      }
    }
  }
  one.objects.push_back(many.objects.front());
  VideoTrackerOptions options;
  options.hotstart_delay = 0;
  const auto peak_of_start = [&](const VideoPrompts& prompts) {
    VideoTracker tracker(model, prompts, options);
    std::vector<VideoFrameResult> results;
    const std::int64_t peak = test::peak_of([&] { results = tracker.push(frame); });
    EXPECT_EQ(results.size(), 1u);
    return peak;
  };
  peak_of_start(one);  // ONNX Runtime's one-time allocations stay out of the count
  const std::int64_t single = peak_of_start(one), all = peak_of_start(many);
  const std::int64_t pixels = std::int64_t{kSide} * kSide;
  std::printf("boxes started on a %dx%d frame: peak %.1f MB with 1, %.1f MB with 64 (63 frame-sized masks: %.1f MB)\n", kSide, kSide,
              single / 1048576.0, all / 1048576.0, 63.0 * pixels / 1048576.0);
  // A frame-sized mask per object made 63 more objects cost at least 63 bytes a frame pixel; their
  // low-resolution logits, buckets and the one mask being made cost a fraction of that.
  EXPECT_LT(all - single, 24 * pixels) << "63 more objects cost " << (all - single) / pixels << " bytes a frame pixel";
}

}  // namespace
}  // namespace sam3
