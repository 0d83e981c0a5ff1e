// The video tracker end to end on the generated SAM 3.1 bundle (tools/make_video_models.py)
// and a generated video (synthetic_video.h): stable ids through motion, entering, leaving and
// crossing; the hot-start delay; click and box tracking; typed errors for bad input.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "sam3/error.h"
#include "sam3/video_tracker.h"
#include "video/synthetic_video.h"

namespace sam3 {
namespace {

std::shared_ptr<const Model> video_model() {
  static auto model = Model::load(std::string(SAM3_TEST_MODELS_DIR) + "/sam3.1-video");
  return model;
}

std::vector<VideoFrameResult> run(VideoTracker& tracker, int frames = test::kFrames) {
  std::vector<VideoFrameResult> out;
  for (int i = 0; i < frames; ++i) {
    for (auto& r : tracker.push(test::frame_of(i))) out.push_back(std::move(r));
  }
  for (auto& r : tracker.finish()) out.push_back(std::move(r));
  return out;
}

// The square's centre pixel, if the square is there and not hidden there by another.
std::optional<std::pair<int, int>> visible_centre(const test::Square& s, int frame) {
  const auto box = test::where(s, frame);
  if (!box) return std::nullopt;
  const int cx = std::clamp(((*box)[0] + (*box)[2]) / 2, 0, test::kWidth - 1);
  const int cy = std::clamp(((*box)[1] + (*box)[3]) / 2, 0, test::kHeight - 1);
  const auto image = test::frame_of(frame).image;
  for (int c = 0; c < 3; ++c) {
    if (image.rgb[(static_cast<size_t>(cy) * test::kWidth + cx) * 3 + c] != s.rgb[c]) return std::nullopt;
  }
  return std::pair{cx, cy};
}

// Which object covers the square's visible centre on a frame (0: none, -1: not visible).
int id_at_centre(const VideoFrameResult& r, const test::Square& s) {
  const auto centre = visible_centre(s, static_cast<int>(r.index));
  if (!centre) return -1;
  const auto [cx, cy] = *centre;
  for (const auto& o : r.objects) {
    if (o.mask.at(cx, cy)) return o.id;
  }
  return 0;
}

TEST(VideoTracker, ConceptTrackingKeepsIdsThroughMotionEntriesExitsAndCrossings) {
  VideoTracker tracker(video_model(), {.texts = {"car"}});
  const auto results = run(tracker);
  ASSERT_EQ(results.size(), static_cast<size_t>(test::kFrames));
  for (int i = 0; i < test::kFrames; ++i) ASSERT_EQ(results[i].index, i) << "frames come out in order, each once";

  std::map<std::string, std::set<int>> ids;
  for (const auto& r : results) {
    for (const auto& s : test::scene()) {
      const int id = id_at_centre(r, s);
      if (id < 0) continue;  // not in the picture, or under another square where they cross
      if (id == 0)
        ADD_FAILURE() << s.name << " not found on frame " << r.index;
      else
        ids[s.name].insert(id);
    }
    std::set<int> seen;
    for (const auto& o : r.objects) {
      EXPECT_TRUE(seen.insert(o.id).second) << "one object per id on frame " << r.index;
      EXPECT_GT(o.score, 0.4f);
      EXPECT_EQ(o.prompt, 0);
    }
    if (r.index > 11) {
      for (const auto& o : r.objects) EXPECT_NE(o.id, *ids["blue"].begin()) << "blue left after frame 11, frame " << r.index;
    }
  }
  std::set<int> all;
  for (const auto& [name, set] : ids) {
    EXPECT_EQ(set.size(), 1u) << name << " changed id";
    all.insert(set.begin(), set.end());
  }
  EXPECT_EQ(all.size(), 4u) << "four objects, four ids";
  const auto stats = tracker.stats();
  EXPECT_EQ(stats.frames, test::kFrames);
  EXPECT_EQ(stats.objects, 4);
  EXPECT_GT(stats.reconditioned, 0) << "SAM 3.1's default reconditions on frame 16";
}

TEST(VideoTracker, MasksFollowTheSquares) {
  VideoTracker tracker(video_model(), {.texts = {"car"}});
  const auto results = run(tracker, 12);
  const auto red = test::scene()[0];
  for (const auto& r : results) {
    const int id = id_at_centre(r, red);
    ASSERT_GT(id, 0);
    const auto& obj = *std::find_if(r.objects.begin(), r.objects.end(), [&](const TrackedObject& o) { return o.id == id; });
    const auto box = *test::where(red, static_cast<int>(r.index));
    EXPECT_NEAR(obj.box.x0, box[0], 3.0f) << "frame " << r.index;
    EXPECT_NEAR(obj.box.x1, box[2], 3.0f) << "frame " << r.index;
    EXPECT_NEAR(obj.box.y0, box[1], 3.0f) << "frame " << r.index;
    EXPECT_NEAR(obj.box.y1, box[3], 3.0f) << "frame " << r.index;
  }
}

TEST(VideoTracker, HoleFillingClosesASmallHoleInATrackedMask) {
  // A red square with a grey 8x8 hole in its middle, still. In the generated model's 64x64
  // masks the hole is 18 pixels: fill_hole_area 0 (SAM 3.1's default) and 16 (SAM3's) leave it
  // out of the mask on every frame, 32 fills it.
  auto frame_with_hole = [](int index) {
    VideoFrame f;
    f.index = index;
    f.image.width = test::kWidth;
    f.image.height = test::kHeight;
    f.image.rgb.assign(static_cast<size_t>(test::kWidth) * test::kHeight * 3, 128);
    for (int y = 30; y < 70; ++y)
      for (int x = 50; x < 90; ++x) {
        const bool hole = x >= 66 && x < 74 && y >= 46 && y < 54;
        if (!hole)
          f.image.rgb[(static_cast<size_t>(y) * test::kWidth + x) * 3 + 1] =
              f.image.rgb[(static_cast<size_t>(y) * test::kWidth + x) * 3 + 2] = 0,
                                                                        f.image.rgb[(static_cast<size_t>(y) * test::kWidth + x) * 3] = 255;
      }
    return f;
  };
  for (int area : {0, 16, 32}) {
    VideoTrackerOptions options;
    options.hotstart_delay = 0;  // every frame shown as it comes
    options.confirmation_detections = 0;
    options.fill_hole_area = area;
    VideoTracker tracker(video_model(), {.texts = {"car"}}, options);
    std::vector<VideoFrameResult> results;
    for (int i = 0; i < 5; ++i)
      for (auto& r : tracker.push(frame_with_hole(i))) results.push_back(std::move(r));
    for (auto& r : tracker.finish()) results.push_back(std::move(r));
    ASSERT_EQ(results.size(), 5u);
    for (const auto& r : results) {
      ASSERT_EQ(r.objects.size(), 1u) << "frame " << r.index;
      const auto& m = r.objects[0].mask;
      EXPECT_TRUE(m.at(55, 55)) << "the square, frame " << r.index;
      EXPECT_EQ(m.at(70, 50), area >= 18) << "the hole's centre, frame " << r.index << ", area " << area;
    }
  }
}

TEST(VideoTracker, TheAreaRuleSuppressesTheLaterOfTwoObjectsOnOnePlace) {
  // Two clicks on the red square: two objects with the same mask. Before each frame's memory
  // the later one keeps none of its pixels (ties go to the earlier) and is suppressed; with the
  // rule off nothing is.
  for (float ratio : {0.3f, 0.0f}) {
    VideoTrackerOptions options;
    options.shrinkage_min_ratio = ratio;
    VideoTracker tracker(video_model(), {.objects = {{0, {{15, 45}}, std::nullopt}, {0, {{25, 55}}, std::nullopt}}}, options);
    for (int i = 0; i < 6; ++i) tracker.push(test::frame_of(i));
    tracker.finish();
    EXPECT_EQ(tracker.stats().shrunk, ratio > 0 ? 5 : 0) << "frames 1 to 5 encode memory, ratio " << ratio;
  }
}

TEST(VideoTracker, ResultsWaitForTheHotStartDelay) {
  VideoTrackerOptions options;
  options.hotstart_delay = 5;
  options.hotstart_unmatched = 3;
  options.hotstart_duplicate = 3;
  VideoTracker tracker(video_model(), {.texts = {"car"}}, options);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(tracker.push(test::frame_of(i)).empty()) << "frame " << i;
  const auto out = tracker.push(test::frame_of(4));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].index, 0);
  EXPECT_EQ(tracker.finish().size(), 4u);
}

