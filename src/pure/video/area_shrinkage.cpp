#include "pure/video/area_shrinkage.h"

#include <algorithm>
#include <limits>

namespace sam3::pure::video {

ShrinkageVote::ShrinkageVote(size_t pixels) : best_(pixels, -std::numeric_limits<float>::infinity()), owner_(pixels, -1) {}

void ShrinkageVote::add(const float* plane) {
  const auto k = static_cast<std::int32_t>(areas_.size());
  std::int64_t area = 0;
  for (size_t p = 0; p < best_.size(); ++p) {
    area += plane[p] > 0.0f;
    if (plane[p] > best_[p]) {  // strictly: a tie stays with the earlier object (argmax)
      best_[p] = plane[p];
      owner_[p] = k;
    }
  }
  areas_.push_back(area);
}

std::vector<bool> ShrinkageVote::shrunk(float min_ratio) const {
  std::vector<std::int64_t> kept(areas_.size(), 0);
  for (size_t p = 0; p < best_.size(); ++p) {
    if (owner_[p] >= 0 && best_[p] > 0.0f) ++kept[owner_[p]];
  }
  std::vector<bool> out(areas_.size());
  for (size_t k = 0; k < areas_.size(); ++k) {
    out[k] = static_cast<double>(kept[k]) / static_cast<double>(std::max<std::int64_t>(areas_[k], 1)) < min_ratio;
  }
  return out;
}

}  // namespace sam3::pure::video
