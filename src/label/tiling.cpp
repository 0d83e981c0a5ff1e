#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "label/tile_prompts.h"
#include "sam3/error.h"

#include "label/label_image.h"

namespace sam3::label {
namespace {

// Tile starts along one axis: 0, stride, 2 * stride, ... while a tile ends inside, then the
// last one flush with the edge (size - tile). Ends never decrease, nor do starts.
struct Axis {
  int size, tile, stride, count;
  Axis(int size_, int tile_, int overlap) : size(size_), tile(tile_), stride(std::max(1, tile_ - overlap)) {
    count = size <= tile ? 1 : (size - tile + stride - 1) / stride + 1;
  }
  int start(int k) const { return k == count - 1 ? std::max(0, size - tile) : k * stride; }
  int end(int k) const { return std::min(size, start(k) + tile); }
  // The first tile with start <= v < end, or -1.
  int first_holding(double v) const {
    int lo = 0, hi = count;  // the first k whose end is past v
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (end(mid) > v)
        hi = mid;
      else
        lo = mid + 1;
    }
    return lo < count && start(lo) <= v ? lo : -1;
  }
};

int find_root(std::vector<int>& parent, int i) {
  while (parent[static_cast<size_t>(i)] != i)
    i = parent[static_cast<size_t>(i)] = parent[static_cast<size_t>(parent[static_cast<size_t>(i)])];
  return i;
}

TileRect intersect(const TileRect& a, const TileRect& b) {
  return {std::max(a.x0, b.x0), std::max(a.y0, b.y0), std::min(a.x1, b.x1), std::min(a.y1, b.y1)};
}

// Pixels of a, of b and of both inside r.
struct Overlap {
  std::int64_t a = 0, b = 0, both = 0;
};

Overlap overlap_in(const MaskCrop& a, const MaskCrop& b, const TileRect& r) {
  Overlap o;
  const int x0 = std::max({r.x0, std::min(a.x0, b.x0)}), x1 = std::min({r.x1, std::max(a.x0 + a.width, b.x0 + b.width)});
  const int y0 = std::max({r.y0, std::min(a.y0, b.y0)}), y1 = std::min({r.y1, std::max(a.y0 + a.height, b.y0 + b.height)});
  for (int y = y0; y < y1; ++y) {
    for (int x = x0; x < x1; ++x) {
      const bool pa = a.at(x, y), pb = b.at(x, y);
      o.a += pa;
      o.b += pb;
      o.both += pa && pb;
    }
  }
  return o;
}

LabeledInstance merge_group(const std::vector<LabeledInstance>& all, const std::vector<int>& members) {
  LabeledInstance out = all[static_cast<size_t>(members.front())];
  int x0 = out.mask.x0, y0 = out.mask.y0, x1 = out.mask.x0 + out.mask.width, y1 = out.mask.y0 + out.mask.height;
  for (int m : members) {
    const auto& inst = all[static_cast<size_t>(m)];
    out.score = std::max(out.score, inst.score);
    x0 = std::min(x0, inst.mask.x0);
    y0 = std::min(y0, inst.mask.y0);
    x1 = std::max(x1, inst.mask.x0 + inst.mask.width);
    y1 = std::max(y1, inst.mask.y0 + inst.mask.height);
  }
  MaskCrop merged;
  merged.full_width = out.mask.full_width;
  merged.full_height = out.mask.full_height;
  merged.x0 = x0;
  merged.y0 = y0;
  merged.width = x1 - x0;
  merged.height = y1 - y0;
  merged.data.assign(static_cast<size_t>(merged.width) * merged.height, 0);
  for (int m : members) {
    const auto& c = all[static_cast<size_t>(m)].mask;
    for (int y = 0; y < c.height; ++y)
      for (int x = 0; x < c.width; ++x)
        if (c.data[static_cast<size_t>(y) * c.width + x])
          merged.data[static_cast<size_t>(y + c.y0 - y0) * merged.width + (x + c.x0 - x0)] = 1;
  }
  out.mask = std::move(merged);
  out.box = {static_cast<float>(x0), static_cast<float>(y0), static_cast<float>(x1), static_cast<float>(y1)};
  return out;
}

}  // namespace

TileGrid::TileGrid(int width, int height, int tile, int overlap) : width_(width), height_(height), tile_(tile), overlap_(overlap) {
  if (width < 1 || height < 1) throw Error(ErrorCode::kInvalidArgument, "a tile grid needs an image of at least 1 x 1 pixels");
  if (tile < 1) throw Error(ErrorCode::kInvalidArgument, "the tile size must be at least 1 pixel, got " + std::to_string(tile));
  if (overlap < 0 || overlap >= tile) {
    throw Error(ErrorCode::kInvalidArgument,
                "the tile overlap must be from 0 to less than the tile (" + std::to_string(tile) + "), got " + std::to_string(overlap));
  }
  columns_ = Axis(width, tile, overlap).count;
  rows_ = Axis(height, tile, overlap).count;
}

TileRect TileGrid::operator[](std::int64_t index) const {
  const Axis xs(width_, tile_, overlap_), ys(height_, tile_, overlap_);
  const int r = static_cast<int>(index / columns_), c = static_cast<int>(index % columns_);
  return {xs.start(c), ys.start(r), xs.end(c), ys.end(r)};
}

