// libFuzzer target: arbitrary bytes as an image file of any supported format. The only
// acceptable outcomes are a decoded image of the size its header promised (within the pixel
// limit) or a sam3::Error of an image kind; never a crash, hang, leak or sanitizer report.
#include <cstdint>
#include <cstdlib>
#include <span>

#include "sam3/error.h"
#include "sam3/image.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  sam3::ImageLoadOptions options;
  options.max_pixels = 4'000'000;  // keeps each run fast; the header check is what is tested
  try {
    const auto image = sam3::decode_image(std::span(data, size), "fuzz", options);
    if (image.width <= 0 || image.height <= 0 || image.rgb.size() != static_cast<size_t>(image.width) * image.height * 3 ||
        std::int64_t{image.width} * image.height > options.max_pixels) {
      std::abort();
    }
  } catch (const sam3::Error& e) {
    switch (e.code()) {
      case sam3::ErrorCode::kImageUnreadable:
      case sam3::ErrorCode::kImageUnsupported:
      case sam3::ErrorCode::kImageCorrupt:
      case sam3::ErrorCode::kImageTooLarge:
        break;
      default:
        std::abort();
    }
  }
  return 0;
}