TEST(VideoTracker, TheMemoryBankStopsGrowing) {
  // The first 8 frames again and again (red and blue, no new object): once the bank holds its
  // 6 recent frames and 15 pointer frames, it no longer grows with the video. (Reconditioning
  // adds none: the next test.)
  VideoTrackerOptions options;
  options.recondition_every = 0;
  VideoTracker tracker(video_model(), {.texts = {"car"}}, options);
  std::size_t at16 = 0;
  for (int i = 0; i < 26; ++i) {
    auto frame = test::frame_of(i % 8);
    frame.index = i;
    tracker.push(frame);
    if (i == 16) at16 = tracker.stats().memory_bank_bytes;
  }
  const auto stats = tracker.stats();
  EXPECT_EQ(stats.buckets, 1);
  EXPECT_GT(at16, 0u);
  EXPECT_EQ(stats.memory_bank_bytes, at16);
}

TEST(VideoTracker, AReconditionedFrameStaysANonConditioningOne) {
  // Reconditioning every second frame on the first 8 frames again and again. As in SAM 3.1
  // (add_new_masks(reconditioning=True) on a frame already tracked is stored with the
  // non-conditioning frames), the bucket's only conditioning frame stays the one it started
  // on, and its bank no bigger than without reconditioning. (Until 2026-12-07 each
  // reconditioned frame became a conditioning frame, up to 4.)
  std::map<int, VideoTrackerStats> at24;
  std::set<int> ids;
  for (int every : {2, 0}) {
    VideoTrackerOptions options;
    options.recondition_every = every;
    VideoTracker tracker(video_model(), {.texts = {"car"}}, options);
    for (int i = 0; i < 24; ++i) {
      auto frame = test::frame_of(i % 8);
      frame.index = i;
      for (const auto& r : tracker.push(frame))
        for (const auto& o : r.objects)
          if (every) ids.insert(o.id);
      EXPECT_EQ(tracker.stats().conditioning_frames, tracker.stats().buckets) << "frame " << i << ", every " << every;
    }
    at24[every] = tracker.stats();
    for (const auto& r : tracker.finish())
      for (const auto& o : r.objects)
        if (every) ids.insert(o.id);
  }
  EXPECT_EQ(at24[2].buckets, 1);
  EXPECT_GE(at24[2].reconditioned, 8) << "red and blue, confidently detected and tracked, on most even frames";
  EXPECT_EQ(at24[2].conditioning_frames, 1);
  EXPECT_EQ(at24[2].memory_bank_bytes, at24[0].memory_bank_bytes) << "the reconditioned frames are among the 6 recent ones";
  EXPECT_EQ(ids, (std::set<int>{1, 2})) << "reconditioning keeps the ids";
}

