// Where a frame's new objects go (SAM 3.1's is_multiplex_dynamic packing: sam3_multiplex_base.py
// _tracker_add_new_objects, multiplex_utils.py MultiplexState.available_slots / add_objects):
// all of one frame's new objects of a prompt go together into the bucket with the fewest free
// slots that still holds them all (the first on ties), into its lowest free slots; when none
// holds them all, new buckets take them. A slot is free only if it was never used: a retired
// slot (its object ended) counts as taken and is never reused, so older memory frames never
// hold another object in it. No ONNX Runtime here.
#pragma once

#include <array>
#include <optional>
#include <set>
#include <vector>

#include "pure/families/sam31_video.h"

namespace sam3::pure::video {

// What a bucket's slot holds: kFreeSlot (never used), an object id (> 0), or kRetiredSlot.
inline constexpr int kFreeSlot = 0;
inline constexpr int kRetiredSlot = -1;
using BucketSlots = std::array<int, sam31::kSlots>;

int free_slots(const BucketSlots& slots);
// The `count` lowest free slots (fewer when there are not as many).
std::vector<int> lowest_free_slots(const BucketSlots& slots, int count);

// The index of the bucket that takes `count` new objects on a frame, or none (new buckets).
// Buckets whose objects all end on this frame (`removed`) take none: they are dropped after
// this frame's memory. (The official code packs into them and, when the objects of the
// bucket's first frame are all removed, clears that frame's inputs and stops with "No points
// are provided"; sam3 avoids the case.)
std::optional<size_t> bucket_for_new_objects(const std::vector<BucketSlots>& buckets, const std::set<int>& removed, int count);

}  // namespace sam3::pure::video
