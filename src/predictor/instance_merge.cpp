#include "sam3/instance_merge.h"

#include <algorithm>

#include "predictor/postprocess.h"

namespace sam3 {

std::vector<Instance> merge_instances(std::vector<Instance> instances, float iou) {
  std::stable_sort(instances.begin(), instances.end(), [](const Instance& a, const Instance& b) { return a.score > b.score; });
  std::vector<Instance> kept;
  for (auto& inst : instances) {
    const bool seen = std::any_of(kept.begin(), kept.end(), [&](const Instance& k) {
      return predictor::box_iou(k.box, inst.box) > 0 && predictor::mask_iou(k.mask, inst.mask) > iou;
    });
    if (!seen) kept.push_back(std::move(inst));
  }
  return kept;
}

}  // namespace sam3