TEST(VideoTracker, ThirtyTwoObjectsTakeTwoBucketsWithStableIds) {
  // 32 squares of 32 colours, drifting right by 2 pixels a frame: 24 of the generated
  // detector's grid colours (channels 0, 128 or 255) and all 8 of its cell-centre colours
  // (channels 64 or 191), so each of those must be told from the others and from the grid.
  // On the bundle generated at 448 pixels: its memory reads an object's colour per cell of
  // 1/32 of the frame, where the 224-pixel bundle's cells (1/16) are so coarse beside 32
  // squares that a corner colour's memory drifts onto its half-bright cell-centre colour.
  std::vector<std::array<std::uint8_t, 3>> colours;
  for (int r = 0; r < 3 && colours.size() < 24; ++r)
    for (int g = 0; g < 3 && colours.size() < 24; ++g)
      for (int b = 0; b < 3 && colours.size() < 24; ++b)
        if (r != 1 || g != 1 || b != 1)
          colours.push_back({static_cast<std::uint8_t>(std::min(255, r * 128)), static_cast<std::uint8_t>(std::min(255, g * 128)),
                             static_cast<std::uint8_t>(std::min(255, b * 128))});
  for (std::uint8_t r : {64, 191})
    for (std::uint8_t g : {64, 191})
      for (std::uint8_t b : {64, 191}) colours.push_back({r, g, b});
  constexpr int kW = 240, kH = 240, kSide = 22;
  const auto corner = [](size_t k, std::int64_t i) {
    return std::array<int, 2>{6 + static_cast<int>(k % 6) * 38 + 2 * static_cast<int>(i), 6 + static_cast<int>(k / 6) * 38};
  };
  auto frame = [&](int i) {
    VideoFrame f;
    f.index = i;
    f.image.width = kW;
    f.image.height = kH;
    f.image.rgb.assign(kW * kH * 3, 128);
    for (size_t k = 0; k < colours.size(); ++k) {
      const auto [x0, y0] = corner(k, i);
      for (int y = y0; y < y0 + kSide; ++y)
        for (int x = x0; x < x0 + kSide; ++x)
          for (int c = 0; c < 3; ++c) f.image.rgb[(static_cast<size_t>(y) * kW + x) * 3 + c] = colours[k][c];
    }
    return f;
  };
  VideoTrackerOptions options;
  options.hotstart_delay = 3;
  options.hotstart_unmatched = 2;
  options.hotstart_duplicate = 2;
  VideoTracker tracker(Model::load(std::string(SAM3_TEST_MODELS_DIR) + "/sam3.1-video-448"), {.texts = {"car"}}, options);
  std::vector<VideoFrameResult> results;
  for (int i = 0; i < 5; ++i)
    for (auto& r : tracker.push(frame(i))) results.push_back(std::move(r));
  for (auto& r : tracker.finish()) results.push_back(std::move(r));
  EXPECT_EQ(tracker.stats().buckets, 2);
  EXPECT_EQ(tracker.stats().objects, 32);
  ASSERT_EQ(results.size(), 5u);
  std::map<size_t, std::set<int>> ids;
  for (const auto& r : results) {
    EXPECT_EQ(r.objects.size(), 32u) << "frame " << r.index;
    for (size_t k = 0; k < colours.size(); ++k) {
      const auto [x0, y0] = corner(k, r.index);
      const int cx = x0 + kSide / 2, cy = y0 + kSide / 2;
      int on_centre = 0;
      for (const auto& o : r.objects)
        if (o.mask.at(cx, cy)) ids[k].insert(o.id), ++on_centre;
      EXPECT_EQ(on_centre, 1) << "square " << k << " on frame " << r.index;
    }
  }
  std::set<int> all;
  for (const auto& [k, set] : ids) {
    EXPECT_EQ(set.size(), 1u) << "square " << k << " changed its id";
    all.insert(set.begin(), set.end());
  }
  EXPECT_EQ(all.size(), 32u) << "one id per square";
}

