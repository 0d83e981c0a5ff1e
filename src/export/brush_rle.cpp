// Label Studio's brush RLE (see mask_encodings.h). The RGBA expansion makes every run of equal
// bytes at least four long, so the stream is all repeat chunks: flag 1, a 2-bit field index,
// the run length minus one in that field's width, then the byte.
#include <array>

#include "sam3/error.h"
#include "sam3/mask_encodings.h"

namespace sam3 {
namespace {

class BitWriter {
 public:
  void write(std::uint32_t value, int bits) {
    for (int i = bits - 1; i >= 0; --i) {
      if (used_ == 0) bytes_.push_back(0);
      if ((value >> i) & 1u) bytes_.back() |= static_cast<std::uint8_t>(0x80u >> used_);
      used_ = (used_ + 1) % 8;
    }
  }
  std::vector<std::uint8_t> take() { return std::move(bytes_); }  // zero-padded to a byte

 private:
  std::vector<std::uint8_t> bytes_;
  int used_ = 0;  // bits used in the last byte
};

constexpr std::array<int, 4> kFieldBits = {3, 4, 8, 16};
constexpr std::uint64_t kMaxRun = std::uint64_t{1} << kFieldBits[3];

void write_run(BitWriter& out, std::uint64_t length, std::uint8_t value) {
  while (length > 0) {
    const std::uint64_t n = std::min(length, kMaxRun);
    std::uint32_t field = 0;
    while ((n - 1) >> kFieldBits[field]) ++field;
    out.write(1, 1);
    out.write(field, 2);
    out.write(static_cast<std::uint32_t>(n - 1), kFieldBits[field]);
    out.write(value, 8);
    length -= n;
  }
}

}  // namespace

std::vector<std::uint8_t> brush_rle_encode(const Mask& mask) {
  BitWriter out;
  const std::uint64_t values = static_cast<std::uint64_t>(mask.width()) * static_cast<std::uint64_t>(mask.height()) * 4;
  if (values > 0xffffffffu) {  // the format's count is 32 bits
    throw Error(ErrorCode::kInvalidArgument, "a brush RLE holds at most 1,073,741,823 pixels; this mask has " + std::to_string(values / 4));
  }
  out.write(static_cast<std::uint32_t>(values), 32);
  out.write(8 - 1, 5);
  for (int bits : kFieldBits) out.write(static_cast<std::uint32_t>(bits - 1), 4);
  // Row-major runs over the whole image, read from the mask's bounds: rows and columns outside are zeros.
  std::uint64_t run = 0;
  std::uint8_t current = 0;
  const auto add = [&](std::uint8_t v, std::uint64_t n) {
    if (n == 0) return;
    if (run > 0 && v != current) {
      write_run(out, run * 4, current);
      run = 0;
    }
    current = v;
    run += n;
  };
  const TileRect b = mask.bounds();
  const auto w = static_cast<std::uint64_t>(mask.width());
  for (int y = 0; y < mask.height(); ++y) {
    const auto row = mask.row(y);
    if (row.empty()) {
      add(0, w);
      continue;
    }
    add(0, static_cast<std::uint64_t>(b.x0));
    for (const std::uint8_t m : row) add(m ? 255 : 0, 1);
    add(0, w - static_cast<std::uint64_t>(b.x1));
  }
  write_run(out, run * 4, current);
  return out.take();
}

}  // namespace sam3
