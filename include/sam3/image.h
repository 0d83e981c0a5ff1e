// Decoded images: 8-bit RGB, EXIF orientation applied, in original resolution.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "sam3/types.h"

namespace sam3 {

struct Image {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgb;  // interleaved R,G,B rows, width*height*3 bytes
};

struct ImageLoadOptions {
  // Images with more pixels are refused before decoding (decompression bombs, memory).
  std::int64_t max_pixels = 250'000'000;
  // Files larger than this are refused before reading.
  std::int64_t max_file_bytes = std::int64_t{2} << 30;
};

// The bytes of an image file: regular files only (a device, FIFO, socket or folder is refused
// at once, never read), at most max_file_bytes. Throws kImageUnreadable or kImageTooLarge.
std::vector<std::uint8_t> read_image_file(const std::filesystem::path& path, const ImageLoadOptions& options = {});

// JPEG, PNG, WebP, BMP and TIFF. Throws sam3::Error (kImageUnreadable, kImageUnsupported,
// kImageCorrupt, kImageTooLarge) with a message naming the file and the problem.
Image load_image(const std::filesystem::path& path, const ImageLoadOptions& options = {});
// Same, from bytes in memory; `name` is used in error messages.
Image decode_image(std::span<const std::uint8_t> bytes, const std::string& name, const ImageLoadOptions& options = {});

// The pixels of a window of the image (a tile, a crop). Throws kInvalidArgument when the window
// is empty or leaves the image.
Image crop_image(const Image& image, const TileRect& window);

}  // namespace sam3