// SAM 3.1 packs objects that start on later frames into free slots of a bucket
// (pack_new_objects, docs/video.md "Buckets"): on the scene, green (frame 8) and yellow
// (frame 14) join red and blue's bucket, so every frame runs one memory attention where a
// bucket per start frame ran up to three; green keeps its id from its start, through the
// frames where its start memory is in the bank (the 6 after frame 8), and after it has left.
TEST(VideoTracker, LaterObjectsJoinTheFirstBucketAndKeepTheirIdsAfterTheJoinFrameLeavesTheBank) {
  const auto green = test::scene()[1], yellow = test::scene()[3];
  std::map<bool, VideoTrackerStats> stats;
  for (bool pack : {true, false}) {
    VideoTrackerOptions options;
    options.recondition_every = 0;  // reconditioning makes conditioning frames of its own
    options.pack_new_objects = pack;
    VideoTracker tracker(video_model(), {.texts = {"car"}}, options);
    const auto results = run(tracker);
    ASSERT_EQ(results.size(), static_cast<size_t>(test::kFrames));
    std::set<int> green_early, green_late, yellow_ids;
    for (const auto& r : results) {
      const int g = id_at_centre(r, green), y = id_at_centre(r, yellow);
      if (g >= 0) (r.index <= 8 + 6 ? green_early : green_late).insert(g);
      if (y >= 0) yellow_ids.insert(y);
    }
    EXPECT_EQ(green_early.size(), 1u) << "pack " << pack;
    EXPECT_EQ(green_late, green_early) << "green's id after its join frame left the bank, pack " << pack;
    EXPECT_FALSE(green_early.contains(0)) << "green found on every frame it is visible, pack " << pack;
    EXPECT_EQ(yellow_ids.size(), 1u) << "pack " << pack;
    EXPECT_FALSE(yellow_ids.contains(0)) << "pack " << pack;
    stats[pack] = tracker.stats();
  }
  std::printf("memory attentions over %d frames: %lld packed, %lld a bucket per start frame\n", test::kFrames,
              static_cast<long long>(stats[true].bucket_frames), static_cast<long long>(stats[false].bucket_frames));
  EXPECT_EQ(stats[true].objects, 4);
  EXPECT_EQ(stats[true].packed, 2) << "green and yellow";
  EXPECT_EQ(stats[true].buckets, 1);
  EXPECT_EQ(stats[true].bucket_frames, test::kFrames - 1) << "one memory attention on every frame after the first";
  EXPECT_EQ(stats[false].packed, 0);
  EXPECT_EQ(stats[false].buckets, 3) << "a bucket per start frame";
  EXPECT_GT(stats[false].bucket_frames, stats[true].bucket_frames + 2 * 12);
  EXPECT_EQ(stats[true].conditioning_frames, 1) << "a join frame is no conditioning frame: the bucket keeps its first";
  EXPECT_EQ(stats[false].conditioning_frames, 3);
}

