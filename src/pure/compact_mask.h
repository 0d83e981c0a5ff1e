// Masks kept small while they are only candidates. "Segment everything" holds every candidate
// until its final deduplication (and, with crop layers, every crop's masks until they are
// merged): a byte per image pixel each was 407 MB at 4 points per side on a 2000x2000 image and
// 2.4 GB at 12. A candidate keeps its box's rows as runs instead, a few bytes a row for an
// object's mask; the survivors become Masks again (their bounds' bytes), the same pixels.
#pragma once

#include <cstdint>
#include <vector>

#include "sam3/types.h"

namespace sam3::pure {

struct CompactMask {
  int width = 0, height = 0;           // of the image the mask belongs to
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // its pixels' bounds (x1, y1 exclusive); empty when x1 <= x0
  // The box's pixels row by row, as the lengths of alternating runs of 0s and 1s (0s first).
  std::vector<std::uint32_t> runs;
};

struct CompactInstance {
  float score = 0;
  Box box;
  std::int64_t area = 0;
  CompactMask mask;
};

// The instance with its mask made compact (runs over the mask's bounds).
CompactInstance compact(const Instance& instance);
// The instance again: the same mask, box, area and score.
Instance expand(const CompactInstance& instance);
std::vector<Instance> expand(const std::vector<CompactInstance>& instances);
// The mask moved by (dx, dy) into an image of width x height (a crop's mask into the image).
void move_mask(CompactInstance& instance, int dx, int dy, int width, int height);
// The bytes a compact instance holds (for tests and bounds).
std::size_t compact_bytes(const CompactInstance& instance);

}  // namespace sam3::pure
