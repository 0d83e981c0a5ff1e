// Periodic reconditioning (official SAM 3.1: sam3_video_base.py _associate_det_trk_compilable
// with use_iom_recondition, sam3_multiplex_base.py run_tracker_update_planning_phase and
// _recondition_masklets): every `recondition_every` processed frames, a track that exactly one
// confident detection covers (IoM >= recondition_iom, neither of them matching another one at
// that level) and whose tracker score is high is re-prompted with that detection: its mask on
// this frame becomes the detection's where the two disagree, its slot is flagged in this frame's
// memory (which stays a non-conditioning one), its pointer comes from the interactive decoder on
// the detection's mask.
// This file decides which tracks and blends the masks; the tracker does the rest. No ONNX
// Runtime here.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "pure/video/concept_book.h"

namespace sam3::pure::video {

inline bool is_recondition_frame(std::int64_t t, int every) { return every > 0 && t % every == 0; }

// track index -> detection index. `track_scores[i]`: sigmoid of track i's object score on
// this frame, negative for a track that may not be reconditioned (a clicked object, one
// removed on this frame); every track still counts when deciding which matches are ambiguous.
// A detection qualifies with score >= recondition_detection_score, its centre inside the
// boundary margin (SAM 3.1 drops the others before matching), and not being a new object.
std::map<int, int> recondition_matches(const std::vector<Detection>& detections, const std::vector<TrackMask>& tracks,
                                       const std::vector<float>& track_scores, const VideoTrackerOptions& o);

// In place over n logits: where the tracker's and the detection's signs agree the tracker's
// logit stays, elsewhere the detection's is taken.
void blend_recondition(float* track_logits, const float* detection_logits, size_t n);

}  // namespace sam3::pure::video
