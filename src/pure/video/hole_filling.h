// The official post-processing of mask logits (sam3/model/sam3_tracker_utils.py
// fill_holes_in_mask_scores): small background components become foreground (+0.1) and then
// small foreground components ("sprinkles") become background (-0.1). Components are
// 8-connected (skimage.measure.label's default, the CPU path of the official code). A
// background component counts whether or not it touches the border. SAM 3.1 passes one area
// for both passes (its fill_hole_area; 0 turns both off); SAM3 used 16. No ONNX Runtime here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sam3::pure::video {

inline constexpr float kFilledHoleLogit = 0.1f;
inline constexpr float kRemovedSprinkleLogit = -0.1f;

// The size of the 8-connected component of each pixel where `on` is 1 (0 where it is 0).
std::vector<std::int32_t> component_areas(const std::vector<std::uint8_t>& on, int height, int width);

// In place on one [height, width] plane of logits. Holes: background (logit <= 0) components
// of at most `max_area` pixels. Sprinkles, judged after the holes are filled: foreground
// components of at most min(max_area, foreground area / 2) pixels (so a tiny object alone
// survives). `max_area` <= 0: nothing changes.
void fill_holes_and_remove_sprinkles(float* logits, int height, int width, int max_area);

}  // namespace sam3::pure::video
