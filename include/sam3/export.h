// Writing results: files, images, overlays, all written atomically
// (a temporary file renamed into place, so a crash never leaves a half-written file).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sam3/image.h"
#include "sam3/mask_encodings.h"
#include "sam3/types.h"

namespace sam3 {

// Writes bytes to path via a temporary file in the same directory and a rename.
void write_file_atomic(const std::filesystem::path& path, const std::string& bytes);
// Removes the temporary files that write_file_atomic left in `dir` when its process died
// (names "<file>.tmp<pid>-<n>" whose process no longer runs); nothing else.
void remove_stale_temporaries(const std::filesystem::path& dir);
// PNG and JPEG encodings of images (masks: mask_encodings.h).
std::string encode_rgb_png(const Image& image);
std::string encode_rgb_jpeg(const Image& image, int quality = 90);

// The image with each instance tinted in its own colour, its box and "label score".
Image render_overlay(const Image& image, const std::vector<Instance>& instances, const std::string& label);

}  // namespace sam3
