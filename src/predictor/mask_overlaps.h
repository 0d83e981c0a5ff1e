// Masks made non-overlapping: a pixel claimed by several masks stays with the one of highest
// priority (ties: the earlier mask), as SAM 3.1's object-wise non-overlap constraint does. It
// works on the masks' bounds, one mask made at a time, so K objects on a large frame never cost
// K frame-sized rasters (64 objects on a 6000x6000 frame held 2.3 GB that way).
#pragma once

#include <functional>
#include <vector>

#include "sam3/types.h"

namespace sam3::predictor {

// masks[k] = make(k), made one at a time in priority order, each losing at once every pixel a
// mask made before it keeps: what is held is the masks kept so far and the one being made.
std::vector<Mask> exclusive_masks(const std::vector<float>& priority, const std::function<Mask(size_t)>& make);

// masks[k] loses every pixel some mask of higher priority[k] (or equal priority and lower k) also has.
void remove_overlaps(std::vector<Mask>& masks, const std::vector<float>& priority);

}  // namespace sam3::predictor
