#include "pure/video/low_res_masks.h"

#include <algorithm>
#include <numeric>

namespace sam3::pure::video {

std::int64_t BinaryMask::area() const { return std::count(bits.begin(), bits.end(), std::uint8_t{1}); }

BinaryMask binarize(const float* logits, int height, int width) {
  BinaryMask m{height, width, std::vector<std::uint8_t>(static_cast<size_t>(height) * width)};
  for (size_t i = 0; i < m.bits.size(); ++i) m.bits[i] = logits[i] > 0.0f ? 1 : 0;
  return m;
}

namespace {
std::int64_t intersection(const BinaryMask& a, const BinaryMask& b) {
  std::int64_t n = 0;
  const size_t count = std::min(a.bits.size(), b.bits.size());
  for (size_t i = 0; i < count; ++i) n += a.bits[i] & b.bits[i];
  return n;
}
}  // namespace

float mask_iom(const BinaryMask& a, const BinaryMask& b) {
  const auto smaller = std::min(a.area(), b.area());
  return smaller == 0 ? 0.0f : static_cast<float>(intersection(a, b)) / static_cast<float>(smaller);
}

float mask_iou(const BinaryMask& a, const BinaryMask& b) {
  const auto inter = intersection(a, b);
  const auto uni = a.area() + b.area() - inter;
  return uni == 0 ? 0.0f : static_cast<float>(inter) / static_cast<float>(uni);
}

std::vector<int> nms_by_iom(const std::vector<BinaryMask>& masks, const std::vector<float>& scores, float threshold) {
  std::vector<int> order(masks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return scores[a] > scores[b]; });
  std::vector<int> kept;
  for (int i : order) {
    bool drop = false;
    for (int k : kept) {
      if (mask_iom(masks[k], masks[i]) > threshold) {
        drop = true;
        break;
      }
    }
    if (!drop) kept.push_back(i);
  }
  return kept;
}

}  // namespace sam3::pure::video
