// BMP read by sam3 itself (no codec library has a small, safe BMP reader on Debian without
// OpenCV's imgcodecs, which links GDAL and libcurl): core and info headers (12..124 bytes),
// 1/4/8-bit palettes, 16/24/32-bit (with bit fields), RLE8 and RLE4, bottom-up or top-down.
// Every offset is checked against the buffer: a damaged file is kImageCorrupt, never a read
// past the end. Alpha is dropped, as for the other formats.
#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "core/codecs.h"
#include "sam3/error.h"

namespace sam3::core {
namespace {

std::uint32_t le16(const std::uint8_t* p) { return p[0] | (p[1] << 8); }
std::uint32_t le32(const std::uint8_t* p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<std::uint32_t>(p[3]) << 24); }

// One channel from a bit-field mask, scaled to 0..255.
struct Channel {
  std::uint32_t mask = 0;
  int shift = 0, bits = 0;
  explicit Channel(std::uint32_t m = 0) : mask(m) {
    if (!m) return;
    shift = std::countr_zero(m);
    bits = std::popcount(m >> shift);
  }
  std::uint8_t operator()(std::uint32_t v) const {
    if (!bits) return 0;
    const std::uint32_t x = (v & mask) >> shift, max = bits >= 32 ? 0xffffffffu : (1u << bits) - 1;
    return static_cast<std::uint8_t>((static_cast<std::uint64_t>(x) * 255 + max / 2) / max);
  }
};

class BmpReader {
 public:
  BmpReader(std::span<const std::uint8_t> b, const std::string& name, std::int64_t max_pixels)
      : b_(b), name_(name), max_pixels_(max_pixels) {}

  Image read() {
    need(0, 26);
    const std::uint32_t data_offset = le32(&b_[10]), dib = le32(&b_[14]);
    const bool core = dib == 12;
    std::int64_t width, height;
    std::uint32_t bpp, compression = 0, colours = 0;
    if (core) {
      width = le16(&b_[18]);
      height = static_cast<std::int16_t>(le16(&b_[20]));
      bpp = le16(&b_[24]);
    } else {
      need(14, dib < 40 ? 40 : dib);
      width = static_cast<std::int32_t>(le32(&b_[18]));
      height = static_cast<std::int32_t>(le32(&b_[22]));
      bpp = le16(&b_[28]);
      compression = le32(&b_[30]);
      colours = le32(&b_[46]);
    }
    const bool top_down = height < 0;
    height = height < 0 ? -height : height;
    if (width <= 0 || height <= 0) corrupt("has a zero or negative image size");
    if (width > max_pixels_ / height) throw Error(ErrorCode::kImageTooLarge, too_large_message(name_, width, height, max_pixels_));
    width_ = static_cast<int>(width);
    height_ = static_cast<int>(height);

    // Colour masks: in the header from version 4 on, else after a 40-byte header.
    std::uint32_t masks[3] = {0x7c00, 0x3e0, 0x1f};
    if (bpp == 32) masks[0] = 0xff0000, masks[1] = 0xff00, masks[2] = 0xff;
    const size_t palette_at = 14 + dib + (compression == 3 && dib == 40 ? 12 : 0);
    if (compression == 3 || compression == 6) {
      need(54, 12);
      for (int i = 0; i < 3; ++i) masks[i] = le32(&b_[54 + 4 * i]);
    }
    red_ = Channel(masks[0]), green_ = Channel(masks[1]), blue_ = Channel(masks[2]);

    if (bpp <= 8) {
      if (bpp != 1 && bpp != 4 && bpp != 8) unsupported(std::to_string(bpp) + "-bit palette");
      const size_t entry = core ? 3 : 4;
      size_t count = colours ? colours : (1u << bpp);
      count = std::min<size_t>(count, 256);
      if (palette_at > b_.size()) corrupt("has no room for its palette");
      count = std::min(count, (b_.size() - palette_at) / entry);
      palette_.assign(256, {0, 0, 0});
      for (size_t i = 0; i < count; ++i) {
        const std::uint8_t* p = &b_[palette_at + i * entry];
        palette_[i] = {p[2], p[1], p[0]};
      }
    } else if (bpp != 16 && bpp != 24 && bpp != 32) {
      unsupported(std::to_string(bpp) + "-bit pixels");
    }

    Image image;
    image.width = width_;
    image.height = height_;
    image.rgb.assign(static_cast<size_t>(width_) * height_ * 3, 0);
    if (data_offset >= b_.size()) corrupt("pixel data starts past the end of the file");
    const std::span<const std::uint8_t> data = b_.subspan(data_offset);
    const auto row_of = [&](int stored) { return top_down ? stored : height_ - 1 - stored; };
    if (compression == 1 || compression == 2) {
      if (bpp != (compression == 1 ? 8u : 4u) || top_down) corrupt("has an RLE compression that does not match its pixels");
      decode_rle(data, compression == 1, image, row_of);
    } else if (compression == 0 || compression == 3 || compression == 6) {
      if (compression != 0 && bpp != 16 && bpp != 32) corrupt("has bit fields on " + std::to_string(bpp) + "-bit pixels");
      decode_rows(data, bpp, image, row_of);
    } else {
      unsupported("compression " + std::to_string(compression) + " (JPEG or PNG inside BMP)");
    }
    return image;
  }

