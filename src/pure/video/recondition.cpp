#include "pure/video/recondition.h"

namespace sam3::pure::video {

std::map<int, int> recondition_matches(const std::vector<Detection>& detections, const std::vector<TrackMask>& tracks,
                                       const std::vector<float>& track_scores, const VideoTrackerOptions& o) {
  std::map<int, int> out;
  const size_t nd = detections.size(), nt = tracks.size();
  if (nd == 0 || nt == 0) return out;
  auto inside = [&](const Detection& d) {
    const float m = o.boundary_margin;
    return m <= 0 || (d.cx > m && d.cx < 1.0f - m && d.cy > m && d.cy < 1.0f - m);
  };
  // IoM of each kept detection with each track (boundary detections count as empty masks).
  std::vector<std::vector<float>> iom(nd, std::vector<float>(nt, 0.0f));
  for (size_t d = 0; d < nd; ++d) {
    if (!inside(detections[d])) continue;
    for (size_t t = 0; t < nt; ++t) iom[d][t] = mask_iom(detections[d].mask, tracks[t].mask);
  }
  // A detection over several tracks, or a track under several detections, is ambiguous.
  std::vector<int> per_det(nd, 0), per_track(nt, 0);
  for (size_t d = 0; d < nd; ++d)
    for (size_t t = 0; t < nt; ++t)
      if (iom[d][t] >= o.recondition_iom) ++per_det[d], ++per_track[t];
  for (size_t d = 0; d < nd; ++d) {
    const Detection& det = detections[d];
    bool overlaps_any = false;
    for (size_t t = 0; t < nt; ++t) overlaps_any = overlaps_any || iom[d][t] >= o.association_iom;
    const bool is_new = det.score >= o.new_object_threshold && !overlaps_any;
    if (!inside(det) || is_new || det.score < o.recondition_detection_score || per_det[d] > 1) continue;
    int best = 0;
    float best_iom = -1.0f;
    for (size_t t = 0; t < nt; ++t) {
      const float v = per_track[t] > 1 ? 0.0f : iom[d][t];
      if (v > best_iom) best_iom = v, best = static_cast<int>(t);
    }
    if (best_iom >= o.recondition_iom) out[best] = static_cast<int>(d);  // a later detection wins, as in the official loop
  }
  std::erase_if(out, [&](const auto& kv) { return !(track_scores[kv.first] > o.recondition_track_score); });
  return out;
}

void blend_recondition(float* track_logits, const float* detection_logits, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if ((track_logits[i] > 0.0f) != (detection_logits[i] > 0.0f)) track_logits[i] = detection_logits[i];
  }
}

}  // namespace sam3::pure::video
