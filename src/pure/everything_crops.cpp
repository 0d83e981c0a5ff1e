#include "pure/everything_crops.h"

#include <algorithm>
#include <cmath>

#include "predictor/postprocess.h"

namespace sam3::pure {

std::vector<EverythingCrop> everything_crops(int width, int height, int layers, float overlap_ratio) {
  std::vector<EverythingCrop> crops{{{0, 0, width, height}, 0}};
  const int short_side = std::min(width, height);
  for (int layer = 1; layer <= layers; ++layer) {
    const int n = 1 << layer;  // crops per side
    const int overlap = static_cast<int>(overlap_ratio * static_cast<float>(short_side) * 2.f / static_cast<float>(n));
    const int crop_w = static_cast<int>(std::ceil(static_cast<double>(overlap * (n - 1) + width) / n));
    const int crop_h = static_cast<int>(std::ceil(static_cast<double>(overlap * (n - 1) + height) / n));
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < n; ++i) {
        const int x0 = (crop_w - overlap) * i, y0 = (crop_h - overlap) * j;
        crops.push_back({{x0, y0, std::min(x0 + crop_w, width), std::min(y0 + crop_h, height)}, layer});
      }
    }
  }
  return crops;
}

bool cut_by_crop(const Box& box, const TileRect& crop, int image_width, int image_height) {
  constexpr float kNear = 20.f;  // SAM's is_box_near_crop_edge tolerance, pixels
  const float crop_edges[4] = {static_cast<float>(crop.x0), static_cast<float>(crop.y0), static_cast<float>(crop.x1),
                               static_cast<float>(crop.y1)};
  const float image_edges[4] = {0.f, 0.f, static_cast<float>(image_width), static_cast<float>(image_height)};
  const float sides[4] = {box.x0, box.y0, box.x1, box.y1};
  for (int k = 0; k < 4; ++k) {
    if (std::abs(sides[k] - crop_edges[k]) <= kNear && std::abs(sides[k] - image_edges[k]) > kNear) return true;
  }
  return false;
}

void move_into_image(std::vector<CompactInstance>& instances, const TileRect& crop, int image_width, int image_height) {
  for (CompactInstance& inst : instances) move_mask(inst, crop.x0, crop.y0, image_width, image_height);
}

std::vector<CompactInstance> merge_crops(std::vector<std::pair<EverythingCrop, std::vector<CompactInstance>>> per_crop,
                                         float nms_threshold) {
  struct Candidate {
    std::int64_t crop_area;
    CompactInstance* inst;
  };
  std::vector<Candidate> all;
  for (auto& [crop, instances] : per_crop) {
    const std::int64_t area = static_cast<std::int64_t>(crop.window.x1 - crop.window.x0) * (crop.window.y1 - crop.window.y0);
    for (CompactInstance& inst : instances) all.push_back({area, &inst});
  }
  // Smaller crops first (SAM scores each mask 1 / its crop's area); within a crop, the crop's
  // own order (best predicted IoU first) stays.
  std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) { return a.crop_area < b.crop_area; });
  std::vector<CompactInstance> kept;
  for (const Candidate& c : all) {
    const bool duplicate = std::any_of(kept.begin(), kept.end(),
                                       [&](const CompactInstance& k) { return predictor::box_iou(k.box, c.inst->box) > nms_threshold; });
    if (!duplicate) kept.push_back(std::move(*c.inst));
  }
  std::stable_sort(kept.begin(), kept.end(), [](const CompactInstance& a, const CompactInstance& b) { return a.score > b.score; });
  return kept;
}

}  // namespace sam3::pure
