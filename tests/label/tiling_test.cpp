#include <gtest/gtest.h>

#include "sam3/export.h"
#include "sam3/label.h"
#include "sam3/model.h"
#include "support/test_images.h"

namespace {

using sam3::test::Rect;

sam3::MaskCrop crop_of_rect(const Rect& r, int w, int h) {
  sam3::Mask m{w, h, std::vector<std::uint8_t>(static_cast<size_t>(w) * h, 0)};
  for (int y = r.y0; y < r.y1; ++y)
    for (int x = r.x0; x < r.x1; ++x) m.data[static_cast<size_t>(y) * w + x] = 1;
  return sam3::crop_mask(m);
}

TEST(Tiling, GridCoversTheImageWithFullTilesAndOverlap) {
  const auto grid = sam3::tile_grid(1000, 300, 300, 60);
  ASSERT_EQ(grid.size(), 4u);
  EXPECT_EQ(grid[0].x0, 0);
  EXPECT_EQ(grid[1].x0, 240);
  EXPECT_EQ(grid[2].x0, 480);
  EXPECT_EQ(grid[3].x0, 700) << "the last tile is flush with the right edge";
  for (const auto& t : grid) {
    EXPECT_EQ(t.x1 - t.x0, 300);
    EXPECT_EQ(t.y1 - t.y0, 300);
  }
  EXPECT_EQ(sam3::tile_grid(200, 100, 300, 60).size(), 1u) << "small images are one tile";
}

TEST(Tiling, CropRleEqualsFullMaskRle) {
  const auto crop = crop_of_rect({13, 7, 29, 40}, 50, 45);
  EXPECT_EQ(crop.x0, 13);
  EXPECT_EQ(crop.width, 16);
  EXPECT_EQ(crop.area(), 16 * 33);
  EXPECT_EQ(sam3::rle_counts(crop), sam3::rle_counts(crop.to_mask()));
  sam3::MaskCrop empty{0, 0, 0, 0, 5, 4, {}};
  EXPECT_EQ(sam3::rle_counts(empty), (std::vector<std::uint32_t>{20}));
}

TEST(Tiling, SeamHalvesAreMergedAndSeparateObjectsAreNot) {
  const auto grid = sam3::tile_grid(1000, 300, 300, 60);
  // An object at x 270..330 seen cut by tile 0 (up to its edge at 300) and whole by tile 1.
  sam3::LabeledInstance left{0, 0.9f, {270, 40, 300, 110}, crop_of_rect({270, 40, 300, 110}, 1000, 300)};
  sam3::LabeledInstance right{0, 0.8f, {270, 40, 330, 110}, crop_of_rect({270, 40, 330, 110}, 1000, 300)};
  sam3::LabeledInstance other{0, 0.7f, {600, 40, 650, 100}, crop_of_rect({600, 40, 650, 100}, 1000, 300)};
  sam3::LabeledInstance other_category{1, 0.7f, {270, 40, 330, 110}, crop_of_rect({270, 40, 330, 110}, 1000, 300)};
  const auto merged = sam3::merge_across_tiles({left, right, other, other_category}, {0, 1, 2, 1}, grid, {});
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_FLOAT_EQ(merged[0].score, 0.9f);
  EXPECT_EQ(merged[0].mask.area(), 60 * 70);
  EXPECT_FLOAT_EQ(merged[0].box.x1, 330.f);
}

TEST(Tiling, AutoTilesOnlyImagesMuchLargerThanTheModelInput) {
  auto model = sam3::Model::load(sam3::test::test_models_dir() / "usls");  // input 224
  sam3::TileOptions automatic;
  automatic.mode = sam3::TileOptions::Mode::kAuto;
  EXPECT_FALSE(sam3::will_tile(*model, 448, 300, automatic));
  EXPECT_TRUE(sam3::will_tile(*model, 449, 300, automatic));
  EXPECT_FALSE(sam3::will_tile(*model, 5000, 5000, {}));
}

TEST(Tiling, AnObjectAcrossATileSeamComesOutAsOneInstance) {
  auto model = sam3::Model::load(sam3::test::test_models_dir() / "usls");
  sam3::Image image{1000, 300, std::vector<std::uint8_t>(1000 * 300 * 3, 0)};
  const Rect across{270, 40, 330, 110}, alone{560, 30, 620, 100};
  sam3::test::fill(image, across, 255, 0, 0);
  sam3::test::fill(image, alone, 255, 0, 0);
  sam3::TileOptions tiles;
  tiles.mode = sam3::TileOptions::Mode::kFixed;
  tiles.tile = 300;
  tiles.overlap = 60;
  sam3::LabelTimings timings;
  const auto found = sam3::label_image(*model, image, {{"red", {"red", {}}}}, {}, tiles, &timings);
  EXPECT_EQ(timings.tiles, 4);
  ASSERT_EQ(found.size(), 2u);
  const sam3::Mask first = found[0].mask.to_mask(), second = found[1].mask.to_mask();
  const double a = sam3::test::iou_with_rect(first, across), b = sam3::test::iou_with_rect(second, across);
  EXPECT_GT(std::max(a, b), 0.75) << "the seam object is one instance covering both halves";
  EXPECT_GT(std::max(sam3::test::iou_with_rect(first, alone), sam3::test::iou_with_rect(second, alone)), 0.75);
  EXPECT_EQ(found[0].mask.full_width, 1000);
  const auto semantic = sam3::semantic_mask(found, 0, 1000, 300);
  EXPECT_EQ(semantic.data[static_cast<size_t>(60) * 1000 + 300], 1);
}

}  // namespace
