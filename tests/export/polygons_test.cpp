// Mask outlines for the polygon formats (COCO polygons, YOLO-seg, GeoJSON): every instance keeps
// a polygon, thin ones too.
#include "sam3/polygons.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <vector>

namespace {

sam3::Mask mask_of(int width, int height, const std::vector<std::pair<int, int>>& pixels) {
  std::vector<std::uint8_t> raster(static_cast<size_t>(width) * height, 0);
  for (const auto& [x, y] : pixels) raster[static_cast<size_t>(y) * width + x] = 1;
  return sam3::Mask::from_raster(width, height, raster);
}

// The pixels' extent a ring covers: its bounding box.
std::array<float, 4> extent(const sam3::Ring& ring) {
  std::array<float, 4> e{1e9f, 1e9f, -1e9f, -1e9f};
  for (const auto& p : ring) e = {std::min(e[0], p.x), std::min(e[1], p.y), std::max(e[2], p.x), std::max(e[3], p.y)};
  return e;
}

TEST(MaskToPolygons, ABlockIsItsBoundaryPixelsCentres) {
  std::vector<std::pair<int, int>> block;
  for (int y = 2; y < 6; ++y) {
    for (int x = 3; x < 9; ++x) block.emplace_back(x, y);
  }
  const auto polys = sam3::mask_to_polygons(mask_of(16, 10, block), 0);
  ASSERT_EQ(polys.size(), 1u);
  EXPECT_EQ(extent(polys[0].outer), (std::array<float, 4>{3, 2, 8, 5}));
  EXPECT_DOUBLE_EQ(sam3::ring_area(polys[0].outer), 5.0 * 3.0);
}

// A line one pixel wide and a single pixel traced as rings of no area and were dropped: the
// instance was in COCO's RLE and the masks but missing from YOLO and GeoJSON, and COCO
// --polygons wrote "segmentation": [].
TEST(MaskToPolygons, ALineOnePixelWideAndASinglePixelKeepTheirPixelsRectangle) {
  std::vector<std::pair<int, int>> line, diagonal;
  for (int x = 2; x < 40; ++x) line.emplace_back(x, 5);
  for (int i = 0; i < 10; ++i) diagonal.emplace_back(5 + i, 12 + i);
  for (double tolerance : {0.0, 1.0, 2.0}) {
    const auto l = sam3::mask_to_polygons(mask_of(48, 30, line), tolerance);
    ASSERT_EQ(l.size(), 1u) << "tolerance " << tolerance;
    const auto e = extent(l[0].outer);
    EXPECT_NEAR(e[0], 1.5f, 1e-4) << tolerance;
    EXPECT_NEAR(e[1], 4.5f, 1e-4) << tolerance;
    EXPECT_NEAR(e[2], 39.5f, 1e-4) << tolerance;
    EXPECT_NEAR(e[3], 5.5f, 1e-4) << tolerance;
    EXPECT_NEAR(sam3::ring_area(l[0].outer), 38.0, 1e-3) << "the line's 38 pixels";

    const auto one = sam3::mask_to_polygons(mask_of(48, 30, {{7, 9}}), tolerance);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_NEAR(sam3::ring_area(one[0].outer), 1.0, 1e-4);
    EXPECT_NEAR(extent(one[0].outer)[0], 6.5f, 1e-4);

    const auto d = sam3::mask_to_polygons(mask_of(48, 30, diagonal), tolerance);
    ASSERT_EQ(d.size(), 1u) << "a diagonal line, tolerance " << tolerance;
    EXPECT_GE(d[0].outer.size(), 3u);
    EXPECT_GT(sam3::ring_area(d[0].outer), 9.0);
  }
}

}  // namespace
