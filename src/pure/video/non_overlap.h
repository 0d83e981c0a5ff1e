// SAM 3.1's per-pixel non-overlap of a frame's masks (video_tracking_multiplex.py
// _apply_non_overlapping_constraints), which the official code applies when it re-encodes a
// frame's memory with objects added to it (_consolidate_temp_output_across_obj): at each pixel
// the object with the highest logit keeps it (the first on ties, as torch.argmax), every other
// object's logit there is clamped to at most -10. One object: nothing changes. No ONNX Runtime.
#pragma once

#include <cstddef>
#include <vector>

namespace sam3::pure::video {

inline constexpr float kOverlapLoserLogit = -10.0f;

// `planes`: one logit plane per object, `pixels` floats each, changed in place.
void keep_highest_per_pixel(const std::vector<float*>& planes, std::size_t pixels);

}  // namespace sam3::pure::video