 private:
  template <typename RowOf>
  void decode_rows(std::span<const std::uint8_t> data, std::uint32_t bpp, Image& image, RowOf row_of) {
    const size_t stride = ((static_cast<size_t>(width_) * bpp + 31) / 32) * 4;
    if (data.size() / stride < static_cast<size_t>(height_)) corrupt("pixel data is shorter than its size says: the file is truncated");
    for (int r = 0; r < height_; ++r) {
      const std::uint8_t* s = data.data() + static_cast<size_t>(r) * stride;
      std::uint8_t* d = image.rgb.data() + static_cast<size_t>(row_of(r)) * width_ * 3;
      for (int x = 0; x < width_; ++x, d += 3) {
        if (bpp == 24) {
          d[0] = s[x * 3 + 2], d[1] = s[x * 3 + 1], d[2] = s[x * 3];
        } else if (bpp == 16 || bpp == 32) {
          const std::uint32_t v = bpp == 16 ? le16(s + x * 2) : le32(s + x * 4);
          d[0] = red_(v), d[1] = green_(v), d[2] = blue_(v);
        } else {
          const int per_byte = 8 / static_cast<int>(bpp);
          const int shift = 8 - static_cast<int>(bpp) * (x % per_byte + 1);
          const auto& c = palette_[(s[x / per_byte] >> shift) & ((1 << bpp) - 1)];
          d[0] = c[0], d[1] = c[1], d[2] = c[2];
        }
      }
    }
  }

  // RLE8 / RLE4: runs, absolute runs, end of line, end of bitmap and deltas; pixels not
  // written stay palette entry 0, as in Windows.
  template <typename RowOf>
  void decode_rle(std::span<const std::uint8_t> data, bool eight, Image& image, RowOf row_of) {
    for (int r = 0; r < height_; ++r) put_row_index(image, row_of(r), 0);
    size_t i = 0;
    int x = 0, y = 0;
    const auto put = [&](int index) {
      if (x < width_ && y < height_) put_pixel(image, row_of(y), x, index);
      ++x;
    };
    while (y < height_) {
      if (i + 2 > data.size()) corrupt("RLE data ends before the image does: the file is truncated");
      const int count = data[i], value = data[i + 1];
      i += 2;
      if (count > 0) {
        for (int k = 0; k < count; ++k) put(eight ? value : (k % 2 ? value & 15 : value >> 4));
      } else if (value == 0) {
        x = 0, ++y;
      } else if (value == 1) {
        return;
      } else if (value == 2) {
        if (i + 2 > data.size()) corrupt("RLE delta runs past the end of the file");
        x += data[i], y += data[i + 1];
        i += 2;
      } else {
        const size_t bytes = eight ? value : (value + 1) / 2;
        if (i + bytes > data.size()) corrupt("RLE run runs past the end of the file");
        for (int k = 0; k < value; ++k) put(eight ? data[i + k] : (k % 2 ? data[i + k / 2] & 15 : data[i + k / 2] >> 4));
        i += (bytes + 1) & ~size_t{1};  // absolute runs are padded to 16 bits
      }
    }
  }

  void put_pixel(Image& image, int row, int x, int index) {
    const auto& c = palette_[static_cast<size_t>(index)];
    std::uint8_t* d = image.rgb.data() + (static_cast<size_t>(row) * width_ + x) * 3;
    d[0] = c[0], d[1] = c[1], d[2] = c[2];
  }
  void put_row_index(Image& image, int row, int index) {
    for (int x = 0; x < width_; ++x) put_pixel(image, row, x, index);
  }

  void need(size_t at, size_t n) const {
    if (at > b_.size() || b_.size() - at < n) corrupt("header is cut off: the file is truncated");
  }
  [[noreturn]] void corrupt(const std::string& why) const {
    throw Error(ErrorCode::kImageCorrupt, name_ + ": BMP " + why + "; the file is corrupt");
  }
  [[noreturn]] void unsupported(const std::string& what) const {
    throw Error(ErrorCode::kImageUnsupported, name_ + ": BMP with " + what + " is not supported; convert it to PNG");
  }

  std::span<const std::uint8_t> b_;
  const std::string& name_;
  std::int64_t max_pixels_;
  int width_ = 0, height_ = 0;
  Channel red_, green_, blue_;
  std::vector<std::array<std::uint8_t, 3>> palette_;
};

}  // namespace

Image decode_bmp(std::span<const std::uint8_t> bytes, const std::string& name, std::int64_t max_pixels) {
  return BmpReader(bytes, name, max_pixels).read();
}

}  // namespace sam3::core
