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
  c.width = inst.mask.width();
  c.height = inst.mask.height();
  const TileRect b = inst.mask.bounds();
  c.x0 = b.x0, c.y0 = b.y0, c.x1 = b.x1, c.y1 = b.y1;
  std::uint8_t value = 0;
  std::uint32_t run = 0;
  for (int y = c.y0; y < c.y1; ++y) {
    for (const std::uint8_t v : inst.mask.row(y)) {
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
  const int box_w = c.x1 - c.x0, box_h = c.y1 - c.y0;
  if (box_w <= 0 || box_h <= 0) {
    out.mask = Mask(c.width, c.height);
    return out;
  }
  std::vector<std::uint8_t> window(static_cast<size_t>(box_w) * static_cast<size_t>(box_h), 0);
  size_t at = 0;  // position in the window, row-major
  std::uint8_t value = 0;
  for (const std::uint32_t run : c.runs) {
    if (value) std::fill_n(window.begin() + static_cast<std::ptrdiff_t>(at), run, std::uint8_t{1});
    at += run;
    value ^= 1;
  }
  out.mask = Mask::from_window(c.width, c.height, {c.x0, c.y0, c.x1, c.y1}, window);
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
