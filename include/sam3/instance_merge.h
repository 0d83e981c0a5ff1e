// Instances of one concept found by several prompts (a label's synonyms: "car, automobile")
// as one list.
#pragma once

#include <vector>

#include "sam3/types.h"

namespace sam3 {

// All instances, best first; one whose mask overlaps a better one's by more than `iou`
// (intersection over union) is the same object found twice and is dropped.
std::vector<Instance> merge_instances(std::vector<Instance> instances, float iou = 0.5f);

}  // namespace sam3
