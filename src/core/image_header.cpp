#include "core/image_header.h"

#include <cstring>
#include <string_view>

namespace sam3::core {
namespace {

std::uint32_t be16(const std::uint8_t* p) { return (p[0] << 8) | p[1]; }
std::uint32_t be32(const std::uint8_t* p) { return (std::uint32_t{p[0]} << 24) | (p[1] << 16) | (p[2] << 8) | p[3]; }
std::uint32_t le16(const std::uint8_t* p) { return p[0] | (p[1] << 8); }
std::uint32_t le24(const std::uint8_t* p) { return p[0] | (p[1] << 8) | (p[2] << 16); }
std::uint32_t le32(const std::uint8_t* p) { return le24(p) | (std::uint32_t{p[3]} << 24); }

// `magic` as a view, so that magic numbers holding a NUL byte ("II*\0") compare whole.
bool starts_with(std::span<const std::uint8_t> b, std::string_view magic, size_t offset = 0) {
  const size_t n = magic.size();
  return b.size() >= offset + n && std::memcmp(b.data() + offset, magic.data(), n) == 0;
}

// The size in a PNG's IHDR chunk, which must come first (length 13, CRC right): bytes after
// the signature that are no IHDR have no size to trust (they are garbage, not a huge image).
std::uint32_t crc32_of(const std::uint8_t* p, size_t n) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

bool png_ihdr_intact(std::span<const std::uint8_t> b) {
  return b.size() >= 33 && be32(&b[8]) == 13 && starts_with(b, "IHDR", 12) && crc32_of(&b[12], 17) == be32(&b[29]);
}

std::optional<ImageSize> jpeg_size(std::span<const std::uint8_t> b) {
  size_t i = 2;
  while (i + 9 < b.size()) {
    if (b[i] != 0xFF) return std::nullopt;
    const std::uint8_t marker = b[i + 1];
    if (marker == 0xFF) {
      ++i;
      continue;
    }
    if (marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7) || marker == 0x01) {
      i += 2;
      continue;
    }
    const size_t length = be16(&b[i + 2]);
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
    if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
      // Only a well-formed frame header gives a size (precision, 1 to 4 components, a length
      // that fits them); anything else is for libjpeg to call corrupt.
      const unsigned precision = b[i + 4], components = b[i + 9];
      const bool sane = precision >= 2 && precision <= 16 && components >= 1 && components <= 4 && length == 8 + 3 * components;
      if (!sane) return std::nullopt;
      return ImageSize{be16(&b[i + 7]), be16(&b[i + 5])};
    }
    i += 2 + length;
  }
  return std::nullopt;
}

std::optional<ImageSize> webp_size(std::span<const std::uint8_t> b) {
  // Sizes only behind each kind's own signature (VP8's start code, VP8L's 0x2F byte, VP8X's
  // 10-byte chunk): after garbage, libwebp says the file is corrupt.
  if (b.size() < 30) return std::nullopt;
  if (starts_with(b, "VP8 ", 12)) {
    if (b[23] != 0x9D || b[24] != 0x01 || b[25] != 0x2A) return std::nullopt;
    return ImageSize{le16(&b[26]) & 0x3FFF, le16(&b[28]) & 0x3FFF};
  }
  if (starts_with(b, "VP8L", 12)) {
    if (b[20] != 0x2F) return std::nullopt;
    const std::uint32_t v = le32(&b[21]);
    return ImageSize{(v & 0x3FFF) + 1, ((v >> 14) & 0x3FFF) + 1};
  }
  if (starts_with(b, "VP8X", 12) && le32(&b[16]) == 10) return ImageSize{le24(&b[24]) + 1, le24(&b[27]) + 1};
  return std::nullopt;
}

// Width and height from the first IFD of a TIFF (tags 256 and 257).
std::optional<ImageSize> tiff_size(std::span<const std::uint8_t> b) {
  if (b.size() < 8) return std::nullopt;
  const bool le = b[0] == 'I';
  const auto u16 = [&](size_t at) { return le ? le16(&b[at]) : be16(&b[at]); };
  const auto u32 = [&](size_t at) { return le ? le32(&b[at]) : be32(&b[at]); };
  const std::uint64_t ifd = u32(4);
  if (ifd > b.size() || b.size() - ifd < 2) return std::nullopt;  // no wrap-around: ifd is untrusted
  const unsigned count = u16(ifd);
  std::int64_t width = -1, height = -1;
  for (unsigned i = 0; i < count; ++i) {
    const std::uint64_t at = ifd + 2 + std::uint64_t{i} * 12;
    if (at > b.size() || b.size() - at < 12) break;
    const unsigned tag = u16(at), type = u16(at + 2);
    const std::int64_t value = type == 3 ? std::int64_t{u16(at + 8)} : type == 4 ? std::int64_t{u32(at + 8)} : -1;
    // The first entry of a known type counts (as in libtiff); later ones, of any type, do not.
    if (tag == 256 && width < 0 && value >= 0) width = value;
    if (tag == 257 && height < 0 && value >= 0) height = value;
  }
  if (width < 0 || height < 0) return std::nullopt;
  return ImageSize{width, height};
}

}  // namespace

