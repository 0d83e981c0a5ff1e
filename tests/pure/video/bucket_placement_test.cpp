// Where a frame's new objects go (pure/video/bucket_placement.h, SAM 3.1's
// _tracker_add_new_objects with is_multiplex_dynamic): the tracker's two calls,
// bucket_for_new_objects then lowest_free_slots, replayed over a few frames of starts and ends.
#include <gtest/gtest.h>

#include <algorithm>

#include "pure/video/bucket_placement.h"

namespace sam3::pure::video {
namespace {

// The tracker's buckets of one prompt, as slot tables: start() places one frame's new objects
// as VideoTracker's step does (packed, else new buckets of up to 16), end() retires objects
// and drops buckets left with none. Returns the bucket that took them.
struct Buckets {
  std::vector<BucketSlots> slots;
  int next_id = 1;

  size_t start(int count, const std::set<int>& removed = {}) {
    std::vector<int> ids;
    for (int i = 0; i < count; ++i) ids.push_back(next_id++);
    const auto host = bucket_for_new_objects(slots, removed, count);
    if (host) {
      const auto free = lowest_free_slots(slots[*host], count);
      EXPECT_EQ(free.size(), ids.size());
      for (size_t i = 0; i < free.size(); ++i) slots[*host][free[i]] = ids[i];
      const int first_id = ids.front();
      end(removed);  // removals come after the frame's memory, which the joining objects are in
      for (size_t k = 0; k < slots.size(); ++k)
        if (std::find(slots[k].begin(), slots[k].end(), first_id) != slots[k].end()) return k;
    }
    end(removed);
    for (size_t first = 0; first < ids.size(); first += sam31::kSlots) {
      BucketSlots b{};
      for (size_t i = first; i < std::min(ids.size(), first + sam31::kSlots); ++i) b[i - first] = ids[i];
      slots.push_back(b);
    }
    return slots.size() - 1;
  }
  void end(const std::set<int>& removed) {
    for (auto& b : slots)
      for (auto& id : b)
        if (removed.contains(id)) id = kRetiredSlot;
    std::erase_if(slots, [](const BucketSlots& b) { return std::none_of(b.begin(), b.end(), [](int id) { return id > 0; }); });
  }
};

TEST(BucketPlacement, LaterObjectsFillTheBucketWithTheFewestFreeSlotsThatHoldsThemAll) {
  Buckets b;
  EXPECT_EQ(b.start(3), 0u) << "frame 0: 3 objects start the first bucket";
  EXPECT_EQ(b.start(2), 0u) << "frame 2: 2 more join it (13 free)";
  EXPECT_EQ(b.slots[0][3], 4);
  EXPECT_EQ(b.slots[0][4], 5);
  EXPECT_EQ(free_slots(b.slots[0]), 11);
  EXPECT_EQ(b.start(12), 1u) << "frame 5: 12 do not fit in 11 free slots: a new bucket (4 free)";
  EXPECT_EQ(b.slots.size(), 2u);
  EXPECT_EQ(b.start(1), 1u) << "frame 7: 1 goes to the bucket with the fewest free slots (4, not 11)";
  EXPECT_EQ(b.slots[1][12], 18);
  EXPECT_EQ(b.start(4), 0u) << "frame 8: 4 do not fit in the second's 3, so the first (11 free) takes them";
  EXPECT_EQ(b.slots[0][5], 19);
}

TEST(BucketPlacement, TiesGoToTheFirstBucket) {
  Buckets b;
  b.start(5);
  b.start(12);  // does not fit the first (11 free): second bucket, 4 free
  b.start(7);   // first bucket: 4 free
  ASSERT_EQ(free_slots(b.slots[0]), 4);
  ASSERT_EQ(free_slots(b.slots[1]), 4);
  EXPECT_EQ(b.start(2), 0u);
}

TEST(BucketPlacement, RetiredSlotsAreNeverReusedAndCountAsTaken) {
  Buckets b;
  b.start(16);       // a full bucket
  b.end({1, 2, 3});  // three end: their slots retire
  EXPECT_EQ(free_slots(b.slots[0]), 0) << "a retired slot is not free";
  EXPECT_EQ(b.slots[0][0], kRetiredSlot);
  EXPECT_EQ(b.start(1), 1u) << "the one new object opens a bucket: retired slots are not refilled";
  EXPECT_EQ(b.slots[0][0], kRetiredSlot);
  EXPECT_TRUE(lowest_free_slots(b.slots[0], 1).empty());
}

TEST(BucketPlacement, LowestFreeSlotsComeFirstAndSkipRetiredOnes) {
  BucketSlots s{};
  s[0] = 7;
  s[1] = kRetiredSlot;
  s[3] = 9;
  EXPECT_EQ(lowest_free_slots(s, 3), (std::vector<int>{2, 4, 5}));
  EXPECT_EQ(free_slots(s), 13);
}

TEST(BucketPlacement, ABucketWhoseObjectsAllEndOnThisFrameTakesNone) {
  // The official code would pack into it and, once its first frame's objects are all removed,
  // stop with "No points are provided"; sam3 leaves it to be dropped.
  Buckets b;
  b.start(2);       // bucket 0: ids 1, 2
  b.start(15, {});  // does not fit (14 free): bucket 1, ids 3..17, 1 free
  EXPECT_EQ(b.start(1, {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}), 0u)
      << "bucket 1 had the fewest free slots, but every object of it ends on this frame";
  EXPECT_EQ(b.slots.size(), 1u) << "bucket 1 dropped";
  EXPECT_FALSE(bucket_for_new_objects({b.slots[0]}, {1, 2, 18}, 1)) << "nothing kept: new bucket";
}

TEST(BucketPlacement, MoreThanABucketOfNewObjectsNeverPacks) {
  Buckets b;
  b.start(1);
  EXPECT_FALSE(bucket_for_new_objects(b.slots, {}, 17));
  EXPECT_EQ(b.start(17), 2u) << "17 new objects: two new buckets";
  EXPECT_EQ(b.slots.size(), 3u);
  EXPECT_FALSE(bucket_for_new_objects(b.slots, {}, 0)) << "no new object goes nowhere";
}

}  // namespace
}  // namespace sam3::pure::video
