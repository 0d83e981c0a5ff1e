#include <algorithm>
#include <numeric>

#include "sam3/label.h"

namespace sam3 {
namespace {

std::vector<int> starts(int size, int tile, int overlap) {
  if (size <= tile) return {0};
  const int stride = std::max(1, tile - overlap);
  std::vector<int> out;
  for (int s = 0; s + tile < size; s += stride) out.push_back(s);
  out.push_back(size - tile);  // last tile flush with the edge
  return out;
}

int find_root(std::vector<int>& parent, int i) {
  while (parent[static_cast<size_t>(i)] != i) i = parent[static_cast<size_t>(i)] = parent[static_cast<size_t>(parent[static_cast<size_t>(i)])];
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

std::vector<TileRect> tile_grid(int width, int height, int tile, int overlap) {
  std::vector<TileRect> out;
  for (int y : starts(height, tile, overlap))
    for (int x : starts(width, tile, overlap)) out.push_back({x, y, std::min(width, x + tile), std::min(height, y + tile)});
  return out;
}

std::vector<LabeledInstance> merge_across_tiles(std::vector<LabeledInstance> instances,
                                                const std::vector<int>& tile_of_instance,
                                                const std::vector<TileRect>& tiles, const TileOptions& options) {
  const int n = static_cast<int>(instances.size());
  std::vector<int> parent(static_cast<size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  // Only instances of tiles that overlap can be one object: pairs are taken tile pair by tile
  // pair (neighbours only), so a map with 100,000 instances is not 10^10 comparisons.
  std::vector<std::vector<int>> of_tile(tiles.size());
  for (int i = 0; i < n; ++i) of_tile[static_cast<size_t>(tile_of_instance[static_cast<size_t>(i)])].push_back(i);
  for (size_t ta = 0; ta < tiles.size(); ++ta) {
    for (size_t tb = ta + 1; tb < tiles.size(); ++tb) {
      if (of_tile[ta].empty() || of_tile[tb].empty()) continue;
      const TileRect shared = intersect(tiles[ta], tiles[tb]);
      if (shared.x1 <= shared.x0 || shared.y1 <= shared.y0) continue;
      for (int i : of_tile[ta]) {
        for (int j : of_tile[tb]) {
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

}  // namespace sam3
