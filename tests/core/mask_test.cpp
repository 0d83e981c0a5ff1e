// sam3::Mask holds its image's size and only its bounds' bytes (issue 42, item 5: every
// instance was a byte per image pixel, 5 MB an instance at 2000x2000).
#include <gtest/gtest.h>

#include <random>

#include "predictor/postprocess.h"
#include "sam3/error.h"
#include "sam3/types.h"

namespace {

std::vector<std::uint8_t> square_raster(int w, int h, int x0, int y0, int side) {
  std::vector<std::uint8_t> r(static_cast<size_t>(w) * h, 0);
  for (int y = y0; y < y0 + side; ++y)
    for (int x = x0; x < x0 + side; ++x) r[static_cast<size_t>(y) * w + x] = 1;
  return r;
}

TEST(Mask, HoldsItsBoundsNotTheImage) {
  const auto raster = square_raster(4000, 4000, 1200, 3000, 10);
  const auto m = sam3::Mask::from_raster(4000, 4000, raster);
  EXPECT_EQ(m.width(), 4000);
  EXPECT_EQ(m.height(), 4000);
  EXPECT_EQ(m.area(), 100);
  const sam3::TileRect b = m.bounds();
  EXPECT_EQ(b.x0, 1200);
  EXPECT_EQ(b.y0, 3000);
  EXPECT_EQ(b.x1, 1210);
  EXPECT_EQ(b.y1, 3010);
  EXPECT_LT(m.bytes(), 1000u) << "a 10x10 object on a 16 MP image held " << m.bytes() << " bytes";
  EXPECT_TRUE(m.at(1200, 3000));
  EXPECT_TRUE(m.at(1209, 3009));
  EXPECT_FALSE(m.at(1210, 3000));
  EXPECT_FALSE(m.at(-1, 3000));
  EXPECT_FALSE(m.at(4000, 4000));
  EXPECT_EQ(m.row(3005).size(), 10u);
  EXPECT_TRUE(m.row(2999).empty());
  EXPECT_EQ(m.to_raster(), raster);
  std::vector<std::uint8_t> grey(4000u * 4000u, 7);
  m.paint(grey, 255);
  EXPECT_EQ(grey[3000u * 4000 + 1200], 255);
  EXPECT_EQ(grey[0], 7) << "paint leaves the rest as it was";
}

TEST(Mask, RandomMasksRoundTripAndWindowsTrimToTheirPixels) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 30; ++trial) {
    const int w = 1 + static_cast<int>(rng() % 40), h = 1 + static_cast<int>(rng() % 30);
    std::vector<std::uint8_t> raster(static_cast<size_t>(w) * h, 0);
    const int density = static_cast<int>(rng() % 100);
    for (auto& v : raster) v = static_cast<int>(rng() % 100) < density / 4 ? static_cast<std::uint8_t>(1 + rng() % 200) : 0;
    const auto m = sam3::Mask::from_raster(w, h, raster);
    std::int64_t area = 0;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        EXPECT_EQ(m.at(x, y), raster[static_cast<size_t>(y) * w + x] != 0);
        area += raster[static_cast<size_t>(y) * w + x] != 0;
      }
    }
    EXPECT_EQ(m.area(), area);
    EXPECT_EQ(m.empty(), area == 0);
    // The same pixels given as a window are the same mask.
    const sam3::TileRect b = m.bounds();
    std::vector<std::uint8_t> window;
    for (int y = b.y0; y < b.y1; ++y) window.insert(window.end(), m.row(y).begin(), m.row(y).end());
    EXPECT_EQ(sam3::Mask::from_window(w, h, b, window), m);
    EXPECT_EQ(sam3::Mask::from_window(w, h, {0, 0, w, h}, raster), m) << "a wider window trims to the pixels";
  }
  EXPECT_EQ(sam3::Mask(5, 4), sam3::Mask::from_raster(5, 4, std::vector<std::uint8_t>(20, 0)));
  EXPECT_EQ(sam3::Mask(5, 4).bounds().x1, 0);
}

TEST(Mask, SizesThatDoNotAgreeAreRefused) {
  const std::vector<std::uint8_t> six(6, 1);
  EXPECT_THROW(sam3::Mask::from_raster(4, 2, six), sam3::Error);
  EXPECT_THROW(sam3::Mask(-1, 4), sam3::Error);
  EXPECT_THROW(sam3::Mask::from_window(10, 10, {8, 8, 11, 10}, six), sam3::Error) << "a window past the image";
  EXPECT_THROW(sam3::Mask::from_window(10, 10, {0, 0, 4, 2}, six), sam3::Error) << "6 bytes for a 4x2 window";
  std::vector<std::uint8_t> small(5);
  EXPECT_THROW(sam3::Mask::from_raster(3, 2, six).paint(small, 1), sam3::Error);
}

TEST(Mask, IouAndIntersectionReadOnlyTheBoundsOverlap) {
  const auto a = sam3::Mask::from_raster(50, 40, square_raster(50, 40, 0, 0, 20));
  const auto b = sam3::Mask::from_raster(50, 40, square_raster(50, 40, 10, 10, 20));
  EXPECT_EQ(sam3::predictor::mask_intersection(a, b), 100);
  EXPECT_FLOAT_EQ(sam3::predictor::mask_iou(a, b), 100.f / 700.f);
  const auto far = sam3::Mask::from_raster(50, 40, square_raster(50, 40, 30, 25, 10));
  EXPECT_EQ(sam3::predictor::mask_intersection(a, far), 0);
  EXPECT_FLOAT_EQ(sam3::predictor::mask_iou(sam3::Mask(50, 40), sam3::Mask(50, 40)), 0.f);
  const sam3::Box box = sam3::predictor::mask_bounds(b);
  EXPECT_FLOAT_EQ(box.x0, 10.f);
  EXPECT_FLOAT_EQ(box.x1, 30.f);
}

}  // namespace
