// JPEG, PNG and WebP decoded with libjpeg, libpng and libwebp directly, with error handlers of our own: a
// damaged file is a sam3::Error carrying the codec's message (never a line the codec prints
// on stderr, never a silently grey image), and EXIF orientation is applied to JPEGs.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "sam3/image.h"

namespace sam3 {

// Both refuse (kImageTooLarge) an image over `max_pixels` from its header, before allocating.
Image decode_jpeg(std::span<const std::uint8_t> bytes, const std::string& name, std::int64_t max_pixels);
Image decode_png(std::span<const std::uint8_t> bytes, const std::string& name, std::int64_t max_pixels);
// WebP too: bytes OpenCV's WebP decoder would not claim fell through its decoder list to its
// DICOM reader, which aborts the process on some inputs (found by image_decode_fuzz).
Image decode_webp(std::span<const std::uint8_t> bytes, const std::string& name, std::int64_t max_pixels);
// The kImageTooLarge message for an image of w x h over `limit` pixels.
std::string too_large_message(const std::string& name, std::int64_t w, std::int64_t h, std::int64_t limit);

// The EXIF orientation (1..8) in a JPEG's APP1 segment, 1 when there is none.
int exif_orientation(std::span<const std::uint8_t> app1);
// Turns an image as EXIF orientation `o` says (2..8; 1 leaves it).
Image apply_orientation(Image image, int o);

}  // namespace sam3
