#include "video_io/resume_ids.h"

#include "predictor/postprocess.h"
#include "video_io/record.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace sam3::video_io {

double mask_iou(const Mask& a, const Mask& b) {
  const std::int64_t inter = sam3::predictor::mask_intersection(a, b), uni = a.area() + b.area() - inter;
  return uni == 0 ? 0 : static_cast<double>(inter) / static_cast<double>(uni);
}

ResumeIds::ResumeIds(std::vector<std::string> recent, std::filesystem::path record, int max_id)
    : record_(std::move(record)), max_id_(max_id) {
  for (auto& line : recent) {
    const auto result = parse_result_line(line, record_);  // checked now: a damaged record fails at open
    recent_[result.index] = std::move(line);
  }
}

void ResumeIds::observe(const VideoFrameResult& rerun) {
  const auto line = recent_.find(rerun.index);
  if (line == recent_.end() || decided_) return;
  observed_ = true;
  const VideoFrameResult written_result = parse_result_line(line->second, record_);
  const auto* written = &written_result;
  // Greedy one-to-one matching of this frame, best IoU first.
  std::vector<std::tuple<double, int, int>> pairs;
  for (const auto& a : rerun.objects) {
    for (const auto& b : written->objects) {
      const double iou = video_io::mask_iou(a.mask, b.mask);  // (not postprocess.h's float one)
      if (iou >= 0.5) pairs.emplace_back(iou, a.id, b.id);
    }
  }
  std::sort(pairs.begin(), pairs.end(), [](const auto& x, const auto& y) { return std::get<0>(x) > std::get<0>(y); });
  std::set<int> used_a, used_b;
  for (const auto& [iou, a, b] : pairs) {
    if (used_a.contains(a) || used_b.contains(b)) continue;
    used_a.insert(a);
    used_b.insert(b);
    ++votes_[{a, b}];
  }
}

void ResumeIds::decide() {
  decided_ = true;
  std::vector<std::tuple<int, int, int>> ranked;  // votes, re-run id, written id
  for (const auto& [ids, n] : votes_) ranked.emplace_back(n, ids.first, ids.second);
  std::sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) { return std::get<0>(x) > std::get<0>(y); });
  std::set<int> taken;
  for (const auto& [n, a, b] : ranked) {
    if (map_.contains(a) || taken.contains(b)) continue;
    map_[a] = b;
    taken.insert(b);
  }
  recent_.clear();  // the window's masks are not needed any more
}

int ResumeIds::map(int rerun_id) {
  if (!observed_) return rerun_id;
  if (!decided_) decide();
  const auto it = map_.find(rerun_id);
  if (it != map_.end()) return it->second;
  const int fresh = ++max_id_;
  map_[rerun_id] = fresh;
  return fresh;
}

}  // namespace sam3::video_io
