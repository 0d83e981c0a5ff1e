#include <gtest/gtest.h>

#include "sam3/error.h"
#include "sam3/export.h"

namespace {

sam3::Mask mask_of(int h, int w, std::vector<std::uint8_t> row_major) { return sam3::Mask::from_raster(w, h, row_major); }

TEST(CocoRle, CountsAreColumnMajorStartingWithZeros) {
  // [[0,1],[1,1]]: columns (0,1),(1,1) -> one zero, three ones.
  const auto m = mask_of(2, 2, {0, 1, 1, 1});
  EXPECT_EQ(sam3::rle_counts(m), (std::vector<std::uint32_t>{1, 3}));
  EXPECT_EQ(sam3::rle_encode(m), "13");
  const auto starts_with_one = mask_of(1, 3, {1, 1, 0});
  EXPECT_EQ(sam3::rle_counts(starts_with_one), (std::vector<std::uint32_t>{0, 2, 1}));
}

TEST(CocoRle, StringFormMatchesPycocotools) {
  EXPECT_EQ(sam3::rle_to_string({2, 3, 4, 5}), "2342");  // 4th is a delta: 5 - 3
  EXPECT_EQ(sam3::rle_to_string({1, 5, 1, 2}), "151M");  // negative delta -3
  EXPECT_EQ(sam3::rle_to_string({100}), "T3");           // two 5-bit groups
  EXPECT_EQ(sam3::rle_to_string({0}), "0");
}

TEST(CocoRle, DecodeInvertsEncode) {
  std::vector<std::uint8_t> raster(37 * 23);
  for (size_t i = 0; i < raster.size(); ++i) raster[i] = ((i * 7919) % 13) < 5;
  const auto m = sam3::Mask::from_raster(37, 23, raster);
  const auto back = sam3::rle_decode(sam3::rle_encode(m), 23, 37);
  EXPECT_EQ(back, m);
  EXPECT_EQ(back.to_raster(), raster);
  EXPECT_THROW(sam3::rle_decode("13", 5, 5), sam3::Error);
  EXPECT_THROW(sam3::rle_decode("\x7f", 1, 1), sam3::Error);
}

TEST(CocoRle, CountsPastWhatALongLongHoldsAreMalformed) {
  // Thirteen continued groups shifted a long long by 65 bits (undefined; UBSan in the fuzzer), and
  // a delta could overflow it; both are malformed strings, whatever the mask's size.
  EXPECT_THROW(sam3::rle_decode(std::string(13, 'P') + "0", 4, 4), sam3::Error);
  EXPECT_THROW(sam3::rle_decode("0"
                                "1"
                                "OOOOOOOOOOO?"
                                "OOOOOOOOOOO?",
                                4, 4),
               sam3::Error);
  // Eleven groups (55 bits) are still read: a count that large is refused as too many pixels.
  EXPECT_THROW(sam3::rle_decode(std::string(10, 'P') + "0", 4, 4), sam3::Error);
}

}  // namespace
