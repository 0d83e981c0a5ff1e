#include <webp/decode.h>

#include "core/codecs.h"
#include "sam3/error.h"

namespace sam3::core {

Image decode_webp(std::span<const std::uint8_t> bytes, const std::string& name, std::int64_t max_pixels) {
  WebPBitstreamFeatures features;
  if (WebPGetFeatures(bytes.data(), bytes.size(), &features) != VP8_STATUS_OK) {
    throw Error(ErrorCode::kImageCorrupt, name + ": WebP data cannot be decoded (bad header); the file is corrupt or truncated");
  }
  if (features.has_animation) {
    throw Error(ErrorCode::kImageUnsupported,
                name + ": animated WebP is not supported; save one frame as a still image (PNG, JPEG or WebP)");
  }
  if (std::int64_t{features.width} * features.height > max_pixels) {
    throw Error(ErrorCode::kImageTooLarge, too_large_message(name, features.width, features.height, max_pixels));
  }
  Image image;
  image.width = features.width;
  image.height = features.height;
  image.rgb.resize(static_cast<size_t>(image.width) * image.height * 3);
  if (!WebPDecodeRGBInto(bytes.data(), bytes.size(), image.rgb.data(), image.rgb.size(), image.width * 3)) {
    throw Error(ErrorCode::kImageCorrupt, name + ": WebP data cannot be decoded; the file is corrupt or truncated");
  }
  return image;
}

}  // namespace sam3::core
