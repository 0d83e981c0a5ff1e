// The concept-tracking host rules case by case (src/video/concept_book.h), on hand-made 32x32
// masks: association, boundary suppression, hot-start removal, keep-alive, duplicates,
// confirmation, occlusion suppression, clicked objects. The expected values are SAM 3.1's
// (sam3_multiplex_base.py and the sam3_video_base.py functions it calls), named per test.
#include <gtest/gtest.h>

#include "pure/video/concept_book.h"

namespace sam3::pure::video {
namespace {

constexpr int kSide = 32;

BinaryMask square(int x0, int y0, int x1, int y1) {
  BinaryMask m{kSide, kSide, std::vector<std::uint8_t>(kSide * kSide)};
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) m.bits[y * kSide + x] = 1;
  return m;
}
BinaryMask nothing() { return square(0, 0, 0, 0); }

Detection det(int x0, int y0, int x1, int y1, float score) {
  return {square(x0, y0, x1, y1), score, (x0 + x1) / 2.0f / kSide, (y0 + y1) / 2.0f / kSide};
}

VideoTrackerOptions defaults() { return {}; }

TEST(VideoMasks, IomIsOverTheSmallerMask) {
  EXPECT_FLOAT_EQ(mask_iom(square(0, 0, 4, 4), square(0, 0, 8, 8)), 1.0f);
  EXPECT_FLOAT_EQ(mask_iou(square(0, 0, 4, 4), square(0, 0, 8, 8)), 16.0f / 64.0f);
  EXPECT_FLOAT_EQ(mask_iom(square(0, 0, 4, 4), nothing()), 0.0f);
}

TEST(VideoMasks, NmsByIomKeepsTheBestOfNestedMasks) {
  const std::vector<BinaryMask> masks = {square(0, 0, 4, 4), square(0, 0, 10, 10), square(20, 20, 24, 24)};
  const auto kept = nms_by_iom(masks, {0.5f, 0.9f, 0.6f}, 0.1f);
  EXPECT_EQ(kept, (std::vector<int>{1, 2}));  // the small one lies inside the better big one
}

// _associate_det_trk's "No tracklets" branch: is_new_det = det_scores >= new_det_thresh, with
// no det_keep (so no boundary margin).
TEST(ConceptBook, WithoutTracksTheNewObjectThresholdStillApplies) {
  ConceptBook book(defaults());
  int next = 1;
  const auto plan = book.step(0, {det(4, 4, 10, 10, 0.9f), det(15, 15, 20, 20, 0.45f), det(0, 20, 1, 24, 0.7f)}, {}, next);
  EXPECT_EQ(plan.new_detections, (std::vector<int>{0, 2})) << "0.45 < 0.65 starts nothing; the border one (centre x 0.016) does";
  EXPECT_EQ(plan.new_ids, (std::vector<int>{1, 2}));
  EXPECT_EQ(next, 3);
  VideoTrackerOptions low;
  low.new_object_threshold = 0.4f;
  ConceptBook all(low);
  EXPECT_EQ(all.step(0, {det(4, 4, 10, 10, 0.9f), det(15, 15, 20, 20, 0.45f)}, {}, next).new_ids.size(), 2u);
}

TEST(ConceptBook, AssociationByIomDecidesWhatIsNew) {
  ConceptBook book(defaults());
  int next = 5;
  const std::vector<TrackMask> tracks = {{1, square(4, 4, 12, 12)}};
  const auto plan = book.step(3,
                              {det(10, 10, 14, 14, 0.9f),  // IoM 4/16 with the track: matched, not new
                               det(20, 20, 26, 26, 0.9f),  // alone, high: new
                               det(20, 2, 26, 8, 0.6f)},   // alone, below the new-object threshold
                              tracks, next);
  EXPECT_EQ(plan.new_detections, (std::vector<int>{1}));
  EXPECT_EQ(plan.new_ids, (std::vector<int>{5}));
  EXPECT_TRUE(plan.matched.contains(1));
}

// run_backbone_and_detection: pos_pred_mask & keep (_suppress_detections_close_to_boundary);
// _associate_det_trk_compilable zeroes the masks of detections not kept before matching.
TEST(ConceptBook, DetectionsAtTheBorderAreDroppedBeforeMatching) {
  ConceptBook book(defaults());
  int next = 1;
  ASSERT_EQ(book.step(0, {det(0, 10, 3, 14, 0.9f)}, {}, next).new_ids, (std::vector<int>{1}));
  const std::vector<TrackMask> tracks = {{1, square(0, 10, 3, 14)}};
  auto plan = book.step(1, {det(0, 10, 1, 14, 0.9f), det(0, 20, 1, 24, 0.9f)}, tracks, next);  // centres x = 0.5/32 < 0.025
  EXPECT_TRUE(plan.new_ids.empty());
  EXPECT_FALSE(plan.matched.contains(1)) << "a border detection keeps no track alive";
  for (int f = 2; f <= 8; ++f) plan = book.step(f, {det(0, 10, 1, 14, 0.9f)}, tracks, next);
  EXPECT_TRUE(plan.removed.contains(1)) << "unmatched 8 times within its hot-start window although a detection covered it";
  VideoTrackerOptions off;
  off.boundary_margin = 0;
  ConceptBook open(off);
  next = 1;
  open.step(0, {det(0, 10, 3, 14, 0.9f)}, {}, next);
  plan = open.step(1, {det(0, 10, 1, 14, 0.9f), det(0, 20, 1, 24, 0.9f)}, tracks, next);
  EXPECT_TRUE(plan.matched.contains(1));
  EXPECT_EQ(plan.new_ids.size(), 1u);
}

TEST(ConceptBook, HotStartRemovesATrackUnmatchedWithinItsWindow) {
  ConceptBook book(defaults());
  int next = 1;
  ASSERT_EQ(book.step(0, {det(4, 4, 10, 10, 0.9f)}, {}, next).new_ids, (std::vector<int>{1}));
  const std::vector<TrackMask> tracks = {{1, square(4, 4, 10, 10)}};
  for (int f = 1; f <= 7; ++f) {
    const auto plan = book.step(f, {}, tracks, next);
    EXPECT_TRUE(plan.removed.empty()) << "frame " << f;
    EXPECT_TRUE(plan.suppressed.empty()) << "SAM 3.1 hides nothing by keep-alive, frame " << f;
  }
  const auto plan = book.step(8, {}, tracks, next);  // the 8th unmatched frame, 8 < 15 frames after its start
  EXPECT_TRUE(plan.removed.contains(1));
  EXPECT_FALSE(plan.suppressed.contains(1));
  EXPECT_TRUE(book.removed().contains(1));
}

// _process_hotstart_gpu: trk_keep_alive +1 matched / -1 otherwise, clamped; its to_suppress
// is returned but run_tracker_update_planning_phase never uses it, so SAM 3.1 hides nothing by
// keep-alive. keep_alive_suppression applies it (as SAM3's _process_hotstart did).
TEST(ConceptBook, AnOldTrackIsNeverRemovedAndHiddenOnlyWithKeepAliveSuppression) {
  for (const bool suppression : {false, true}) {
    VideoTrackerOptions o;
    o.keep_alive_suppression = suppression;
    ConceptBook book(o);
    int next = 1;
    book.step(0, {det(4, 4, 10, 10, 0.9f)}, {}, next);
    const std::vector<TrackMask> tracks = {{1, square(4, 4, 10, 10)}};
    for (int f = 1; f <= 20; ++f) book.step(f, {det(4, 4, 10, 10, 0.9f)}, tracks, next);  // matched: credit up to 8
    EXPECT_EQ(book.keep_alive(1), 8);
    for (int f = 21; f <= 36; ++f) {
      const auto plan = book.step(f, {}, tracks, next);
      EXPECT_TRUE(plan.removed.empty()) << "started before the window: never removed, frame " << f;
      EXPECT_EQ(plan.suppressed.contains(1), suppression && f >= 28) << "credit 8 spent by the 8th unmatched frame, frame " << f;
    }
    EXPECT_EQ(book.keep_alive(1), -4);  // floor
    const auto plan = book.step(37, {det(4, 4, 10, 10, 0.9f)}, tracks, next);
    EXPECT_EQ(plan.suppressed.contains(1), suppression) << "credit -3 after one match";
  }
}

TEST(ConceptBook, EmptyTracksLoseCreditButAreNotUnmatched) {
  VideoTrackerOptions o;
  o.keep_alive_suppression = true;
  ConceptBook book(o);
  int next = 1;
  book.step(0, {det(4, 4, 10, 10, 0.9f)}, {}, next);
  for (int f = 1; f <= 10; ++f) {
    const auto plan = book.step(f, {}, {{1, nothing()}}, next);
    EXPECT_TRUE(plan.removed.empty()) << "an empty (occluded) track is not unmatched, frame " << f;
    EXPECT_TRUE(plan.suppressed.contains(1)) << "but its credit goes: -1 every frame, frame " << f;
  }
  EXPECT_EQ(book.keep_alive(1), -4);
  o.decrease_keep_alive_when_empty = true;
  ConceptBook twice(o);
  next = 1;
  twice.step(0, {det(4, 4, 10, 10, 0.9f)}, {}, next);
  twice.step(1, {}, {{1, nothing()}}, next);
  EXPECT_EQ(twice.keep_alive(1), -2) << "decrease_trk_keep_alive_for_empty_masklets takes one more";
}

// _process_hotstart_gpu: overlap_pair_counts over the pairs of tracks one detection matches
// (im_mask), for the later-started one (is_earlier_matrix).
TEST(ConceptBook, HotStartRemovesTheLaterOfTwoDuplicates) {
  ConceptBook book(defaults());
  int next = 1;
  book.step(0, {det(4, 4, 12, 12, 0.9f)}, {}, next);                                                                           // id 1
  const auto started = book.step(1, {det(4, 4, 12, 12, 0.9f), det(20, 20, 28, 28, 0.9f)}, {{1, square(4, 4, 12, 12)}}, next);  // id 2
  ASSERT_EQ(started.new_ids, (std::vector<int>{2}));
  // Track 2 drifted half onto track 1's object: the detection covers track 1 (IoM 1) and a
  // third of track 2 (IoM 16/48), so it matches both.
  const std::vector<TrackMask> tracks = {{1, square(4, 4, 12, 12)}, {2, square(10, 4, 16, 12)}};
  for (int f = 2; f <= 8; ++f) EXPECT_TRUE(book.step(f, {det(4, 4, 12, 12, 0.9f)}, tracks, next).removed.empty());
  const auto plan = book.step(9, {det(4, 4, 12, 12, 0.9f)}, tracks, next);  // 8th shared frame
  EXPECT_EQ(plan.removed, (std::set<int>{2}));
}

// _associate_det_trk_compilable zeroes the row of a detection reaching iom_thresh_recondition
// with more than one track before im_mask: it matches neither, so they are not duplicates and
// lose their confirmation streak, though neither is unmatched (trk_is_matched is read before).
TEST(ConceptBook, ADetectionCoveringTwoTracksMatchesNeither) {
  ConceptBook book(defaults());
  int next = 1;
  book.step(0, {det(4, 4, 12, 12, 0.9f)}, {}, next);                                                      // id 1
  book.step(1, {det(4, 4, 12, 12, 0.9f), det(20, 20, 28, 28, 0.9f)}, {{1, square(4, 4, 12, 12)}}, next);  // id 2
  const std::vector<TrackMask> tracks = {{1, square(4, 4, 12, 12)}, {2, square(5, 5, 12, 12)}};
  FramePlan plan;
  for (int f = 2; f <= 20; ++f) {
    plan = book.step(f, {det(4, 4, 12, 12, 0.9f)}, tracks, next);
    EXPECT_TRUE(plan.removed.empty() && plan.matched.empty()) << "frame " << f;
  }
  EXPECT_TRUE(plan.unconfirmed.contains(1) && plan.unconfirmed.contains(2));
  VideoTrackerOptions o;
  o.recondition_iom = 1.01f;  // no pair ambiguous: both matched, the later one a duplicate
  ConceptBook loose(o);
  next = 1;
  loose.step(0, {det(4, 4, 12, 12, 0.9f)}, {}, next);
  loose.step(1, {det(4, 4, 12, 12, 0.9f), det(20, 20, 28, 28, 0.9f)}, {{1, square(4, 4, 12, 12)}}, next);
  for (int f = 2; f <= 9; ++f) plan = loose.step(f, {det(4, 4, 12, 12, 0.9f)}, tracks, next);
  EXPECT_EQ(plan.removed, (std::set<int>{2}));
}

TEST(ConceptBook, ObjectsStartedOnOneFrameAreNeverDuplicates) {
  ConceptBook book(defaults());
  int next = 1;
  ASSERT_EQ(book.step(0, {det(4, 4, 12, 12, 0.9f), det(20, 20, 28, 28, 0.9f)}, {}, next).new_ids.size(), 2u);
  const std::vector<TrackMask> tracks = {{1, square(4, 4, 12, 12)}, {2, square(8, 4, 14, 12)}};
  for (int f = 1; f <= 12; ++f) {
    // One detection over both tracks: an ambiguous match (neither is matched), yet neither is
    // unmatched (the raw overlaps) nor a duplicate (same start frame): none is ever removed.
    const auto plan = book.step(f, {det(4, 4, 12, 12, 0.9f)}, tracks, next);
    EXPECT_TRUE(plan.removed.empty()) << "frame " << f;
  }
}

TEST(ConceptBook, ConfirmationNeedsThreeConsecutiveDetections) {
  ConceptBook book(defaults());
  int next = 1;
  auto plan = book.step(0, {det(4, 4, 10, 10, 0.9f)}, {}, next);
  EXPECT_TRUE(plan.unconfirmed.contains(1));  // its start counts as the first
  const std::vector<TrackMask> tracks = {{1, square(4, 4, 10, 10)}};
  plan = book.step(1, {}, tracks, next);  // a miss resets the count
  EXPECT_TRUE(plan.unconfirmed.contains(1));
  plan = book.step(2, {det(4, 4, 10, 10, 0.9f)}, tracks, next);
  plan = book.step(3, {det(4, 4, 10, 10, 0.9f)}, tracks, next);
  EXPECT_TRUE(plan.unconfirmed.contains(1));
  plan = book.step(4, {det(4, 4, 10, 10, 0.9f)}, tracks, next);
  EXPECT_FALSE(plan.unconfirmed.contains(1));
  plan = book.step(5, {}, tracks, next);
  EXPECT_FALSE(plan.unconfirmed.contains(1)) << "confirmed stays confirmed";
}

TEST(ConceptBook, TheMoreRecentlyOccludedOfTwoOverlappingTracksIsSuppressed) {
  ConceptBook book(defaults());
  int next = 1;
  book.step(0, {det(4, 4, 10, 10, 0.9f), det(20, 20, 26, 26, 0.9f)}, {}, next);  // ids 1, 2
  // Frame 1: track 2 is occluded (empty mask).
  book.step(1, {det(4, 4, 10, 10, 0.9f)}, {{1, square(4, 4, 10, 10)}, {2, nothing()}}, next);
  // Frame 2: track 2 reappears on top of track 1.
  auto plan = book.step(2, {}, {{1, square(4, 4, 10, 10)}, {2, square(4, 4, 10, 11)}}, next);
  EXPECT_EQ(plan.occluded_suppressed, (std::set<int>{}))
      << "track 1 was never occluded, so it cannot suppress (the official rule needs both records)";
  VideoTrackerOptions o;
  ConceptBook both(o);
  next = 1;
  both.step(0, {det(4, 4, 10, 10, 0.9f), det(20, 20, 26, 26, 0.9f)}, {}, next);
  both.step(1, {}, {{1, nothing()}, {2, square(20, 20, 26, 26)}}, next);  // 1 occluded at frame 1
  both.step(2, {}, {{1, square(4, 4, 10, 10)}, {2, nothing()}}, next);    // 2 occluded at frame 2
  plan = both.step(3, {}, {{1, square(4, 4, 10, 10)}, {2, square(4, 4, 10, 11)}}, next);
  EXPECT_EQ(plan.occluded_suppressed, (std::set<int>{2}));
}

// _suppress_overlapping_based_on_recent_occlusion: last_occluded = ALWAYS_OCCLUDED where
// to_remove_mask, whatever the record.
TEST(ConceptBook, ATrackRemovedOnThisFrameCountsAsAlwaysOccluded) {
  VideoTrackerOptions o;
  o.hotstart_delay = 6;
  o.hotstart_unmatched = 2;
  o.hotstart_duplicate = 2;
  ConceptBook book(o);
  int next = 1;
  book.step(0, {det(4, 4, 10, 10, 0.9f)}, {}, next);  // id 1
  for (int f = 1; f <= 4; ++f) book.step(f, {det(4, 4, 10, 10, 0.9f)}, {{1, square(4, 4, 10, 10)}}, next);
  ASSERT_EQ(book.step(5, {det(4, 4, 10, 10, 0.9f), det(20, 20, 26, 26, 0.9f)}, {{1, square(4, 4, 10, 10)}}, next).new_ids,
            (std::vector<int>{2}));
  book.step(6, {det(4, 4, 10, 10, 0.9f)}, {{1, square(4, 4, 10, 10)}, {2, nothing()}}, next);      // 2 occluded at 6
  book.step(7, {det(20, 20, 26, 26, 0.9f)}, {{1, nothing()}, {2, square(20, 20, 26, 26)}}, next);  // 1 occluded at 7
  const std::vector<TrackMask> tracks = {{1, square(4, 4, 10, 10)}, {2, square(4, 4, 10, 11)}};    // overlapping, unmatched
  auto plan = book.step(8, {}, tracks, next);
  EXPECT_EQ(plan.occluded_suppressed, (std::set<int>{1})) << "1 was occluded more recently";
  plan = book.step(9, {}, tracks, next);
  ASSERT_EQ(plan.removed, (std::set<int>{2})) << "2 unmatched twice within its window; 1 started before it";
  EXPECT_EQ(plan.occluded_suppressed, (std::set<int>{2})) << "removed now: always occluded, its record (6) ignored";
}

TEST(ConceptBook, TheOcclusionRuleSeesReconditionedMasks) {
  // As above, but on frame 3 reconditioning moved track 2's mask off track 1: matching used
  // the tracker's masks, the occlusion rule (run after reconditioning officially) the new ones.
  ConceptBook book(defaults());
  int next = 1;
  book.step(0, {det(4, 4, 10, 10, 0.9f), det(20, 20, 26, 26, 0.9f)}, {}, next);
  book.step(1, {}, {{1, nothing()}, {2, square(20, 20, 26, 26)}}, next);
  book.step(2, {}, {{1, square(4, 4, 10, 10)}, {2, nothing()}}, next);
  const std::vector<TrackMask> tracked = {{1, square(4, 4, 10, 10)}, {2, square(4, 4, 10, 11)}};
  const std::vector<TrackMask> reconditioned = {{1, square(4, 4, 10, 10)}, {2, square(20, 20, 26, 26)}};
  const auto plan = book.step(3, {}, tracked, next, -1, &reconditioned);
  EXPECT_TRUE(plan.occluded_suppressed.empty());
}

TEST(ConceptBook, ClickedObjectsAreNeverRemovedSuppressedOrUnconfirmed) {
  ConceptBook book(defaults());
  int next = 2;
  book.add_user_object(1, 0);
  const std::vector<TrackMask> tracks = {{1, square(4, 4, 10, 10)}};
  for (int f = 0; f <= 20; ++f) {
    const auto plan = book.step(f, {}, tracks, next);
    EXPECT_TRUE(plan.removed.empty() && plan.suppressed.empty() && plan.unconfirmed.empty()) << "frame " << f;
  }
  // A detection over it starts nothing.
  EXPECT_TRUE(book.step(21, {det(4, 4, 10, 10, 0.9f)}, tracks, next).new_ids.empty());
}

// SAM 3.1 (Sam3MultiplexTrackingWithInteractivity) tracks a clicked object apart from the
// concept's rules (propagation_partial) and merges it with the concept's cached outputs, so a
// clicked object lying beside a concept track under one detection takes nothing from it: the
// track stays matched and is confirmed (it lost its confirmation, and so every frame it was on,
// to a detection "over two tracks" that matched neither).
TEST(ConceptBook, AClickedObjectMakesNoDetectionAmbiguous) {
  ConceptBook book(defaults());
  int next = 1;
  book.add_user_object(9, 0);
  const TrackMask clicked{9, square(4, 10, 10, 16)};  // under the detection at IoM >= 0.5, IoU with the track < 0.7
  ASSERT_EQ(book.step(0, {det(4, 4, 10, 10, 0.9f)}, {clicked}, next).new_ids, (std::vector<int>{1}));
  const std::vector<TrackMask> tracks = {{1, square(4, 4, 10, 10)}, clicked};
  for (int f = 1; f <= 2; ++f) {
    const auto plan = book.step(f, {det(4, 4, 10, 16, 0.9f)}, tracks, next);
    EXPECT_TRUE(plan.matched.contains(1)) << "frame " << f;
    EXPECT_TRUE(plan.new_ids.empty()) << "frame " << f;
  }
  EXPECT_TRUE(book.confirmed(1)) << "matched on its 3 first frames";
}

// A box or click on an object a concept already tracks takes it over: the concept's track ends
// on the click's frame (its earlier frames stay shown: it is neither removed by hot-start, which
// hides every held frame, nor left unconfirmed), and the clicked object is shown from there on.
TEST(ConceptBook, AnObjectClickedOnAConceptTrackEndsItThereWithoutHidingItsEarlierFrames) {
  ConceptBook book(defaults());
  int next = 1;
  ASSERT_EQ(book.step(0, {det(4, 4, 10, 10, 0.9f)}, {}, next).new_ids, (std::vector<int>{1}));
  book.step(1, {det(4, 4, 10, 10, 0.9f)}, {{1, square(4, 4, 10, 10)}}, next);
  book.add_user_object(next++, 2);
  const std::vector<TrackMask> tracks = {{1, square(4, 4, 10, 10)}, {2, square(4, 4, 10, 11)}, {5, square(20, 20, 26, 26)}};
  book.add_user_object(5, 2);  // clicked on this frame too, away from the track: ends nothing
  const auto plan = book.step(2, {det(4, 4, 10, 10, 0.9f)}, tracks, next);
  EXPECT_EQ(plan.ended, (std::set<int>{1}));
  EXPECT_TRUE(plan.removed.empty()) << "removal would hide it on frames 0 and 1";
  EXPECT_FALSE(plan.unconfirmed.contains(1)) << "frame 0 reads its confirmation on frame 2";
  EXPECT_TRUE(plan.new_ids.empty());
  // A concept track that drifts under an object clicked on an earlier frame is left alone; so is
  // one only partly under a new one (IoU < 0.7), e.g. a person whose hat was boxed.
  ConceptBook drift(defaults());
  next = 1;
  drift.add_user_object(7, 0);
  drift.step(0, {det(4, 4, 10, 10, 0.9f)}, {{7, square(20, 20, 26, 26)}}, next);
  EXPECT_TRUE(drift.step(1, {}, {{1, square(20, 20, 26, 26)}, {7, square(20, 20, 26, 26)}}, next).ended.empty());
  ConceptBook part(defaults());
  next = 1;
  part.step(0, {det(4, 4, 20, 20, 0.9f)}, {}, next);
  part.add_user_object(8, 1);
  EXPECT_TRUE(part.step(1, {}, {{1, square(4, 4, 20, 20)}, {8, square(4, 4, 10, 10)}}, next).ended.empty());
}

TEST(ConceptBook, TheObjectLimitKeepsTheBestNewDetections) {
  ConceptBook book(defaults());
  int next = 1;
  const auto plan = book.step(0, {det(2, 2, 6, 6, 0.66f), det(10, 10, 14, 14, 0.9f), det(20, 20, 24, 24, 0.7f)}, {}, next, 2);
  EXPECT_EQ(plan.new_detections, (std::vector<int>{1, 2}));
}

}  // namespace
}  // namespace sam3::pure::video
