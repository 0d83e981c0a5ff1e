#include "core/image_header.h"

#include <cstring>

namespace sam3 {
namespace {

std::uint32_t be16(const std::uint8_t* p) { return (p[0] << 8) | p[1]; }
std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (p[1] << 16) | (p[2] << 8) | p[3];
}
std::uint32_t le16(const std::uint8_t* p) { return p[0] | (p[1] << 8); }
std::uint32_t le24(const std::uint8_t* p) { return p[0] | (p[1] << 8) | (p[2] << 16); }
std::uint32_t le32(const std::uint8_t* p) { return le24(p) | (std::uint32_t{p[3]} << 24); }

bool starts_with(std::span<const std::uint8_t> b, const char* magic, size_t offset = 0) {
  const size_t n = std::strlen(magic);
  return b.size() >= offset + n && std::memcmp(b.data() + offset, magic, n) == 0;
}

std::optional<ImageSize> jpeg_size(std::span<const std::uint8_t> b) {
  size_t i = 2;
  while (i + 9 < b.size()) {
    if (b[i] != 0xFF) return std::nullopt;
    const std::uint8_t marker = b[i + 1];
    if (marker == 0xFF) { ++i; continue; }
    if (marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7) || marker == 0x01) { i += 2; continue; }
    const size_t length = be16(&b[i + 2]);
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
    if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
      return ImageSize{be16(&b[i + 7]), be16(&b[i + 5])};
    }
    i += 2 + length;
  }
  return std::nullopt;
}

std::optional<ImageSize> webp_size(std::span<const std::uint8_t> b) {
  if (b.size() < 30) return std::nullopt;
  if (starts_with(b, "VP8 ", 12)) return ImageSize{le16(&b[26]) & 0x3FFF, le16(&b[28]) & 0x3FFF};
  if (starts_with(b, "VP8L", 12)) {
    const std::uint32_t v = le32(&b[21]);
    return ImageSize{(v & 0x3FFF) + 1, ((v >> 14) & 0x3FFF) + 1};
  }
  if (starts_with(b, "VP8X", 12)) return ImageSize{le24(&b[24]) + 1, le24(&b[27]) + 1};
  return std::nullopt;
}

}  // namespace

ImageFormat sniff_format(std::span<const std::uint8_t> b) {
  if (b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return ImageFormat::kJpeg;
  if (starts_with(b, "\x89PNG\r\n\x1a\n")) return ImageFormat::kPng;
  if (starts_with(b, "RIFF") && starts_with(b, "WEBP", 8)) return ImageFormat::kWebp;
  if (starts_with(b, "BM")) return ImageFormat::kBmp;
  if (starts_with(b, "II*") || starts_with(b, "MM")) {
    if (b.size() >= 4 && ((b[0] == 'I' && b[3] == 0) || (b[0] == 'M' && b[2] == 0 && b[3] == 42))) {
      return ImageFormat::kTiff;
    }
  }
  if (starts_with(b, "GIF8")) return ImageFormat::kGif;
  return ImageFormat::kUnknown;
}

const char* format_name(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg: return "JPEG";
    case ImageFormat::kPng: return "PNG";
    case ImageFormat::kWebp: return "WebP";
    case ImageFormat::kBmp: return "BMP";
    case ImageFormat::kTiff: return "TIFF";
    case ImageFormat::kGif: return "GIF";
    default: return "unknown";
  }
}

std::optional<ImageSize> read_header_size(std::span<const std::uint8_t> b, ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng:
      if (b.size() >= 24) return ImageSize{be32(&b[16]), be32(&b[20])};
      return std::nullopt;
    case ImageFormat::kJpeg: return jpeg_size(b);
    case ImageFormat::kWebp: return webp_size(b);
    case ImageFormat::kBmp:
      if (b.size() >= 26) {
        const auto h = static_cast<std::int32_t>(le32(&b[22]));
        return ImageSize{static_cast<std::int32_t>(le32(&b[18])), h < 0 ? -std::int64_t{h} : h};
      }
      return std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace sam3
