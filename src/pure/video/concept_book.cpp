#include "pure/video/concept_book.h"

#include <algorithm>
#include <numeric>

namespace sam3::pure::video {
namespace {

constexpr std::int64_t kNeverOccluded = -1;
constexpr std::int64_t kAlwaysOccluded = 100000;  // the official sentinel for a track removed by hot-start

bool inside_margin(const Detection& d, float margin) {
  return d.cx > margin && d.cx < 1.0f - margin && d.cy > margin && d.cy < 1.0f - margin;
}

}  // namespace

void ConceptBook::add_user_object(int id, std::int64_t frame) {
  user_.insert(id);
  first_frame_[id] = frame;
  keep_alive_[id] = o_.keep_alive_max;
  confirmed_.insert(id);
}

int ConceptBook::keep_alive(int id) const {
  auto it = keep_alive_.find(id);
  return it == keep_alive_.end() ? 0 : it->second;
}

bool ConceptBook::confirmed(int id) const { return confirmed_.contains(id); }

FramePlan ConceptBook::step(std::int64_t frame, const std::vector<Detection>& detections, const std::vector<TrackMask>& tracks,
                            int& next_id, int room, const std::vector<TrackMask>* reconditioned) {
  FramePlan plan;
  const size_t nd = detections.size(), nt = tracks.size();

  // a) Association (SAM 3.1: sam3_multiplex_base.py _associate_det_trk, sam3_video_base.py
  // _associate_det_trk_compilable), by IoM between binary low-res masks.
  std::vector<std::vector<int>> det_to_tracks(nd);
  std::vector<char> track_matched(nt, 0), track_nonempty(nt, 0);
  for (size_t t = 0; t < nt; ++t) track_nonempty[t] = !tracks[t].mask.empty();
  std::vector<int> new_dets;
  if (nt == 0) {
    // No track ("No tracklets"): every detection at or above the new-object threshold starts
    // an object; the boundary margin is not applied in this branch.
    for (size_t d = 0; d < nd; ++d) {
      if (detections[d].score >= o_.new_object_threshold) new_dets.push_back(static_cast<int>(d));
    }
  } else {
    // Detections whose centre is near the frame's edge are dropped before matching (their
    // masks count as empty): they neither match tracks nor start objects.
    std::vector<std::vector<float>> iom(nd, std::vector<float>(nt, 0.0f));
    for (size_t d = 0; d < nd; ++d) {
      if (o_.boundary_margin > 0 && !inside_margin(detections[d], o_.boundary_margin)) continue;
      for (size_t t = 0; t < nt; ++t) iom[d][t] = mask_iom(detections[d].mask, tracks[t].mask);
    }
    // A track is unmatched when non-empty and no detection reaches track_match_iom; a detection
    // is new when it scores high enough, is kept and reaches association_iom with no track.
    for (size_t d = 0; d < nd; ++d) {
      bool overlaps_any = false;
      for (size_t t = 0; t < nt; ++t) {
        if (iom[d][t] >= o_.track_match_iom) track_matched[t] = 1;
        if (iom[d][t] >= o_.association_iom) overlaps_any = true;
      }
      const bool kept = o_.boundary_margin <= 0 || inside_margin(detections[d], o_.boundary_margin);
      if (kept && detections[d].score >= o_.new_object_threshold && !overlaps_any) new_dets.push_back(static_cast<int>(d));
    }
    // Which tracks a detection matches (keep-alive, duplicates, confirmation) is read after
    // dropping ambiguous pairs at recondition_iom (iom_thresh_recondition): a detection over
    // several tracks matches none, a track under several detections is matched by none. A
    // clicked object makes nothing ambiguous: SAM 3.1 tracks it apart from the concept's rules
    // (its partial propagation), so a concept track it lies on stays matched and confirmed.
    std::vector<int> per_det(nd, 0), per_track(nt, 0);
    for (size_t d = 0; d < nd; ++d)
      for (size_t t = 0; t < nt; ++t)
        if (iom[d][t] >= o_.recondition_iom && !user_.contains(tracks[t].id)) ++per_det[d], ++per_track[t];
    for (size_t d = 0; d < nd; ++d) {
      if (per_det[d] > 1) continue;
      for (size_t t = 0; t < nt; ++t) {
        if (per_track[t] <= 1 && iom[d][t] >= o_.association_iom) det_to_tracks[d].push_back(static_cast<int>(t));
      }
    }
  }
  // b) The object limit keeps the best-scoring new detections (_drop_new_det_with_obj_limit).
  if (room >= 0 && static_cast<int>(new_dets.size()) > room) {
    std::stable_sort(new_dets.begin(), new_dets.end(), [&](int a, int b) { return detections[a].score > detections[b].score; });
    new_dets.resize(room);
    std::sort(new_dets.begin(), new_dets.end());
  }
  plan.new_detections = new_dets;
  for (size_t i = 0; i < new_dets.size(); ++i) plan.new_ids.push_back(next_id++);

  // c) Hot-start (_process_hotstart_gpu): keep-alive credit, removal of tracks unmatched or
  // duplicated within hotstart_delay frames of their start.
  for (int id : plan.new_ids) {
    first_frame_[id] = frame;
    keep_alive_[id] = o_.keep_alive_init;
  }
  for (size_t d = 0; d < nd; ++d) {
    for (int t : det_to_tracks[d]) plan.matched.insert(tracks[t].id);
  }
  for (size_t t = 0; t < nt; ++t) {
    const int id = tracks[t].id;
    if (user_.contains(id)) continue;
    // +1 matched, -1 otherwise (empty tracks too), and -1 more for an empty one if asked.
    int credit = keep_alive_[id] + (plan.matched.contains(id) ? 1 : -1);
    credit = std::clamp(credit, o_.keep_alive_min, o_.keep_alive_max);
    if (!track_nonempty[t] && o_.decrease_keep_alive_when_empty) credit = std::max(o_.keep_alive_min, credit - 1);
    keep_alive_[id] = credit;
    if (track_nonempty[t] && !track_matched[t]) ++unmatched_frames_[id];  // a total, never reset
  }
  const std::int64_t hotstart_start = frame - o_.hotstart_delay;  // started after this: within the window
  for (const auto& [id, count] : unmatched_frames_) {
    if (removed_.contains(id)) continue;
    if (count >= o_.hotstart_unmatched && first_frame_[id] > hotstart_start) plan.removed.insert(id);
  }
  // Duplicates: every pair of tracks matched by one detection, counted for the later-started
  // one when the other started on an earlier frame (objects started together never count).
  for (size_t d = 0; d < nd; ++d) {
    for (int a : det_to_tracks[d]) {
      for (int b : det_to_tracks[d]) {
        if (first_frame_[tracks[a].id] < first_frame_[tracks[b].id]) ++overlap_frames_[{tracks[a].id, tracks[b].id}];
      }
    }
  }
  for (const auto& [pair, count] : overlap_frames_) {
    const int id = pair.second;
    if (removed_.contains(id) || plan.removed.contains(id) || user_.contains(id)) continue;
    if (first_frame_[id] > hotstart_start && count >= o_.hotstart_duplicate) plan.removed.insert(id);
  }
  // Suppression when the credit is spent: SAM 3.1 computes it (to_suppress_mask) but never
  // applies it; keep_alive_suppression applies it as SAM3 did.
  if (o_.keep_alive_suppression && !o_.suppress_unmatched_only_within_hotstart) {
    for (const auto& t : tracks) {
      if (!user_.contains(t.id) && !removed_.contains(t.id) && !plan.removed.contains(t.id) && keep_alive_[t.id] <= 0) {
        plan.suppressed.insert(t.id);
      }
    }
  }
  // A clicked object started on this frame takes over the track it lies on (IoU >= the
  // occlusion rule's threshold, SAM 3.1's "one object under two tracks"): that track ends here,
  // its earlier frames still shown. Officially both are tracked, the concept's cached outputs
  // merged with the clicked object's by tracker score, and the interactive user removes the
  // copy; a run has no user to ask, and a tie would give every pixel to the older track.
  if (o_.occlusion_overlap_iou > 0) {
    for (const auto& clicked : tracks) {
      if (!user_.contains(clicked.id) || first_frame_[clicked.id] != frame) continue;
      for (const auto& t : tracks) {
        if (user_.contains(t.id) || plan.removed.contains(t.id)) continue;
        if (mask_iou(t.mask, clicked.mask) >= o_.occlusion_overlap_iou) plan.ended.insert(t.id);
      }
    }
  }
  removed_.insert(plan.removed.begin(), plan.removed.end());
  removed_.insert(plan.ended.begin(), plan.ended.end());
  // Removed objects leave the pair counts (the official metadata is compacted).
  std::erase_if(overlap_frames_, [&](const auto& kv) { return removed_.contains(kv.first.first) || removed_.contains(kv.first.second); });

  // d) Of two tracks whose masks overlap by IoU >= the threshold, the one occluded more
  // recently is suppressed, if the other was ever occluded; a track hot-start removes on this
  // frame counts as always occluded, whatever its record (SAM 3.1:
  // _suppress_overlapping_based_on_recent_occlusion).
  std::vector<std::int64_t> last(nt);
  for (size_t t = 0; t < nt; ++t) {
    auto it = last_occluded_.find(tracks[t].id);
    const bool gone = plan.removed.contains(tracks[t].id) || plan.ended.contains(tracks[t].id);
    last[t] = gone ? kAlwaysOccluded : it != last_occluded_.end() ? it->second : kNeverOccluded;
  }
  const auto& seen = reconditioned ? *reconditioned : tracks;
  if (o_.occlusion_overlap_iou > 0 && nt > 1) {
    for (size_t i = 0; i < nt; ++i) {
      for (size_t j = i + 1; j < nt; ++j) {
        if (mask_iou(seen[i].mask, seen[j].mask) < o_.occlusion_overlap_iou) continue;
        if (last[i] > last[j] && last[j] > kNeverOccluded) plan.occluded_suppressed.insert(tracks[i].id);
        if (last[j] > last[i] && last[i] > kNeverOccluded) plan.occluded_suppressed.insert(tracks[j].id);
      }
    }
  }
  std::map<int, std::int64_t> last_new;
  for (size_t t = 0; t < nt; ++t) {
    const int id = tracks[t].id;
    if (plan.removed.contains(id) || plan.ended.contains(id)) continue;
    last_new[id] = (seen[t].mask.empty() || plan.occluded_suppressed.contains(id)) ? frame : last[t];
  }
  last_occluded_ = std::move(last_new);

  // e) Masklet confirmation: confirmed after `confirmation_detections` consecutive frames
  // matched by a detection (the frame an object starts on counts).
  if (o_.confirmation_detections > 0) {
    std::vector<int> live;
    for (const auto& t : tracks) {
      if (!plan.removed.contains(t.id) && !plan.ended.contains(t.id)) live.push_back(t.id);
    }
    live.insert(live.end(), plan.new_ids.begin(), plan.new_ids.end());
    const std::set<int> fresh(plan.new_ids.begin(), plan.new_ids.end());
    std::map<int, int> consecutive;
    for (int id : live) {
      const bool hit = fresh.contains(id) || plan.matched.contains(id);
      consecutive[id] = hit ? consecutive_detections_[id] + 1 : 0;
      if (consecutive[id] >= o_.confirmation_detections) confirmed_.insert(id);
      if (!confirmed_.contains(id)) plan.unconfirmed.insert(id);
    }
    consecutive_detections_ = std::move(consecutive);
  }
  return plan;
}

}  // namespace sam3::pure::video
