// Video tracking on SAM 3.1's public ONNX bundle (ailia-models segment-anything-3.1): every
// instance of a concept in every frame with ids that stay (text prompts), and objects clicked
// or boxed on a given frame followed through the video (click prompts), streaming.
//
//   auto model = sam3::Model::load("models/sam3.1");          // the bundle's folder
//   sam3::VideoTracker tracker(model, {.texts = {"car"}});
//   while (auto frame = source.next()) {
//     for (auto& result : tracker.push(*frame)) sink.write(..., result);  // final frames only
//   }
//   for (auto& result : tracker.finish()) sink.write(..., result);
//
// Results come out in frame order, `hotstart_delay` frames behind the input (an object that
// dies or duplicates another within that window is removed before it is ever shown). Memory
// is bounded by the memory bank (per bucket of 16 objects: 1 conditioning and 6 recent
// frame memories, 16 frames of object pointers), not by the video's length. docs/video.md has the per-frame loop and which
// reference (SAM 3.1's official code or ailia's driver) each rule follows.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sam3/interactive.h"
#include "sam3/model.h"
#include "sam3/stop_token.h"
#include "sam3/types.h"
#include "sam3/video.h"

namespace sam3 {

// One object to follow, given on one frame (the VideoFrame::index it has in the source).
struct VideoObjectPrompt {
  std::int64_t frame = 0;
  std::vector<PointPrompt> points;  // frame pixels
  std::optional<Box> box;           // frame pixels
};

struct VideoPrompts {
  std::vector<std::string> texts;          // concepts: each finds, starts and drops its own objects
  std::vector<VideoObjectPrompt> objects;  // clicked/boxed objects, kept until the video ends
};

// SAM 3.1's defaults (Sam3MultiplexTrackingWithInteractivity as ailia's driver lists them);
// the official names in comments.
struct VideoTrackerOptions {
  float detection_threshold = 0.4f;  // score_threshold_detection: detections kept for NMS and matching
  float nms_iom = 0.1f;              // det_nms_thresh (intersection over the smaller mask)
  float association_iom = 0.1f;      // assoc_iou_thresh: a detection this close to a track is not new, and matches it
  float track_match_iom = 0.5f;      // trk_assoc_iou_thresh (Sam3MultiplexBase's; ailia: 0.1): a track this close to a detection is matched
  float new_object_threshold = 0.65f;  // new_det_thresh
  int hotstart_delay = 15;             // frames of output delay; 0: none
  int hotstart_unmatched = 8;          // hotstart_unmatch_thresh: removed within the window after this many
  int hotstart_duplicate = 8;          // hotstart_dup_thresh
  // Keep-alive credit: +1 on a frame a detection matches the track, -1 on any other (empty
  // tracks too), within min..max. SAM 3.1 computes it but never hides a track by it (its
  // to_suppress_mask is not used): keep_alive_suppression = true hides a track on frames its
  // credit is <= 0, as SAM3 did (unless suppress_unmatched_only_within_hotstart).
  bool keep_alive_suppression = false;
  bool suppress_unmatched_only_within_hotstart = false;
  int keep_alive_init = 0;                      // init_trk_keep_alive
  int keep_alive_max = 8;                       // max_trk_keep_alive
  int keep_alive_min = -4;                      // min_trk_keep_alive
  bool decrease_keep_alive_when_empty = false;  // decrease_trk_keep_alive_for_empty_masklets: -1 more for an empty track
  float occlusion_overlap_iou = 0.7f;           // suppress_overlapping_based_on_recent_occlusion_threshold; 0: off
  float boundary_margin = 0.025f;               // suppress_det_close_to_boundary's margin; 0: off
  int confirmation_detections = 3;              // masklet_confirmation_consecutive_det_thresh; 0: off
  int max_objects = 0;                          // max_num_objects over all prompts; 0: no limit
  // Reconditioning: every `recondition_every` processed frames (recondition_every_nth_frame;
  // 0: off) a track covered by exactly one detection scoring >= recondition_detection_score
  // at IoM >= recondition_iom (iom_thresh_recondition), with a tracker score (sigmoid) above
  // recondition_track_score, is re-prompted with that detection (both 0.8 are the official
  // HIGH_CONF_THRESH). docs/video.md says what it resets. recondition_iom is also the level at
  // which a detection over several tracks, or a track under several detections, matches none
  // for keep-alive, duplicates and confirmation (the official code uses one threshold for both).
  int recondition_every = 16;
  float recondition_iom = 0.5f;
  float recondition_detection_score = 0.8f;
  float recondition_track_score = 0.8f;
  // Holes and sprinkles of at most this many low-resolution pixels are filled / removed in the
  // tracker's masks, new detections' output masks and reconditioned masks (fill_hole_area:
  // 0 in SAM 3.1, 16 in SAM3).
  int fill_hole_area = 0;
  // Before memory encoding, a mask that the pixel-wise non-overlap of its prompt's objects
  // would shrink below this fraction of its area is suppressed (_suppress_shrinked_masks'
  // shrink_threshold, always on in the official code); 0: off.
  float shrinkage_min_ratio = 0.3f;
  // Objects a detection starts on a later frame go into free (never used) slots of an existing
  // bucket of their prompt, the one with the fewest free slots that holds all of that frame's
  // new objects, as SAM 3.1 does (is_multiplex_dynamic, _tracker_add_new_objects): fewer
  // buckets, so fewer memory-attention, tracking-decoder and memory-encoder calls a frame.
  // false: a new bucket for every frame on which objects start. docs/video.md, "Buckets".
  bool pack_new_objects = true;
  StopToken stop;  // ends push() mid-frame with kCancelled
};

struct VideoTrackerStats {
  std::int64_t frames = 0;   // pushed
  std::int64_t objects = 0;  // ever started
  int live_objects = 0;      // tracked now
  int buckets = 0;           // multiplex buckets now (16 objects each at most)
  // Live objects of a text that started fewer than confirmation_detections frames ago and are
  // not confirmed yet (hidden from the results until they are). After finish(): objects that
  // started too near the video's end (or in a video of fewer frames) to be confirmed, never shown.
  int unconfirmed_objects = 0;
  double encode_ms = 0, detect_ms = 0, track_ms = 0, memory_ms = 0, new_objects_ms = 0, output_ms = 0;  // totals
  std::size_t memory_bank_bytes = 0;  // feature tensors held by the memory banks now
  // The most the memory banks of the buckets now can come to once full (every conditioning,
  // recent and pointer frame held, with the frame features they refer to counted per bucket):
  // what a server that keeps trackers reserves for one (CVAT's tracker sessions).
  std::size_t memory_bank_limit_bytes = 0;
  int conditioning_frames = 0;     // memory frames held as conditioning ones now (1 a bucket: its first)
  std::int64_t reconditioned = 0;  // objects re-prompted by a detection, summed over frames
  std::int64_t shrunk = 0;         // masks suppressed before memory encoding by the area-shrinkage rule (empty ones too)
  std::int64_t packed = 0;         // objects started in free slots of an existing bucket (pack_new_objects)
  std::int64_t bucket_frames = 0;  // memory-attention (and tracking-decoder) calls: one a bucket a frame, summed over frames
};

class VideoTracker {
 public:
  // Throws kInvalidArgument for no prompt, an empty text, an object with neither a positive
  // point nor a box, a negative frame, an option out of range; kModelNotFound / kModelMismatch
  // when the model's folder lacks the bundle's video graphs or they do not fit.
  VideoTracker(std::shared_ptr<const Model> model, VideoPrompts prompts, VideoTrackerOptions options = {});
  ~VideoTracker();
  VideoTracker(const VideoTracker&) = delete;
  VideoTracker& operator=(const VideoTracker&) = delete;

  // Tracks one frame; returns the frames that became final (in order, possibly none).
  // Throws kInvalidArgument for a frame of another size than the first, an index not after
  // the previous one, a click or box outside the frame, a frame past an object prompt's frame
  // that never came; kCancelled when options.stop asks.
  std::vector<VideoFrameResult> push(const VideoFrame& frame);
  // What push checks of every prompt's points and box on the first frame, for frames of this
  // size: a front calls it before it touches anything (a partial run in its output folder).
  // Throws kInvalidArgument naming the object, as push would.
  void check_prompt_places(int width, int height) const;
  // The frames still held back. Throws kInvalidArgument when no frame was pushed (an empty
  // video) or an object prompt's frame never came.
  std::vector<VideoFrameResult> finish();

  VideoTrackerStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sam3
