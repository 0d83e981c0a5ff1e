// Label Studio's brush RLE, read back by a decoder written from the format's description
// (the npm decoder the editor uses is checked in tests/web/label_studio.test.mjs).
#include <gtest/gtest.h>

#include "sam3/mask_encodings.h"

namespace {

struct BitReader {
  const std::vector<std::uint8_t>& bytes;
  std::size_t pos = 0;
  std::uint32_t read(int bits) {
    std::uint32_t v = 0;
    for (int i = 0; i < bits; ++i, ++pos) {
      if (pos / 8 >= bytes.size()) throw std::runtime_error("read past the end of the stream");
      v = (v << 1) | ((bytes[pos / 8] >> (7 - pos % 8)) & 1u);
    }
    return v;
  }
};

std::vector<std::uint8_t> decode(const std::vector<std::uint8_t>& rle) {
  BitReader in{rle};
  const std::uint32_t n = in.read(32);
  const int word = static_cast<int>(in.read(5)) + 1;
  int fields[4];
  for (int& f : fields) f = static_cast<int>(in.read(4)) + 1;
  std::vector<std::uint8_t> out;
  while (out.size() < n) {
    const bool repeat = in.read(1);
    const int field = fields[in.read(2)];
    const std::uint32_t count = in.read(field) + 1;
    if (repeat)
      out.insert(out.end(), count, static_cast<std::uint8_t>(in.read(word)));
    else
      for (std::uint32_t i = 0; i < count; ++i) out.push_back(static_cast<std::uint8_t>(in.read(word)));
  }
  EXPECT_LE(rle.size() * 8 - in.pos, 7u) << "only padding after the last chunk";
  return out;
}

void expect_round_trip(const sam3::Mask& mask) {
  const auto rgba = decode(sam3::brush_rle_encode(mask));
  const auto raster = mask.to_raster();
  ASSERT_EQ(rgba.size(), raster.size() * 4);
  for (std::size_t i = 0; i < rgba.size(); ++i) {
    ASSERT_EQ(rgba[i], raster[i / 4] ? 255 : 0) << "pixel " << i / 4 << " channel " << i % 4;
  }
}

TEST(BrushRle, HeaderIsCountWordSizeAndFieldWidths) {
  const sam3::Mask mask(3, 2);
  const auto rle = sam3::brush_rle_encode(mask);
  BitReader in{rle};
  EXPECT_EQ(in.read(32), 24u) << "3 x 2 pixels x 4 channels";
  EXPECT_EQ(in.read(5), 7u);
  for (std::uint32_t f : {2u, 3u, 7u, 15u}) EXPECT_EQ(in.read(4), f);
  // One repeat chunk of 24 zeros: flag 1, field 2 (8 bits), 23, value 0.
  EXPECT_EQ(in.read(1), 1u);
  EXPECT_EQ(in.read(2), 2u);
  EXPECT_EQ(in.read(8), 23u);
  EXPECT_EQ(in.read(8), 0u);
}

TEST(BrushRle, RoundTripsShapesAndEdges) {
  std::vector<std::uint8_t> raster(37 * 23, 0);
  for (int y = 5; y < 17; ++y) {
    for (int x = 3; x < 30; ++x) raster[y * 37 + x] = (x + y) % 7 != 0;  // runs of every length
  }
  expect_round_trip(sam3::Mask::from_raster(37, 23, raster));  // bounds inside the image
  raster[0] = 1;
  raster.back() = 1;
  expect_round_trip(sam3::Mask::from_raster(37, 23, raster));
}

TEST(BrushRle, RunsLongerThanTheLargestFieldAreSplit) {
  std::vector<std::uint8_t> raster(300 * 300, 1);  // 360,000 values of 255
  raster[150 * 300 + 10] = 0;
  expect_round_trip(sam3::Mask::from_raster(300, 300, raster));
}

TEST(BrushRle, EmptyAndFullMasks) {
  expect_round_trip(sam3::Mask::from_raster(1, 1, std::vector<std::uint8_t>{1}));
  expect_round_trip(sam3::Mask(64, 64));
}

}  // namespace
