#include "pure/compact_mask.h"

#include <algorithm>
#include <cmath>

namespace sam3::pure {

CompactInstance compact(const Instance& inst) {
  CompactInstance out;
  out.score = inst.score;
  out.box = inst.box;
  out.area = inst.area;
  CompactMask& c = out.mask;
  c.width = inst.mask.width;
  c.height = inst.mask.height;
  c.x0 = std::clamp(static_cast<int>(std::floor(inst.box.x0)), 0, c.width);
  c.y0 = std::clamp(static_cast<int>(std::floor(inst.box.y0)), 0, c.height);
  c.x1 = std::clamp(static_cast<int>(std::ceil(inst.box.x1)), c.x0, c.width);
  c.y1 = std::clamp(static_cast<int>(std::ceil(inst.box.y1)), c.y0, c.height);
  std::uint8_t value = 0;
  std::uint32_t run = 0;
  for (int y = c.y0; y < c.y1; ++y) {
    const std::uint8_t* row = &inst.mask.data[static_cast<size_t>(y) * c.width];
    for (int x = c.x0; x < c.x1; ++x) {
      const std::uint8_t v = row[x] ? 1 : 0;
      if (v != value) {
        c.runs.push_back(run);
        value = v;
        run = 0;
      }
      ++run;
    }
  }
  c.runs.push_back(run);
  c.runs.shrink_to_fit();
  return out;
}

Instance expand(const CompactInstance& in) {
  Instance out;
  out.score = in.score;
  out.box = in.box;
  out.area = in.area;
  const CompactMask& c = in.mask;
  out.mask.width = c.width;
  out.mask.height = c.height;
  out.mask.data.assign(static_cast<size_t>(c.width) * c.height, 0);
  const int box_w = c.x1 - c.x0;
  if (box_w <= 0) return out;
  std::uint64_t at = 0;  // position in the box, row-major
  std::uint8_t value = 0;
  for (const std::uint32_t run : c.runs) {
    if (value) {
      for (std::uint64_t k = at; k < at + run; ++k) {
        const int x = c.x0 + static_cast<int>(k % box_w), y = c.y0 + static_cast<int>(k / box_w);
        out.mask.data[static_cast<size_t>(y) * c.width + x] = 1;
      }
    }
    at += run;
    value ^= 1;
  }
  return out;
}

std::vector<Instance> expand(const std::vector<CompactInstance>& instances) {
  std::vector<Instance> out;
  out.reserve(instances.size());
  for (const auto& inst : instances) out.push_back(expand(inst));
  return out;
}

void move_mask(CompactInstance& inst, int dx, int dy, int width, int height) {
  CompactMask& c = inst.mask;
  c.x0 += dx, c.x1 += dx, c.y0 += dy, c.y1 += dy;
  c.width = width;
  c.height = height;
  inst.box = {inst.box.x0 + dx, inst.box.y0 + dy, inst.box.x1 + dx, inst.box.y1 + dy};
}

std::size_t compact_bytes(const CompactInstance& inst) { return sizeof inst + inst.mask.runs.capacity() * sizeof(std::uint32_t); }

}  // namespace sam3::pure
