#include "predictor/preprocess.h"

#include <gtest/gtest.h>

namespace {

sam3::Image gray_row_image(std::vector<std::uint8_t> values, int rows) {
  sam3::Image im{static_cast<int>(values.size()), rows, {}};
  im.rgb.resize(values.size() * 3 * static_cast<size_t>(rows));
  for (size_t i = 0; i < im.rgb.size(); ++i) im.rgb[i] = values[(i / 3) % values.size()];
  return im;
}

TEST(Preprocess, ShrinkUsesTheAntialiasedTriangleFilter) {
  // 4 -> 2: weights (3,3,1)/7 and (1,3,3)/7, as PIL / torchvision antialias compute them.
  const auto out = sam3::predictor::resize_planar(gray_row_image({0, 70, 140, 210}, 4), 2);
  ASSERT_EQ(out.size(), 3u * 2 * 2);
  EXPECT_NEAR(out[0], 50.f, 1e-3);
  EXPECT_NEAR(out[1], 160.f, 1e-3);
  EXPECT_NEAR(out[4 + 1], 160.f, 1e-3) << "green plane";
}

TEST(Preprocess, EnlargeIsHalfPixelBilinear) {
  const auto out = sam3::predictor::resize_planar(gray_row_image({0, 100}, 2), 4);
  const float expected[] = {0, 25, 75, 100};
  for (int x = 0; x < 4; ++x) EXPECT_NEAR(out[static_cast<size_t>(x)], expected[x], 1e-3) << x;
}

TEST(Preprocess, StretchesNonSquareImagesWithoutLetterbox) {
  // A 8x2 image whose left half is white fills the left half of every output row.
  sam3::Image im{8, 2, std::vector<std::uint8_t>(8 * 2 * 3, 0)};
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 4; ++x)
      for (int c = 0; c < 3; ++c) im.rgb[(y * 8 + x) * 3 + c] = 255;
  const auto out = sam3::predictor::resize_planar(im, 4);
  for (int y = 0; y < 4; ++y) {
    EXPECT_NEAR(out[y * 4 + 0], 255.f, 1e-3);
    EXPECT_NEAR(out[y * 4 + 3], 0.f, 1e-3);
  }
}

TEST(Preprocess, NormalizationIsMeanHalfStdHalf) {
  std::vector<float> v = {0.f, 127.5f, 255.f};
  sam3::predictor::normalize_sam3(v);
  EXPECT_FLOAT_EQ(v[0], -1.f);
  EXPECT_FLOAT_EQ(v[1], 0.f);
  EXPECT_FLOAT_EQ(v[2], 1.f);
  EXPECT_EQ(sam3::predictor::to_uint8({-3.f, 12.4f, 12.6f, 300.f}), (std::vector<std::uint8_t>{0, 12, 13, 255}));
}

}  // namespace
