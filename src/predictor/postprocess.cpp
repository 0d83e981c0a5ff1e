#include "predictor/postprocess.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/parallel.h"

namespace sam3::predictor {
namespace {

// Inside the image, corners ordered: a box head can emit x1 < x0 for a degenerate query.
Box clamp_box(Box b, int width, int height) {
  const auto cx = [&](float v) { return std::clamp(v, 0.f, static_cast<float>(width)); };
  const auto cy = [&](float v) { return std::clamp(v, 0.f, static_cast<float>(height)); };
  return {cx(std::min(b.x0, b.x1)), cy(std::min(b.y0, b.y1)), cx(std::max(b.x0, b.x1)), cy(std::max(b.y0, b.y1))};
}

// Source index pair and weight of the second for each destination index.
struct Axis {
  std::vector<int> i0, i1;
  std::vector<float> lambda;
};

Axis bilinear_axis(int src, int dst) {
  Axis a;
  a.i0.resize(dst);
  a.i1.resize(dst);
  a.lambda.resize(dst);
  const float scale = static_cast<float>(src) / dst;
  for (int d = 0; d < dst; ++d) {
    const float s = std::max((d + 0.5f) * scale - 0.5f, 0.f);
    const int i0 = std::min(static_cast<int>(s), src - 1);
    a.i0[d] = i0;
    a.i1[d] = std::min(i0 + 1, src - 1);
    a.lambda[d] = s - i0;
  }
  return a;
}

}  // namespace

float sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

namespace {

// The thresholded bilinear resize of a plane, over the window of destination pixels that can
// pass the cut: bilinear values are convex combinations of their taps, so a destination pixel
// can pass only if one of its taps does. The window is empty when no source cell passes.
void upsample_window(const float* src, int src_h, int src_w, int dst_h, int dst_w, float cut, TileRect& window,
                     std::vector<std::uint8_t>& bytes) {
  window = {0, 0, 0, 0};
  bytes.clear();
  int cx0 = src_w, cy0 = src_h, cx1 = -1, cy1 = -1;
  for (int y = 0; y < src_h; ++y) {
    const float* row = src + static_cast<size_t>(y) * src_w;
    for (int x = 0; x < src_w; ++x) {
      if (row[x] > cut) cx0 = std::min(cx0, x), cx1 = std::max(cx1, x), cy0 = std::min(cy0, y), cy1 = std::max(cy1, y);
    }
  }
  if (cx1 < 0) return;
  const Axis ax = bilinear_axis(src_w, dst_w), ay = bilinear_axis(src_h, dst_h);
  // Destination ranges whose taps can touch the hot cells (i1 >= c0 and i0 <= c1).
  auto range = [](const Axis& a, int c0, int c1, int n) {
    int lo = 0, hi = n;
    while (lo < n && a.i1[lo] < c0) ++lo;
    while (hi > lo && a.i0[hi - 1] > c1) --hi;
    return std::pair{lo, hi};
  };
  const auto xs = range(ax, cx0, cx1, dst_w), ys = range(ay, cy0, cy1, dst_h);
  const int x0 = xs.first, x1 = xs.second, y0 = ys.first, y1 = ys.second;  // plain names: lambdas capture them
  window = {x0, y0, x1, y1};
  const size_t ww = static_cast<size_t>(x1 - x0);
  bytes.assign(ww * static_cast<size_t>(y1 - y0), 0);
  std::vector<float> row0(dst_w), row1(dst_w);
  int cached0 = -1, cached1 = -1;
  auto fill = [&](int sy, std::vector<float>& row) {
    const float* s = src + static_cast<size_t>(sy) * src_w;
    for (int x = x0; x < x1; ++x) row[x] = s[ax.i0[x]] + ax.lambda[x] * (s[ax.i1[x]] - s[ax.i0[x]]);
  };
  for (int y = y0; y < y1; ++y) {
    // Horizontal interpolation of the two source rows, reused across destination rows.
    if (ay.i0[y] != cached0) {
      if (ay.i0[y] == cached1)
        std::swap(row0, row1), std::swap(cached0, cached1);
      else
        fill(ay.i0[y], row0), cached0 = ay.i0[y];
    }
    if (ay.i1[y] != cached1) fill(ay.i1[y], row1), cached1 = ay.i1[y];
    const float l = ay.lambda[y];
    std::uint8_t* d = bytes.data() + static_cast<size_t>(y - y0) * ww;
    for (int x = x0; x < x1; ++x) d[x - x0] = (row0[x] + l * (row1[x] - row0[x])) > cut ? 1 : 0;
  }
}

}  // namespace

void upsample_threshold(const float* src, int src_h, int src_w, int dst_h, int dst_w, float cut, std::uint8_t* dst) {
  std::fill_n(dst, static_cast<size_t>(dst_h) * dst_w, std::uint8_t{0});
  TileRect w;
  std::vector<std::uint8_t> bytes;
  upsample_window(src, src_h, src_w, dst_h, dst_w, cut, w, bytes);
  const size_t ww = static_cast<size_t>(w.x1 - w.x0);
  for (int y = w.y0; y < w.y1; ++y)
    std::copy_n(&bytes[static_cast<size_t>(y - w.y0) * ww], ww, dst + static_cast<size_t>(y) * dst_w + w.x0);
}

Mask upsample_mask(const float* src, int src_h, int src_w, int dst_h, int dst_w, float cut) {
  TileRect w;
  std::vector<std::uint8_t> bytes;
  upsample_window(src, src_h, src_w, dst_h, dst_w, cut, w, bytes);
  return Mask::from_window(dst_w, dst_h, w, bytes);
}

Mask mask_above(const float* plane, int width, int height, float cut) {
  int x0 = width, y0 = height, x1 = -1, y1 = -1;
  for (int y = 0; y < height; ++y) {
    const float* row = plane + static_cast<size_t>(y) * width;
    for (int x = 0; x < width; ++x) {
      if (row[x] > cut) x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  }
  if (x1 < 0) return Mask(width, height);
  const size_t ww = static_cast<size_t>(x1 + 1 - x0);
  std::vector<std::uint8_t> bytes(ww * static_cast<size_t>(y1 + 1 - y0));
  for (int y = y0; y <= y1; ++y) {
    const float* row = plane + static_cast<size_t>(y) * width;
    for (int x = x0; x <= x1; ++x) bytes[static_cast<size_t>(y - y0) * ww + static_cast<size_t>(x - x0)] = row[x] > cut ? 1 : 0;
  }
  return Mask::from_window(width, height, {x0, y0, x1 + 1, y1 + 1}, bytes);
}

namespace {

// The decoder's box, checked against the (already made) mask.
void set_final_box(Instance& inst, const FinalDetections& d, int i, int width, int height, int* corrected) {
  const float* b = d.boxes + static_cast<size_t>(i) * 4;
  const float sx = d.normalized_boxes ? static_cast<float>(width) : 1.f, sy = d.normalized_boxes ? static_cast<float>(height) : 1.f;
  const Box raw{b[0] * sx, b[1] * sy, b[2] * sx, b[3] * sy};
  inst.box = clamp_box(raw, width, height);
  if (inst.area == 0) return;
  const Box bounds = mask_bounds(inst.mask);
  if (boxes_agree(inst.box, bounds)) return;
  if (corrected) ++*corrected;
  for (int side : d.export_sides) {
    const float rx = static_cast<float>(width) / side, ry = static_cast<float>(height) / side;
    const Box rescaled = clamp_box({raw.x0 * rx, raw.y0 * ry, raw.x1 * rx, raw.y1 * ry}, width, height);
    if (boxes_agree(rescaled, bounds)) {
      inst.box = rescaled;
      return;
    }
  }
  inst.box = bounds;
}

}  // namespace

std::vector<Instance> instances_from_raw_heads(const RawHeads& h, int width, int height, const SegmentOptions& options) {
  const float presence = h.has_presence ? sigmoid(h.presence_logit) : 1.f;
  const float p = std::clamp(options.mask_threshold, 1e-6f, 1.f - 1e-6f);
  const float cut = std::log(p / (1.f - p));
  std::vector<int> kept;
  for (int q = 0; q < h.queries; ++q) {
    if (sigmoid(h.logits[q]) * presence > options.score_threshold) kept.push_back(q);
  }
  // Each instance is upsampled to the full image: independent work, done in parallel.
  std::vector<Instance> out(kept.size());
  core::parallel_for(kept.size(), [&](size_t k) {
    const int q = kept[k];
    Instance& inst = out[k];
    inst.score = sigmoid(h.logits[q]) * presence;
    const float* b = h.boxes + static_cast<size_t>(q) * 4;
    inst.box = clamp_box({b[0] * width, b[1] * height, b[2] * width, b[3] * height}, width, height);
    const float* plane = h.masks + static_cast<size_t>(q) * h.mask_h * h.mask_w;
    if (h.resize_probabilities) {
      std::vector<float> probabilities(plane, plane + static_cast<size_t>(h.mask_h) * h.mask_w);
      for (auto& v : probabilities) v = sigmoid(v);
      inst.mask = upsample_mask(probabilities.data(), h.mask_h, h.mask_w, height, width, options.mask_threshold);
    } else {
      inst.mask = upsample_mask(plane, h.mask_h, h.mask_w, height, width, cut);
    }
    inst.area = inst.mask.area();
  });
  return out;
}

bool boxes_agree(const Box& a, const Box& b) {
  const float tx = std::max(2.f, 0.1f * (b.x1 - b.x0)), ty = std::max(2.f, 0.1f * (b.y1 - b.y0));
  return std::abs(a.x0 - b.x0) <= tx && std::abs(a.x1 - b.x1) <= tx && std::abs(a.y0 - b.y0) <= ty && std::abs(a.y1 - b.y1) <= ty;
}

std::vector<Instance> instances_from_final(const FinalDetections& d, int width, int height, const SegmentOptions& options, int* corrected) {
  std::vector<Instance> out;
  if (corrected) *corrected = 0;
  const size_t plane = static_cast<size_t>(d.mask_h) * d.mask_w;
  std::vector<std::uint8_t> resized;  // one image-sized raster, reused: the instances keep only their bounds
  for (int i = 0; i < d.count; ++i) {
    if (!(d.scores[i] > options.score_threshold)) continue;
    Instance inst;
    inst.score = d.scores[i];
    if (d.probabilities) {
      inst.mask = upsample_mask(d.probabilities + plane * i, d.mask_h, d.mask_w, height, width, options.mask_threshold);
      inst.area = inst.mask.area();
      set_final_box(inst, d, i, width, height, corrected);
      out.push_back(std::move(inst));
      continue;
    }
    const std::uint8_t* m = d.masks + plane * i;
    if (d.mask_h == height && d.mask_w == width) {
      inst.mask = Mask::from_raster(width, height, {m, plane});
    } else {  // nearest-neighbour if the graph's mask size differs from the image
      resized.resize(static_cast<size_t>(width) * height);
      for (int y = 0; y < height; ++y) {
        const int sy = std::min(static_cast<int>((y + 0.5) * d.mask_h / height), d.mask_h - 1);
        for (int x = 0; x < width; ++x) {
          const int sx = std::min(static_cast<int>((x + 0.5) * d.mask_w / width), d.mask_w - 1);
          resized[static_cast<size_t>(y) * width + x] = m[static_cast<size_t>(sy) * d.mask_w + sx] ? 1 : 0;
        }
      }
      inst.mask = Mask::from_raster(width, height, resized);
    }
    inst.area = inst.mask.area();
    set_final_box(inst, d, i, width, height, corrected);
    out.push_back(std::move(inst));
  }
  return out;
}

void finalize_instances(std::vector<Instance>& instances, const SegmentOptions& options) {
  std::erase_if(instances, [&](const Instance& i) { return i.area < std::max<std::int64_t>(options.min_area, 0); });
  std::stable_sort(instances.begin(), instances.end(), [](const Instance& a, const Instance& b) { return a.score > b.score; });
  if (options.nms_iou > 0) {
    std::vector<Instance> kept;
    for (auto& inst : instances) {
      const bool suppressed =
          std::any_of(kept.begin(), kept.end(), [&](const Instance& k) { return mask_iou(k.mask, inst.mask) > options.nms_iou; });
      if (!suppressed) kept.push_back(std::move(inst));
    }
    instances = std::move(kept);
  }
  if (options.max_instances > 0 && instances.size() > static_cast<size_t>(options.max_instances)) {
    instances.resize(static_cast<size_t>(options.max_instances));
  }
}

void resize_bilinear(const float* src, int src_h, int src_w, int dst_h, int dst_w, float* dst) {
  const Axis ax = bilinear_axis(src_w, dst_w), ay = bilinear_axis(src_h, dst_h);
  std::vector<float> row0(dst_w), row1(dst_w);
  const auto fill = [&](int sy, std::vector<float>& row) {
    const float* s = src + static_cast<size_t>(sy) * src_w;
    for (int x = 0; x < dst_w; ++x) row[x] = s[ax.i0[x]] + ax.lambda[x] * (s[ax.i1[x]] - s[ax.i0[x]]);
  };
  int cached0 = -1, cached1 = -1;
  for (int y = 0; y < dst_h; ++y) {
    if (ay.i0[y] != cached0) {
      if (ay.i0[y] == cached1)
        std::swap(row0, row1), std::swap(cached0, cached1);
      else
        fill(ay.i0[y], row0), cached0 = ay.i0[y];
    }
    if (ay.i1[y] != cached1) fill(ay.i1[y], row1), cached1 = ay.i1[y];
    const float l = ay.lambda[y];
    float* d = dst + static_cast<size_t>(y) * dst_w;
    for (int x = 0; x < dst_w; ++x) d[x] = row0[x] + l * (row1[x] - row0[x]);
  }
}

Box mask_bounds(const Mask& mask) {
  const TileRect b = mask.bounds();
  if (mask.empty()) return {};
  return {static_cast<float>(b.x0), static_cast<float>(b.y0), static_cast<float>(b.x1), static_cast<float>(b.y1)};
}

float box_iou(const Box& a, const Box& b) {
  const float iw = std::max(0.f, std::min(a.x1, b.x1) - std::max(a.x0, b.x0));
  const float ih = std::max(0.f, std::min(a.y1, b.y1) - std::max(a.y0, b.y0));
  const float inter = iw * ih;
  const float uni = (a.x1 - a.x0) * (a.y1 - a.y0) + (b.x1 - b.x0) * (b.y1 - b.y0) - inter;
  return uni > 0 ? inter / uni : 0.f;
}

std::int64_t mask_intersection(const Mask& a, const Mask& b) {
  if (a.width() != b.width() || a.height() != b.height()) return 0;
  // Only the bounds' overlap can hold shared pixels.
  const TileRect p = a.bounds(), q = b.bounds();
  const int x0 = std::max(p.x0, q.x0), y0 = std::max(p.y0, q.y0), x1 = std::min(p.x1, q.x1), y1 = std::min(p.y1, q.y1);
  std::int64_t inter = 0;
  for (int y = y0; y < y1; ++y) {
    const auto ra = a.row(y), rb = b.row(y);
    for (int x = x0; x < x1; ++x) inter += ra[static_cast<size_t>(x - p.x0)] & rb[static_cast<size_t>(x - q.x0)];
  }
  return inter;
}

float mask_iou(const Mask& a, const Mask& b) {
  const std::int64_t inter = mask_intersection(a, b), uni = a.area() + b.area() - inter;
  return uni > 0 ? static_cast<float>(inter) / static_cast<float>(uni) : 0.f;
}

}  // namespace sam3::predictor
