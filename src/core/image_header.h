// Recognises an image format by its magic bytes and reads its size from the header, so
// oversized images are refused before any pixel is decoded.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace sam3::core {

enum class ImageFormat { kUnknown, kJpeg, kPng, kWebp, kBmp, kTiff, kGif, kBigTiff };

ImageFormat sniff_format(std::span<const std::uint8_t> bytes);
const char* format_name(ImageFormat format);

struct ImageSize {
  std::int64_t width = 0, height = 0;
};
// nullopt when the header does not say, is not well-formed (bytes after a signature that are
// no header: a size read from them would call garbage "too large"), or the format is not
// parsed here.
std::optional<ImageSize> read_header_size(std::span<const std::uint8_t> bytes, ImageFormat format);
// What is wrong with a file's structure before it is decoded (a BMP truncated or with a depth
// no BMP has, a PNG signature without its IHDR), or nullopt. The decoders check the rest
// (core/codecs.h).
std::optional<std::string> structure_problem(std::span<const std::uint8_t> bytes, ImageFormat format);

}  // namespace sam3::core
