// JPEG, PNG, WebP and TIFF decoded with libjpeg, libpng, libwebp and libtiff directly (BMP by
// sam3 itself), with error handlers of our own: a
// damaged file is a sam3::Error carrying the codec's message (never a line the codec prints
// on stderr, never a silently grey image), and EXIF orientation is applied to JPEGs.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "sam3/image.h"

namespace sam3::core {

// Both refuse (kImageTooLarge) an image over `max_pixels` from its header, before allocating.
Image decode_jpeg(std::span<const std::uint8_t> bytes, const std::string& name, std::int64_t max_pixels);
Image decode_png(std::span<const std::uint8_t> bytes, const std::string& name, std::int64_t max_pixels);
// WebP too: bytes OpenCV's WebP decoder would not claim fell through its decoder list to its
// DICOM reader, which aborts the process on some inputs (found by image_decode_fuzz).
Image decode_webp(std::span<const std::uint8_t> bytes, const std::string& name, std::int64_t max_pixels);
// BMP (sam3's own reader) and TIFF (libtiff), checked the same way.
Image decode_bmp(std::span<const std::uint8_t> bytes, const std::string& name, std::int64_t max_pixels);
Image decode_tiff(std::span<const std::uint8_t> bytes, const std::string& name, std::int64_t max_pixels);

// PNG (libpng) of 8-bit RGB, 8-bit grey or 16-bit grey pixels (row-major, native-endian for
// 16 bits), and JPEG (libjpeg) of 8-bit RGB; kIo when the codec fails.
std::string encode_png(const void* pixels, int width, int height, int channels, int bit_depth);
std::string encode_jpeg(const std::uint8_t* rgb, int width, int height, int quality);

// The kImageTooLarge message for an image of w x h over `limit` pixels.
std::string too_large_message(const std::string& name, std::int64_t w, std::int64_t h, std::int64_t limit);

// The EXIF orientation (1..8) in a JPEG's APP1 segment, 1 when there is none.
int exif_orientation(std::span<const std::uint8_t> app1);
// Turns an image as EXIF orientation `o` says (2..8; 1 leaves it).
Image apply_orientation(Image image, int o);

}  // namespace sam3::core
