// Image -> model input, as SAM3's processor does it: stretch (no letterbox) to S x S with
// antialiased bilinear resampling (the torchvision/PIL triangle filter widened when
// shrinking), planar RGB.
#pragma once

#include <cstdint>
#include <vector>

#include "sam3/image.h"

namespace sam3::predictor {

// [3, height, width] planar floats in 0..255 (the image stretched to width x height).
std::vector<float> resize_planar(const Image& image, int width, int height);
inline std::vector<float> resize_planar(const Image& image, int size) { return resize_planar(image, size, size); }
// x / 127.5 - 1 in place (SAM3's mean 0.5, std 0.5 on 0..1 values).
void normalize_sam3(std::vector<float>& planes);
// Rounded and clamped to 0..255, for graphs that normalize internally.
std::vector<std::uint8_t> to_uint8(const std::vector<float>& planes);

}  // namespace sam3::predictor
