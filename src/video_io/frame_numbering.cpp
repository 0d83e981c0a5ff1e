#include "video_io/frame_numbering.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace sam3::video_io {

namespace {
constexpr std::size_t kMaxPending = 4096;  // packets of a stream whose frames never come (and no error said so) are not kept forever
}

void FrameNumbering::packet(std::optional<std::int64_t> pts) {
  if (!pts) return;
  if (last_pts_ && *pts <= *last_pts_) return;  // before the last frame given: it can no longer be a gap
  if (pending_.size() >= kMaxPending) pending_.erase(pending_.begin());
  pending_.insert(*pts);
}

std::int64_t FrameNumbering::frame(std::optional<std::int64_t> pts) {
  const bool near_damage = since_damage_ <= kDamageReach;
  std::int64_t index = next_;
  if (pts) {
    const auto first_kept = pending_.lower_bound(*pts);
    const auto skipped = static_cast<std::int64_t>(std::distance(pending_.begin(), first_kept));
    pending_.erase(pending_.begin(), first_kept);
    if (const auto own = pending_.find(*pts); own != pending_.end()) pending_.erase(own);
    if (near_damage) index += skipped;
    if (frame_ticks_ > 0 && last_pts_) {
      const double steps = static_cast<double>(*pts - *last_pts_) / frame_ticks_;
      const double whole = std::round(steps);
      const bool on_grid = whole >= 1 && std::abs(steps - whole) < 0.1;
      if (near_damage && regular_ && on_grid && skipped == 0) {  // no packet read accounts for the gap
        index = std::max(index, next_ - 1 + static_cast<std::int64_t>(whole));
      } else if (!on_grid || whole != 1) {
        regular_ = false;  // a step of other than one frame with no error to explain it: not a constant rate
      }
    }
    last_pts_ = *pts;
  }
  lose(next_, index - next_);
  next_ = index + 1;
  if (since_damage_ <= kDamageReach) ++since_damage_;
  return index;
}

std::int64_t FrameNumbering::finish() {
  if (since_damage_ <= kDamageReach) {
    const auto after = static_cast<std::int64_t>(pending_.size());
    lose(next_, after);
    next_ += after;
  }
  pending_.clear();
  return next_;
}

void FrameNumbering::lose(std::int64_t from, std::int64_t count) {
  if (count <= 0) return;
  if (!lost_.empty() && lost_.back().second + 1 == from) {
    lost_.back().second += count;
  } else {
    lost_.emplace_back(from, from + count - 1);
  }
}

std::int64_t FrameNumbering::lost_frames() const {
  std::int64_t n = 0;
  for (const auto& [first, last] : lost_) n += last - first + 1;
  return n;
}

}  // namespace sam3::video_io
