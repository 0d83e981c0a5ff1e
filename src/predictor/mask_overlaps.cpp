#include "predictor/mask_overlaps.h"

#include <algorithm>
#include <numeric>

#include "sam3/error.h"

namespace sam3::predictor {
namespace {

// `m` less every pixel of `kept` (masks of the same image).
Mask without(Mask m, const std::vector<const Mask*>& kept) {
  const TileRect b = m.bounds();
  const size_t ww = static_cast<size_t>(b.x1 - b.x0);
  std::vector<std::uint8_t> bytes;
  for (const Mask* over : kept) {
    const TileRect o = over->bounds();
    const int x0 = std::max(b.x0, o.x0), y0 = std::max(b.y0, o.y0), x1 = std::min(b.x1, o.x1), y1 = std::min(b.y1, o.y1);
    if (x0 >= x1 || y0 >= y1 || over->width() != m.width() || over->height() != m.height()) continue;
    if (bytes.empty()) {  // this mask's bounds as bytes, copied once it loses anything
      bytes.reserve(ww * static_cast<size_t>(b.y1 - b.y0));
      for (int y = b.y0; y < b.y1; ++y) bytes.insert(bytes.end(), m.row(y).begin(), m.row(y).end());
    }
    for (int y = y0; y < y1; ++y) {
      const auto r = over->row(y);
      std::uint8_t* d = &bytes[static_cast<size_t>(y - b.y0) * ww];
      for (int x = x0; x < x1; ++x) {
        if (r[static_cast<size_t>(x - o.x0)]) d[x - b.x0] = 0;
      }
    }
  }
  if (bytes.empty()) return m;
  return Mask::from_window(m.width(), m.height(), b, bytes);
}

}  // namespace

std::vector<Mask> exclusive_masks(const std::vector<float>& priority, const std::function<Mask(size_t)>& make) {
  std::vector<size_t> order(priority.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return priority[a] > priority[b]; });
  // In priority order each mask loses what the masks before it keep: a pixel then stays with
  // the first mask in that order that had it, the same owner a per-pixel vote gives.
  std::vector<Mask> masks(priority.size());
  std::vector<const Mask*> kept;
  for (const size_t k : order) {
    masks[k] = without(make(k), kept);
    if (!masks[k].empty()) kept.push_back(&masks[k]);
  }
  return masks;
}

void remove_overlaps(std::vector<Mask>& masks, const std::vector<float>& priority) {
  if (masks.size() != priority.size()) throw Error(ErrorCode::kInvalidArgument, "remove_overlaps: one priority per mask");
  std::vector<Mask> given = std::move(masks);
  masks = exclusive_masks(priority, [&](size_t k) { return std::move(given[k]); });
}

}  // namespace sam3::predictor