TEST(VideoTracker, AnAbsentConceptFindsNothing) {
  VideoTracker tracker(video_model(), {.texts = {"purple"}});
  for (const auto& r : run(tracker, 6)) EXPECT_TRUE(r.objects.empty());
}

TEST(VideoTracker, AClickedObjectIsFollowedFromItsFrame) {
  const auto green = test::scene()[1];
  const auto at = *test::where(green, 10);
  VideoTracker tracker(video_model(), {.objects = {{10, {{(at[0] + at[2]) / 2.0f, (at[1] + at[3]) / 2.0f}}, std::nullopt}}});
  const auto results = run(tracker);
  ASSERT_EQ(results.size(), static_cast<size_t>(test::kFrames));
  for (const auto& r : results) {
    if (r.index < 10) {
      EXPECT_TRUE(r.objects.empty()) << "frame " << r.index;
      continue;
    }
    ASSERT_EQ(r.objects.size(), 1u) << "frame " << r.index << ": the clicked object is never dropped";
    EXPECT_EQ(r.objects[0].id, 1);
    EXPECT_EQ(r.objects[0].prompt, 0);
    EXPECT_EQ(id_at_centre(r, green), 1) << "frame " << r.index;
  }
}

// VideoObject::prompt: texts first, then one prompt per clicked or boxed object (the labels
// object1, object2, ... of the outputs), not one for all of them.
TEST(VideoTracker, EachClickedOrBoxedObjectIsAPromptOfItsOwn) {
  const auto red = test::scene()[0], blue = test::scene()[2];
  const auto r0 = *test::where(red, 0), b2 = *test::where(blue, 2);
  VideoTracker tracker(video_model(), {.texts = {"purple"},
                                       .objects = {{0, {{(r0[0] + r0[2]) / 2.0f, (r0[1] + r0[3]) / 2.0f}}, std::nullopt},
                                                   {2, {}, Box{b2[0] - 2.0f, b2[1] - 2.0f, b2[2] + 2.0f, b2[3] + 2.0f}}}});
  const auto results = run(tracker, 6);
  for (const auto& r : results) {
    ASSERT_EQ(r.objects.size(), r.index < 2 ? 1u : 2u) << "frame " << r.index;
    for (const auto& o : r.objects) {
      EXPECT_EQ(o.prompt, o.id) << "frame " << r.index << ": object " << o.id << " (the clicked red one is 1, the boxed blue one 2)";
    }
  }
}

TEST(VideoTracker, ABoxedObjectAndAConceptShareTheFrames) {
  const auto blue = test::scene()[2];
  const auto at = *test::where(blue, 0);
  VideoTrackerOptions options;
  options.hotstart_delay = 4;
  options.hotstart_unmatched = 2;
  options.hotstart_duplicate = 2;
  VideoTracker tracker(video_model(), {.texts = {"car"}, .objects = {{0, {}, Box{at[0] - 2.0f, at[1] - 2.0f, at[2] + 2.0f, at[3] + 2.0f}}}},
                       options);
  const auto results = run(tracker, 8);
  for (const auto& r : results) {
    int boxed = 0;
    for (const auto& o : r.objects) boxed += o.prompt == 1;
    EXPECT_EQ(boxed, 1) << "frame " << r.index;
    EXPECT_EQ(r.objects.size(), 2u) << "red by the concept and blue by the box (the concept does not start blue again), frame " << r.index;
  }
}

