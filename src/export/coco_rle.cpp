#include "sam3/error.h"
#include "sam3/image.h"
#include "sam3/mask_encodings.h"

namespace sam3 {

std::vector<std::uint32_t> rle_counts(const Mask& mask) {
  std::vector<std::uint32_t> counts;
  std::uint8_t current = 0;
  std::uint32_t run = 0;
  for (int x = 0; x < mask.width; ++x) {
    for (int y = 0; y < mask.height; ++y) {
      const std::uint8_t v = mask.data[static_cast<size_t>(y) * mask.width + x] ? 1 : 0;
      if (v != current) {
        counts.push_back(run);
        run = 0;
        current = v;
      }
      ++run;
    }
  }
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
    throw Error(ErrorCode::kInvalidArgument, "a COCO RLE's size must be [height, width] of 0 or more (got [" +
                                                 std::to_string(height) + ", " + std::to_string(width) + "])");
  }
  // Runs are a few bytes each: a size is checked before a mask of it is allocated.
  if (static_cast<std::int64_t>(width) * height > ImageLoadOptions{}.max_pixels) {
    throw Error(ErrorCode::kImageTooLarge, "a COCO RLE of " + std::to_string(height) + " x " + std::to_string(width) +
                                               " is over the limit of " + std::to_string(ImageLoadOptions{}.max_pixels) +
                                               " pixels");
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
  Mask mask{width, height, std::vector<std::uint8_t>(static_cast<size_t>(width) * height, 0)};
  long long pos = 0;
  const long long total = static_cast<long long>(width) * height;
  std::uint8_t value = 0;
  for (long long run : counts) {
    if (run < 0 || run > total - pos) throw Error(ErrorCode::kInvalidArgument, "COCO RLE runs exceed the mask size");
    for (long long i = 0; i < run; ++i, ++pos) {
      if (value) mask.data[static_cast<size_t>((pos % height) * width + pos / height)] = 1;
    }
    value ^= 1;
  }
  if (pos != total) throw Error(ErrorCode::kInvalidArgument, "COCO RLE runs do not cover the mask");
  return mask;
}

}  // namespace sam3
