#include "pure/video/bucket_placement.h"

#include <algorithm>

namespace sam3::pure::video {

int free_slots(const BucketSlots& slots) { return static_cast<int>(std::count(slots.begin(), slots.end(), kFreeSlot)); }

std::vector<int> lowest_free_slots(const BucketSlots& slots, int count) {
  std::vector<int> out;
  for (int k = 0; k < sam31::kSlots && static_cast<int>(out.size()) < count; ++k) {
    if (slots[k] == kFreeSlot) out.push_back(k);
  }
  return out;
}

std::optional<size_t> bucket_for_new_objects(const std::vector<BucketSlots>& buckets, const std::set<int>& removed, int count) {
  if (count <= 0) return std::nullopt;
  std::optional<size_t> best;
  int best_free = sam31::kSlots + 1;
  for (size_t b = 0; b < buckets.size(); ++b) {
    const auto& slots = buckets[b];
    const bool keeps_an_object = std::any_of(slots.begin(), slots.end(), [&](int id) { return id > 0 && !removed.contains(id); });
    const int free = free_slots(slots);
    if (!keeps_an_object || free < count) continue;
    if (free < best_free) {  // strictly fewer: the first wins a tie, as officially
      best = b;
      best_free = free;
    }
  }
  return best;
}

}  // namespace sam3::pure::video
