#include <algorithm>

#include "sam3/error.h"
#include "sam3/image.h"
#include "sam3/mask_encodings.h"

namespace sam3 {

std::vector<std::uint32_t> rle_counts(const Mask& mask) {
  // Column-major runs over the whole image, read from the mask's bounds: the columns outside
  // them and the rows above and below are zeros.
  std::vector<std::uint32_t> counts;
  std::uint8_t current = 0;
  std::uint32_t run = 0;
  const auto add = [&](std::uint8_t v, std::uint64_t n) {
    if (n == 0) return;
    if (v != current) {
      counts.push_back(run);
      run = 0;
      current = v;
    }
    run += static_cast<std::uint32_t>(n);
  };
  const TileRect b = mask.bounds();
  const auto h = static_cast<std::uint64_t>(mask.height());
  add(0, static_cast<std::uint64_t>(b.x0) * h);
  for (int x = b.x0; x < b.x1; ++x) {
    add(0, static_cast<std::uint64_t>(b.y0));
    for (int y = b.y0; y < b.y1; ++y) add(mask.row(y)[static_cast<size_t>(x - b.x0)], 1);
    add(0, h - static_cast<std::uint64_t>(b.y1));
  }
  add(0, static_cast<std::uint64_t>(mask.width() - b.x1) * h);
  counts.push_back(run);
  return counts;
}

std::string rle_to_string(const std::vector<std::uint32_t>& counts) {
  std::string s;
  for (size_t i = 0; i < counts.size(); ++i) {
    long long x = counts[i];
    if (i > 2) x -= static_cast<long long>(counts[i - 2]);  // delta against the same-value run
    bool more = true;
    while (more) {
      char c = static_cast<char>(x & 0x1f);
      x >>= 5;  // arithmetic shift keeps the sign
      more = (c & 0x10) ? x != -1 : x != 0;
      if (more) c |= 0x20;
      s.push_back(static_cast<char>(c + 48));
    }
  }
  return s;
}

std::string rle_encode(const Mask& mask) { return rle_to_string(rle_counts(mask)); }

Mask rle_decode(const std::string& s, int height, int width) {
  if (height < 0 || width < 0) {
    throw Error(ErrorCode::kInvalidArgument, "a COCO RLE's size must be [height, width] of 0 or more (got [" + std::to_string(height) +
                                                 ", " + std::to_string(width) + "])");
  }
  // Runs are a few bytes each: a size is checked before a mask of it is allocated.
  if (static_cast<std::int64_t>(width) * height > ImageLoadOptions{}.max_pixels) {
    throw Error(ErrorCode::kImageTooLarge, "a COCO RLE of " + std::to_string(height) + " x " + std::to_string(width) +
                                               " is over the limit of " + std::to_string(ImageLoadOptions{}.max_pixels) + " pixels");
  }
  std::vector<long long> counts;
  size_t p = 0;
  while (p < s.size()) {
    long long x = 0;
    int k = 0;
    bool more = true;
    while (more) {
      // 12 characters hold 60 bits: more would shift past a long long (COCO's counts are 32-bit).
      if (p >= s.size() || s[p] < 48 || s[p] > 48 + 63 || k >= 12) {
        throw Error(ErrorCode::kInvalidArgument, "malformed COCO RLE string");
      }
      const long long c = s[p] - 48;
      x |= (c & 0x1f) << (5 * k);
      more = (c & 0x20) != 0;
      ++p;
      ++k;
      if (!more && (c & 0x10)) x |= -1LL << (5 * k);
    }
    if (counts.size() > 2 && __builtin_add_overflow(x, counts[counts.size() - 2], &x)) {
      throw Error(ErrorCode::kInvalidArgument, "malformed COCO RLE string");
    }
    counts.push_back(x);
  }
  // First the runs' checks and the bounds of their ones, then only the bounds are filled.
  long long pos = 0;
  const long long total = static_cast<long long>(width) * height;
  long long x0 = width, y0 = height, x1 = -1, y1 = -1;
  std::uint8_t value = 0;
  for (long long run : counts) {
    if (run < 0 || run > total - pos) throw Error(ErrorCode::kInvalidArgument, "COCO RLE runs exceed the mask size");
    if (value && run > 0) {
      const long long first_x = pos / height, last_x = (pos + run - 1) / height;
      x0 = std::min(x0, first_x), x1 = std::max(x1, last_x);
      if (first_x == last_x)
        y0 = std::min(y0, pos % height), y1 = std::max(y1, (pos + run - 1) % height);
      else
        y0 = 0, y1 = height - 1;  // a run across a column's end covers both ends of the rows
    }
    pos += run;
    value ^= 1;
  }
  if (pos != total) throw Error(ErrorCode::kInvalidArgument, "COCO RLE runs do not cover the mask");
  if (x1 < 0) return Mask(width, height);
  const TileRect window{static_cast<int>(x0), static_cast<int>(y0), static_cast<int>(x1 + 1), static_cast<int>(y1 + 1)};
  const long long ww = window.x1 - window.x0;
  std::vector<std::uint8_t> bytes(static_cast<size_t>(ww * (window.y1 - window.y0)), 0);
  pos = 0;
  value = 0;
  for (long long run : counts) {
    if (value) {
      for (long long p = pos; p < pos + run; ++p) bytes[static_cast<size_t>((p % height - y0) * ww + (p / height - x0))] = 1;
    }
    pos += run;
    value ^= 1;
  }
  return Mask::from_window(width, height, window, bytes);
}

}  // namespace sam3