TileRect TileGrid::own_part(std::int64_t index) const {
  const Axis xs(width_, tile_, overlap_), ys(height_, tile_, overlap_);
  const int r = static_cast<int>(index / columns_), c = static_cast<int>(index % columns_);
  TileRect own = (*this)[index];
  if (c > 0) own.x0 = std::max(own.x0, std::min(xs.end(c - 1), own.x1));
  if (r > 0) own.y0 = std::max(own.y0, std::min(ys.end(r - 1), own.y1));
  return own;
}

std::int64_t TileGrid::tile_at(double x, double y) const {
  const int c = Axis(width_, tile_, overlap_).first_holding(x), r = Axis(height_, tile_, overlap_).first_holding(y);
  return c < 0 || r < 0 ? 0 : static_cast<std::int64_t>(r) * columns_ + c;
}

std::vector<std::int64_t> TileGrid::later_neighbours(std::int64_t index) const {
  const Axis xs(width_, tile_, overlap_), ys(height_, tile_, overlap_);
  const int r = static_cast<int>(index / columns_), c = static_cast<int>(index % columns_);
  // Columns sharing pixels with column c: starts and ends never decrease, so scan outwards.
  int left = c, right = c;
  while (left > 0 && xs.end(left - 1) > xs.start(c)) --left;
  while (right + 1 < columns_ && xs.start(right + 1) < xs.end(c)) ++right;
  std::vector<std::int64_t> out;
  for (int rr = r; rr < rows_ && ys.start(rr) < ys.end(r); ++rr) {
    for (int cc = rr == r ? c + 1 : left; cc <= right; ++cc) out.push_back(static_cast<std::int64_t>(rr) * columns_ + cc);
  }
  return out;
}

Prompt prompt_for_tile(const Prompt& prompt, const TileRect& r) {
  Prompt out{prompt.text, {}};
  for (const auto& b : prompt.boxes) {
    const float x0 = std::max(b.box.x0, float(r.x0)), y0 = std::max(b.box.y0, float(r.y0));
    const float x1 = std::min(b.box.x1, float(r.x1)), y1 = std::min(b.box.y1, float(r.y1));
    if (!(x1 - x0 >= 1 && y1 - y0 >= 1)) continue;
    out.boxes.push_back({{x0 - r.x0, y0 - r.y0, x1 - r.x0, y1 - r.y0}, b.positive});
  }
  return out;
}

std::vector<LabeledInstance> merge_across_tiles(std::vector<LabeledInstance> instances, const std::vector<int>& tile_of_instance,
                                                const TileGrid& tiles, const TileOptions& options) {
  const int n = static_cast<int>(instances.size());
  std::vector<int> parent(static_cast<size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  // Only instances of tiles that overlap can be one object: tiles holding instances are paired
  // with their neighbours only, so a map with 100,000 instances is not 10^10 comparisons and a
  // grid of millions of empty tiles costs nothing. (Each group's root is its lowest index, so
  // the result does not depend on the order pairs are met.)
  std::unordered_map<std::int64_t, std::vector<int>> of_tile;
  for (int i = 0; i < n; ++i) of_tile[tile_of_instance[static_cast<size_t>(i)]].push_back(i);
  std::vector<std::int64_t> busy;
  for (const auto& [t, members] : of_tile) busy.push_back(t);
  std::sort(busy.begin(), busy.end());
  for (std::int64_t ta : busy) {
    for (std::int64_t tb : tiles.later_neighbours(ta)) {
      const auto found_b = of_tile.find(tb);
      if (found_b == of_tile.end()) continue;
      const TileRect shared = intersect(tiles[ta], tiles[tb]);
      if (shared.x1 <= shared.x0 || shared.y1 <= shared.y0) continue;
      for (int i : of_tile[ta]) {
        for (int j : found_b->second) {
          const auto& a = instances[static_cast<size_t>(i)];
          const auto& b = instances[static_cast<size_t>(j)];
          if (a.category != b.category) continue;
          const Overlap o = overlap_in(a.mask, b.mask, shared);
          if (o.a == 0 || o.b == 0 || o.both == 0) continue;
          const double iou = static_cast<double>(o.both) / static_cast<double>(o.a + o.b - o.both);
          const double contained = static_cast<double>(o.both) / static_cast<double>(std::min(o.a, o.b));
          if (iou > options.merge_iou || contained > options.merge_containment) {
            const int ri = find_root(parent, std::min(i, j)), rj = find_root(parent, std::max(i, j));
            if (ri != rj) parent[static_cast<size_t>(std::max(ri, rj))] = std::min(ri, rj);
          }
        }
      }
    }
  }
  std::vector<std::vector<int>> groups(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) groups[static_cast<size_t>(find_root(parent, i))].push_back(i);
  std::vector<LabeledInstance> out;
  for (const auto& g : groups) {
    if (g.empty()) continue;
    out.push_back(g.size() == 1 ? std::move(instances[static_cast<size_t>(g.front())]) : merge_group(instances, g));
  }
  return out;
}

}  // namespace sam3::label
