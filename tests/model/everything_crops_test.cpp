// SAM's crop layers for "segment everything": which crops, which masks a crop keeps, and how
// the crops' masks become one answer.
#include <gtest/gtest.h>

#include "pure/everything_crops.h"

namespace {

using sam3::pure::everything_crops;

TEST(EverythingCrops, LayersCoverTheImageWithOverlappingCrops) {
  const auto crops = everything_crops(512, 384, 2, 512.f / 1500.f);
  ASSERT_EQ(crops.size(), 1u + 4u + 16u);
  EXPECT_EQ(crops[0].layer, 0);
  EXPECT_EQ(crops[0].window.x1, 512);
  EXPECT_EQ(crops[0].window.y1, 384);
  // Layer 1 as SAM's generate_crop_boxes: overlap int(512/1500 * 384) = 131, crops of
  // ceil((131 + 512) / 2) = 322 by ceil((131 + 384) / 2) = 258 at x 0, 191 and y 0, 127.
  EXPECT_EQ(crops[1].window.x0, 0);
  EXPECT_EQ(crops[1].window.x1, 322);
  EXPECT_EQ(crops[1].window.y1, 258);
  EXPECT_EQ(crops[2].window.x0, 191);
  EXPECT_EQ(crops[2].window.x1, 512);
  EXPECT_EQ(crops[3].window.y0, 127);
  for (int layer = 1; layer <= 2; ++layer) {
    std::vector<int> covered(512 * 384, 0);
    for (const auto& c : crops) {
      if (c.layer != layer) continue;
      EXPECT_GE(c.window.x0, 0);
      EXPECT_GE(c.window.y0, 0);
      EXPECT_LE(c.window.x1, 512);
      EXPECT_LE(c.window.y1, 384);
      for (int y = c.window.y0; y < c.window.y1; ++y) {
        for (int x = c.window.x0; x < c.window.x1; ++x) ++covered[y * 512 + x];
      }
    }
    for (int v : covered) ASSERT_GE(v, 1) << "layer " << layer << " leaves a pixel uncovered";
  }
}

TEST(EverythingCrops, AMaskTouchingACropsInnerEdgeIsCutButNotAtTheImagesEdge) {
  const sam3::TileRect crop{191, 0, 512, 258};
  EXPECT_TRUE(sam3::pure::cut_by_crop({195, 40, 240, 90}, crop, 512, 384)) << "near the crop's left edge, inside the image";
  EXPECT_TRUE(sam3::pure::cut_by_crop({300, 200, 350, 250}, crop, 512, 384)) << "near the crop's bottom edge";
  EXPECT_FALSE(sam3::pure::cut_by_crop({400, 2, 505, 60}, crop, 512, 384)) << "top and right are the image's edges";
  EXPECT_FALSE(sam3::pure::cut_by_crop({260, 60, 330, 140}, crop, 512, 384)) << "well inside";
}

sam3::Instance square(int x0, int y0, int x1, int y1, int width, int height, float score) {
  sam3::Instance inst;
  inst.score = score;
  std::vector<std::uint8_t> raster(static_cast<size_t>(width) * height, 0);
  for (int y = y0; y < y1; ++y) {
    for (int x = x0; x < x1; ++x) raster[static_cast<size_t>(y) * width + x] = 1;
  }
  inst.mask = sam3::Mask::from_raster(width, height, raster);
  inst.box = {static_cast<float>(x0), static_cast<float>(y0), static_cast<float>(x1), static_cast<float>(y1)};
  inst.area = static_cast<std::int64_t>(x1 - x0) * (y1 - y0);
  return inst;
}

TEST(EverythingCrops, CropMasksMoveIntoTheImage) {
  std::vector<sam3::pure::CompactInstance> in_crop{sam3::pure::compact(square(10, 20, 30, 40, 321, 257, 0.9f))};
  sam3::pure::move_into_image(in_crop, {191, 127, 512, 384}, 512, 384);
  const auto m = sam3::pure::expand(in_crop[0]).mask;
  ASSERT_EQ(m.width(), 512);
  ASSERT_EQ(m.height(), 384);
  EXPECT_TRUE(m.at(191 + 10, 127 + 20));
  EXPECT_FALSE(m.at(10, 20));
  EXPECT_EQ(in_crop[0].box.x0, 201);
  EXPECT_EQ(in_crop[0].box.y1, 167);
}

TEST(EverythingCrops, DuplicatesAcrossCropsKeepTheSmallerCropsMask) {
  using sam3::pure::EverythingCrop;
  const EverythingCrop whole{{0, 0, 512, 384}, 0}, quarter{{191, 0, 512, 258}, 1};
  using sam3::pure::compact;
  std::vector<std::pair<EverythingCrop, std::vector<sam3::pure::CompactInstance>>> per_crop;
  per_crop.push_back({whole, {compact(square(300, 80, 360, 140, 512, 384, 0.95f)), compact(square(60, 60, 120, 120, 512, 384, 0.9f))}});
  per_crop.push_back({quarter, {compact(square(301, 80, 360, 141, 512, 384, 0.91f))}});
  const auto merged = sam3::pure::merge_crops(std::move(per_crop), 0.7f);
  ASSERT_EQ(merged.size(), 2u) << "the green square once, the red one once";
  EXPECT_FLOAT_EQ(merged[0].score, 0.91f) << "the quarter crop's mask of the green square, best score first";
  EXPECT_FLOAT_EQ(merged[1].score, 0.9f);
}

}  // namespace
