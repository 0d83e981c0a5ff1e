#include "pure/video/hole_filling.h"

#include <algorithm>

namespace sam3::pure::video {

std::vector<std::int32_t> component_areas(const std::vector<std::uint8_t>& on, int height, int width) {
  const size_t n = static_cast<size_t>(height) * width;
  std::vector<std::int32_t> label(n, -1), areas(n, 0);
  std::vector<std::int32_t> sizes;
  std::vector<size_t> stack;
  for (size_t start = 0; start < n; ++start) {
    if (!on[start] || label[start] >= 0) continue;
    const auto id = static_cast<std::int32_t>(sizes.size());
    std::int32_t size = 0;
    label[start] = id;
    stack.push_back(start);
    while (!stack.empty()) {  // flood fill over the 8 neighbours
      const size_t p = stack.back();
      stack.pop_back();
      ++size;
      const int y = static_cast<int>(p / width), x = static_cast<int>(p % width);
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          const int ny = y + dy, nx = x + dx;
          if (ny < 0 || ny >= height || nx < 0 || nx >= width) continue;
          const size_t q = static_cast<size_t>(ny) * width + nx;
          if (on[q] && label[q] < 0) {
            label[q] = id;
            stack.push_back(q);
          }
        }
      }
    }
    sizes.push_back(size);
  }
  for (size_t p = 0; p < n; ++p) areas[p] = label[p] >= 0 ? sizes[label[p]] : 0;
  return areas;
}

void fill_holes_and_remove_sprinkles(float* logits, int height, int width, int max_area) {
  if (max_area <= 0) return;
  const size_t n = static_cast<size_t>(height) * width;
  std::vector<std::uint8_t> on(n);
  for (size_t p = 0; p < n; ++p) on[p] = logits[p] <= 0.0f;
  auto areas = component_areas(on, height, width);
  for (size_t p = 0; p < n; ++p) {
    if (on[p] && areas[p] <= max_area) logits[p] = kFilledHoleLogit;
  }
  std::int64_t foreground = 0;
  for (size_t p = 0; p < n; ++p) foreground += (on[p] = logits[p] > 0.0f);
  const std::int64_t sprinkle_area = std::min<std::int64_t>(foreground / 2, max_area);
  areas = component_areas(on, height, width);
  for (size_t p = 0; p < n; ++p) {
    if (on[p] && areas[p] <= sprinkle_area) logits[p] = kRemovedSprinkleLogit;
  }
}

}  // namespace sam3::pure::video
