// Writing results: PNG and JPEG encodings of images and overlays, to be written with
// write_file_atomic (sam3/files.h). Thread-safe: every function is pure.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sam3/files.h"
#include "sam3/image.h"
#include "sam3/mask_encodings.h"
#include "sam3/types.h"

namespace sam3 {

// PNG and JPEG encodings of images (masks: mask_encodings.h).
std::string encode_rgb_png(const Image& image);
std::string encode_rgb_jpeg(const Image& image, int quality = 90);

// The image with each instance tinted in its own colour, its box and "label score".
Image render_overlay(const Image& image, const std::vector<Instance>& instances, const std::string& label);

}  // namespace sam3
