// JPEG and PNG decoded with libjpeg and libpng directly, with error handlers of our own: a
// damaged file is a sam3::Error carrying the codec's message (never a line the codec prints
// on stderr, never a silently grey image), and EXIF orientation is applied to JPEGs.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "sam3/image.h"

namespace sam3 {

Image decode_jpeg(std::span<const std::uint8_t> bytes, const std::string& name);
Image decode_png(std::span<const std::uint8_t> bytes, const std::string& name);

// The EXIF orientation (1..8) in a JPEG's APP1 segment, 1 when there is none.
int exif_orientation(std::span<const std::uint8_t> app1);
// Turns an image as EXIF orientation `o` says (2..8; 1 leaves it).
Image apply_orientation(Image image, int o);

}  // namespace sam3
