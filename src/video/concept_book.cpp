#include "video/concept_book.h"

#include <algorithm>
#include <numeric>

namespace sam3::video {
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

FramePlan ConceptBook::step(std::int64_t frame, const std::vector<Detection>& detections,
                            const std::vector<TrackMask>& tracks, int& next_id, int room,
                            const std::vector<TrackMask>* reconditioned) {
  FramePlan plan;
  const size_t nd = detections.size(), nt = tracks.size();

  // a) Association (_associate_det_trk): IoM between binary low-res masks. Several tracks may
  // match one detection; a detection is new when it matches no track and scores high enough.
  // With no track at all, every detection is new (the official code skips the new-object
  // threshold there).
  std::vector<std::vector<int>> det_to_tracks(nd);
  std::vector<char> track_matched(nt, 0), track_nonempty(nt, 0);
  for (size_t t = 0; t < nt; ++t) track_nonempty[t] = !tracks[t].mask.empty();
  std::vector<int> new_dets;
  for (size_t d = 0; d < nd; ++d) {
    bool overlaps_any = false;
    for (size_t t = 0; t < nt; ++t) {
      const float iom = mask_iom(detections[d].mask, tracks[t].mask);
      if (iom >= o_.track_match_iom) track_matched[t] = 1;
      if (iom >= o_.association_iom) {
        overlaps_any = true;
        det_to_tracks[d].push_back(static_cast<int>(t));
      }
    }
    const bool is_new = nt == 0 || (detections[d].score >= o_.new_object_threshold && !overlaps_any);
    if (is_new) new_dets.push_back(static_cast<int>(d));
  }
  // b) Detections whose centre is near the frame's edge start no object (they still match tracks).
  if (o_.boundary_margin > 0) {
    std::erase_if(new_dets, [&](int d) { return !inside_margin(detections[d], o_.boundary_margin); });
  }
  // c) The object limit keeps the best-scoring new detections.
  if (room >= 0 && static_cast<int>(new_dets.size()) > room) {
    std::stable_sort(new_dets.begin(), new_dets.end(), [&](int a, int b) { return detections[a].score > detections[b].score; });
    new_dets.resize(room);
    std::sort(new_dets.begin(), new_dets.end());
  }
  plan.new_detections = new_dets;
  for (size_t i = 0; i < new_dets.size(); ++i) plan.new_ids.push_back(next_id++);

  // d) Hot-start (_process_hotstart): keep-alive credit, removal of tracks unmatched or
  // duplicated within hotstart_delay frames of their start, suppression when credit is spent.
  for (int id : plan.new_ids) {
    first_frame_[id] = frame;
    keep_alive_[id] = o_.keep_alive_init;
  }
  for (size_t d = 0; d < nd; ++d) {
    for (int t : det_to_tracks[d]) plan.matched.insert(tracks[t].id);
  }
  for (int id : plan.matched) {
    if (!user_.contains(id)) keep_alive_[id] = std::min(o_.keep_alive_max, keep_alive_[id] + 1);
  }
  for (size_t t = 0; t < nt; ++t) {
    const int id = tracks[t].id;
    if (user_.contains(id)) continue;
    if (track_nonempty[t] && !track_matched[t]) {
      ++unmatched_frames_[id];
      keep_alive_[id] = std::max(o_.keep_alive_min, keep_alive_[id] - 1);
    } else if (!track_nonempty[t] && o_.decrease_keep_alive_when_empty) {
      keep_alive_[id] = std::max(o_.keep_alive_min, keep_alive_[id] - 1);
    }
  }
  const std::int64_t hotstart_start = frame - o_.hotstart_delay;  // started after this: within the window
  for (const auto& [id, count] : unmatched_frames_) {
    if (removed_.contains(id) || plan.removed.contains(id)) continue;
    if (count >= o_.hotstart_unmatched && first_frame_[id] > hotstart_start) {
      plan.removed.insert(id);
      continue;
    }
    if (keep_alive_[id] <= 0 && !o_.suppress_unmatched_only_within_hotstart) plan.suppressed.insert(id);
  }
  std::map<int, size_t> order;  // track order breaks ties between objects that started on one frame
  for (size_t t = 0; t < nt; ++t) order[tracks[t].id] = t;
  for (size_t d = 0; d < nd; ++d) {
    if (det_to_tracks[d].size() < 2) continue;
    int first = tracks[det_to_tracks[d].front()].id;
    for (int t : det_to_tracks[d]) {
      if (first_frame_[tracks[t].id] < first_frame_[first]) first = tracks[t].id;
    }
    for (int t : det_to_tracks[d]) {
      if (tracks[t].id != first) ++overlap_frames_[{first, tracks[t].id}];
    }
  }
  for (const auto& [pair, count] : overlap_frames_) {
    const int id = pair.second;
    if (removed_.contains(id) || plan.removed.contains(id) || user_.contains(id)) continue;
    if (first_frame_[id] > hotstart_start && count >= o_.hotstart_duplicate) plan.removed.insert(id);
  }
  for (int id : plan.removed) plan.suppressed.erase(id);
  removed_.insert(plan.removed.begin(), plan.removed.end());

  // e) Of two tracks whose masks overlap by IoU >= the threshold, the one occluded more
  // recently is suppressed, if the other was ever occluded (a track without a record that
  // hot-start just removed counts as always occluded).
  std::vector<std::int64_t> last(nt);
  for (size_t t = 0; t < nt; ++t) {
    auto it = last_occluded_.find(tracks[t].id);
    last[t] = it != last_occluded_.end() ? it->second : plan.removed.contains(tracks[t].id) ? kAlwaysOccluded : kNeverOccluded;
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
    if (plan.removed.contains(id)) continue;
    last_new[id] = (seen[t].mask.empty() || plan.occluded_suppressed.contains(id)) ? frame : last[t];
  }
  last_occluded_ = std::move(last_new);

  // f) Masklet confirmation: confirmed after `confirmation_detections` consecutive frames
  // matched by a detection (the frame an object starts on counts).
  if (o_.confirmation_detections > 0) {
    std::vector<int> live;
    for (const auto& t : tracks) {
      if (!plan.removed.contains(t.id)) live.push_back(t.id);
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

}  // namespace sam3::video
