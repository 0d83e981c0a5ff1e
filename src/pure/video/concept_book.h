// The host rules of concept tracking for one prompt (no ONNX Runtime): which detections start
// objects, which tracks are matched, kept alive, suppressed, confirmed or removed, frame by
// frame. Follows the official SAM 3.1 code (sam3/model/sam3_multiplex_base.py: _associate_det_trk
// with sam3_video_base.py's _associate_det_trk_compilable, _process_hotstart_gpu,
// _suppress_overlapping_based_on_recent_occlusion, update_masklet_confirmation_status);
// docs/video.md lists where SAM3's code and ailia's driver differ.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "sam3/video_tracker.h"
#include "pure/video/low_res_masks.h"

namespace sam3::pure::video {

struct Detection {
  BinaryMask mask;       // low resolution, the tracker's masks' size
  float score = 0;       // sigmoid(logit) * sigmoid(presence)
  float cx = 0, cy = 0;  // the box's centre, normalized to 0..1
};

struct TrackMask {
  int id = 0;
  BinaryMask mask;  // the tracker's prediction on this frame
};

struct FramePlan {
  std::vector<int> new_detections;    // indices into the frame's detections that start objects
  std::vector<int> new_ids;           // their ids, in the same order
  std::set<int> matched;              // tracks a detection matched
  std::set<int> removed;              // removed on this frame (hot-start): never shown, memory dropped
  std::set<int> ended;                // taken over by an object clicked on this frame: shown until the frame before, memory dropped
  std::set<int> suppressed;           // hidden on this frame (keep-alive spent; only with keep_alive_suppression), still tracked
  std::set<int> occluded_suppressed;  // overlap a less recently occluded track: their masks count as empty
  std::set<int> unconfirmed;          // live objects not yet confirmed after this frame
};

class ConceptBook {
 public:
  explicit ConceptBook(const VideoTrackerOptions& options) : o_(options) {}

  // One frame: `detections` kept by the score threshold and NMS, `tracks` the live objects'
  // predictions in a fixed order. New ids are taken from `next_id`; at most `room` objects
  // start (negative: no limit), the best scores first. `reconditioned`: the same tracks with
  // this frame's reconditioned masks (recondition.h), which the occlusion rule sees (the
  // official code reconditions after matching and before it); null: `tracks`.
  FramePlan step(std::int64_t frame, const std::vector<Detection>& detections, const std::vector<TrackMask>& tracks, int& next_id,
                 int room = -1, const std::vector<TrackMask>* reconditioned = nullptr);

  // An object given by clicks or a box: tracked until the video ends, never removed, suppressed
  // or unconfirmed by the detector's rules, and making no detection ambiguous (SAM 3.1 tracks
  // it apart from them). It blocks detections over it from starting objects, can make a later
  // duplicate of it be removed, and takes over the track it lies on when clicked (`ended`).
  void add_user_object(int id, std::int64_t frame);

  const std::set<int>& removed() const { return removed_; }  // by hot-start or ended, on any frame so far
  int keep_alive(int id) const;
  bool confirmed(int id) const;

 private:
  VideoTrackerOptions o_;
  std::map<int, std::int64_t> first_frame_;
  std::map<int, int> unmatched_frames_;  // frames a non-empty track matched no detection (a total)
  std::map<int, int> keep_alive_;
  std::map<std::pair<int, int>, int> overlap_frames_;  // (earlier-started, later) -> detections matching both, summed over frames
  std::set<int> removed_;
  std::set<int> user_;
  std::map<int, std::int64_t> last_occluded_;
  std::map<int, int> consecutive_detections_;
  std::set<int> confirmed_;
};

}  // namespace sam3::pure::video
