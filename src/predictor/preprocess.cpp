#include "predictor/preprocess.h"

#include <algorithm>
#include <cmath>

namespace sam3::predictor {
namespace {

// Per output index: first source index and normalized weights of the taps.
struct Taps {
  std::vector<int> first;
  std::vector<int> count;
  std::vector<float> weights;  // out * max_taps
  int max_taps = 0;
};

Taps triangle_taps(int in_size, int out_size) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = filter_scale;  // bilinear support 1, widened when shrinking
  Taps t;
  t.max_taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  t.first.resize(out_size);
  t.count.resize(out_size);
  t.weights.assign(static_cast<size_t>(out_size) * t.max_taps, 0.f);
  for (int i = 0; i < out_size; ++i) {
    const double center = (i + 0.5) * scale;
    const int lo = std::max(static_cast<int>(center - support + 0.5), 0);
    const int hi = std::min(static_cast<int>(center + support + 0.5), in_size);
    double total = 0;
    float* w = &t.weights[static_cast<size_t>(i) * t.max_taps];
    const int n = std::min(hi - lo, t.max_taps);
    for (int k = 0; k < n; ++k) {
      const double x = std::abs((k + lo - center + 0.5) / filter_scale);
      const double v = x < 1.0 ? 1.0 - x : 0.0;
      w[k] = static_cast<float>(v);
      total += v;
    }
    if (total > 0)
      for (int k = 0; k < n; ++k) w[k] = static_cast<float>(w[k] / total);
    t.first[i] = lo;
    t.count[i] = n;
  }
  return t;
}

}  // namespace

std::vector<float> resize_planar(const Image& image, int out_w, int out_h) {
  const int w = image.width, h = image.height;
  const Taps tx = triangle_taps(w, out_w), ty = triangle_taps(h, out_h);
  // Horizontal pass: h rows x out_w columns x 3, interleaved.
  std::vector<float> rows(static_cast<size_t>(h) * out_w * 3);
  for (int y = 0; y < h; ++y) {
    const std::uint8_t* src = &image.rgb[static_cast<size_t>(y) * w * 3];
    float* dst = &rows[static_cast<size_t>(y) * out_w * 3];
    for (int x = 0; x < out_w; ++x) {
      const float* wt = &tx.weights[static_cast<size_t>(x) * tx.max_taps];
      float r = 0, g = 0, b = 0;
      for (int k = 0; k < tx.count[x]; ++k) {
        const std::uint8_t* p = src + static_cast<size_t>(tx.first[x] + k) * 3;
        r += wt[k] * p[0];
        g += wt[k] * p[1];
        b += wt[k] * p[2];
      }
      dst[x * 3] = r;
      dst[x * 3 + 1] = g;
      dst[x * 3 + 2] = b;
    }
  }
  // Vertical pass into planar output.
  const size_t plane = static_cast<size_t>(out_w) * out_h;
  std::vector<float> out(plane * 3);
  for (int y = 0; y < out_h; ++y) {
    const float* wt = &ty.weights[static_cast<size_t>(y) * ty.max_taps];
    for (int x = 0; x < out_w; ++x) {
      float acc[3] = {0, 0, 0};
      for (int k = 0; k < ty.count[y]; ++k) {
        const float* p = &rows[(static_cast<size_t>(ty.first[y] + k) * out_w + x) * 3];
        acc[0] += wt[k] * p[0];
        acc[1] += wt[k] * p[1];
        acc[2] += wt[k] * p[2];
      }
      for (int c = 0; c < 3; ++c) out[c * plane + static_cast<size_t>(y) * out_w + x] = acc[c];
    }
  }
  return out;
}

void normalize_sam3(std::vector<float>& planes) {
  for (float& v : planes) v = v / 127.5f - 1.0f;
}

std::vector<std::uint8_t> to_uint8(const std::vector<float>& planes) {
  std::vector<std::uint8_t> out(planes.size());
  std::transform(planes.begin(), planes.end(), out.begin(),
                 [](float v) { return static_cast<std::uint8_t>(std::clamp(std::lround(v), 0l, 255l)); });
  return out;
}

}  // namespace sam3::predictor