// A box on a square the concept already tracks, on a later frame: the square is shown on every
// frame, the concept's object before the box and the boxed object from its frame on (the
// concept's track went unconfirmed under a detection "over two tracks", and the output delay
// hid it on frames 0 and 1 as well).
TEST(VideoTracker, ABoxOnAConceptsObjectTakesItOverFromItsFrameWithoutErasingTheFramesBefore) {
  const auto red = test::scene()[0];
  const auto at = *test::where(red, 2);
  VideoTracker tracker(video_model(),
                       {.texts = {"car"}, .objects = {{2, {}, Box{at[0] - 2.0f, at[1] - 2.0f, at[2] + 2.0f, at[3] + 2.0f}}}});
  const auto results = run(tracker, 10);
  ASSERT_EQ(results.size(), 10u);
  std::set<int> concept_ids;
  for (const auto& r : results) {
    const int id = id_at_centre(r, red);
    ASSERT_GT(id, 0) << "frame " << r.index << ": nothing on the red square";
    int on_red = 0, prompt = -1;
    for (const auto& o : r.objects) {
      const auto b = *test::where(red, static_cast<int>(r.index));
      if (o.box.x0 < b[2] && o.box.x1 > b[0] && o.box.y0 < b[3] && o.box.y1 > b[1]) ++on_red, prompt = o.prompt;
    }
    EXPECT_EQ(on_red, 1) << "frame " << r.index << ": one object on the red square";
    EXPECT_EQ(prompt, r.index < 2 ? 0 : 1) << "frame " << r.index << ": car before the box, object1 from it";
    if (r.index < 2) concept_ids.insert(id);
  }
  EXPECT_EQ(concept_ids.size(), 1u) << "one concept object on frames 0 and 1";
}

TEST(VideoTracker, BadInputGetsTypedErrors) {
  auto code = [](auto&& call) {
    try {
      call();
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::kIo;  // no error at all (never thrown by these calls)
  };
  EXPECT_EQ(code([] { VideoTracker t(video_model(), {}); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code([] { VideoTracker t(video_model(), {.texts = {"  "}}); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code([] {
              VideoTracker t(video_model(), {.texts = {"car"}});
              t.finish();
            }),
            ErrorCode::kInvalidArgument)
      << "empty video";
  EXPECT_EQ(code([] { VideoTracker t(video_model(), {.texts = {"car"}}, {.recondition_every = -1}); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code([] { VideoTracker t(video_model(), {.texts = {"car"}}, {.fill_hole_area = -3}); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code([] { VideoTracker t(video_model(), {.texts = {"car"}}, {.shrinkage_min_ratio = 1.5f}); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code([] {
              VideoTracker t(video_model(), {.texts = {"car"}});
              t.push(test::frame_of(0));
              auto f = test::frame_of(1);
              f.image.width = 80;
              f.image.rgb.resize(80 * test::kHeight * 3);
              t.push(f);
            }),
            ErrorCode::kInvalidArgument)
      << "a frame of another size";
  EXPECT_EQ(code([] {
              VideoTracker t(video_model(), {.objects = {{0, {{500, 10}}, std::nullopt}}});
              t.push(test::frame_of(0));
            }),
            ErrorCode::kInvalidArgument)
      << "a click outside the frame";
  EXPECT_EQ(code([] {
              VideoTracker t(video_model(), {.objects = {{5, {{500, 10}}, std::nullopt}}});
              t.push(test::frame_of(0));  // refused here, not after tracking frames 0 to 4
            }),
            ErrorCode::kInvalidArgument)
      << "a click outside a later frame is refused on the first";
  EXPECT_EQ(code([] {
              VideoTracker t(video_model(), {.objects = {{40, {{10, 10}}, std::nullopt}}});
              t.push(test::frame_of(0));
              t.finish();
            }),
            ErrorCode::kInvalidArgument)
      << "a prompt on a frame the video never reaches";
  EXPECT_EQ(code([] {
              VideoTracker t(video_model(), {.objects = {{1, {{10, 10}}, std::nullopt}}});
              t.push(test::frame_of(0));
              t.push(test::frame_of(2));
            }),
            ErrorCode::kInvalidArgument)
      << "a prompt on a skipped frame";
  EXPECT_EQ(code([] {
              VideoTracker t(video_model(), {.texts = {"car"}});
              t.push(test::frame_of(3));
              t.push(test::frame_of(3));
            }),
            ErrorCode::kInvalidArgument)
      << "frames out of order";
  EXPECT_EQ(code([] {
              auto image_model = Model::load(std::string(SAM3_TEST_MODELS_DIR) + "/usls");
              VideoTracker t(image_model, {.texts = {"car"}});
            }),
            ErrorCode::kModelMismatch)
      << "not the SAM 3.1 bundle";
}

}  // namespace
}  // namespace sam3
