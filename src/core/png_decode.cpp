#include <png.h>

#include "core/codecs.h"
#include "sam3/error.h"

namespace sam3 {

Image decode_png(std::span<const std::uint8_t> bytes, const std::string& name, std::int64_t max_pixels) {
  // libpng's simplified API keeps its messages in the struct instead of printing them.
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  const auto fail = [&](const char* what) {
    const std::string message = png.message[0] ? png.message : what;
    png_image_free(&png);
    return Error(ErrorCode::kImageCorrupt, name + ": PNG data cannot be decoded (" + message + "); the file is corrupt or truncated");
  };
  if (!png_image_begin_read_from_memory(&png, bytes.data(), bytes.size())) throw fail("bad header");
  if (std::int64_t{png.width} * png.height > max_pixels) {
    const std::int64_t w = png.width, h = png.height;
    png_image_free(&png);
    throw Error(ErrorCode::kImageTooLarge, too_large_message(name, w, h, max_pixels));
  }
  png.format = PNG_FORMAT_RGB;
  Image image;
  image.width = static_cast<int>(png.width);
  image.height = static_cast<int>(png.height);
  image.rgb.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, image.rgb.data(), 0, nullptr)) throw fail("bad data");
  png_image_free(&png);
  return image;
}

}  // namespace sam3