std::optional<std::string> structure_problem(std::span<const std::uint8_t> b, ImageFormat format) {
  switch (format) {
    case ImageFormat::kBmp: {
      if (b.size() >= 6 && le32(&b[2]) > b.size()) return "BMP data is shorter than its header says: the file is truncated";
      const bool core = le32(&b[14]) == 12;  // sniff_format has read the header's size
      if (b.size() >= (core ? 26u : 30u)) {
        const std::uint32_t bpp = le16(&b[core ? 24 : 28]);
        if (bpp != 1 && bpp != 2 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32) {
          return "BMP header gives " + std::to_string(bpp) + " bits per pixel, which no BMP has: the file is corrupt";
        }
      }
      return std::nullopt;
    }
    case ImageFormat::kPng:
      if (!png_ihdr_intact(b)) {
        return "PNG signature is not followed by an intact IHDR header (the chunk every PNG starts with): the file is corrupt";
      }
      if (be32(&b[16]) > 0x7FFFFFFFu || be32(&b[20]) > 0x7FFFFFFFu) {
        return "PNG header gives a size over 2^31 - 1 pixels a side, which no PNG has: the file is corrupt";
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

ImageFormat sniff_format(std::span<const std::uint8_t> b) {
  if (b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return ImageFormat::kJpeg;
  if (starts_with(b, "\x89PNG\r\n\x1a\n")) return ImageFormat::kPng;
  // As strict as OpenCV's own signature checks: bytes no decoder claims must not reach
  // imdecode, whose fallbacks (DICOM, GDAL) write them to temporary files.
  if (starts_with(b, "RIFF") && starts_with(b, "WEBPVP8", 8)) return ImageFormat::kWebp;
  if (starts_with(b, "BM") && b.size() >= 18) {
    const std::uint32_t dib = le32(&b[14]);
    if (dib == 12 || dib == 40 || dib == 52 || dib == 56 || dib == 64 || dib == 108 || dib == 124) return ImageFormat::kBmp;
  }
  using namespace std::string_view_literals;
  if (starts_with(b, "II*\0"sv) || starts_with(b, "MM\0*"sv)) return ImageFormat::kTiff;
  if (starts_with(b, "II+\0"sv) || starts_with(b, "MM\0+"sv)) return ImageFormat::kBigTiff;
  if (starts_with(b, "GIF8")) return ImageFormat::kGif;
  return ImageFormat::kUnknown;
}

const char* format_name(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg:
      return "JPEG";
    case ImageFormat::kPng:
      return "PNG";
    case ImageFormat::kWebp:
      return "WebP";
    case ImageFormat::kBmp:
      return "BMP";
    case ImageFormat::kTiff:
      return "TIFF";
    case ImageFormat::kGif:
      return "GIF";
    case ImageFormat::kBigTiff:
      return "BigTIFF";
    default:
      return "unknown";
  }
}

std::optional<ImageSize> read_header_size(std::span<const std::uint8_t> b, ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng:
      if (png_ihdr_intact(b)) return ImageSize{be32(&b[16]), be32(&b[20])};
      return std::nullopt;
    case ImageFormat::kJpeg:
      return jpeg_size(b);
    case ImageFormat::kWebp:
      return webp_size(b);
    case ImageFormat::kBmp:
      if (b.size() >= 22 && le32(&b[14]) == 12) {  // OS/2 core header: 16-bit width and height
        const auto h = static_cast<std::int16_t>(le16(&b[20]));
        return ImageSize{le16(&b[18]), h < 0 ? -std::int64_t{h} : h};
      }
      if (b.size() >= 26) {
        const auto h = static_cast<std::int32_t>(le32(&b[22]));
        return ImageSize{static_cast<std::int32_t>(le32(&b[18])), h < 0 ? -std::int64_t{h} : h};
      }
      return std::nullopt;
    case ImageFormat::kTiff:
      return tiff_size(b);
    default:
      return std::nullopt;
  }
}

}  // namespace sam3::core
