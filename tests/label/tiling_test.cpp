#include <gtest/gtest.h>

#include <array>

#include "sam3/error.h"
#include "sam3/export.h"
#include "label/label_image.h"
#include "sam3/model.h"
#include "support/test_images.h"

namespace {

using sam3::test::Rect;

sam3::label::MaskCrop crop_of_rect(const Rect& r, int w, int h) {
  std::vector<std::uint8_t> raster(static_cast<size_t>(w) * h, 0);
  for (int y = r.y0; y < r.y1; ++y)
    for (int x = r.x0; x < r.x1; ++x) raster[static_cast<size_t>(y) * w + x] = 1;
  return sam3::label::crop_mask(sam3::Mask::from_raster(w, h, raster));
}

TEST(Tiling, GridCoversTheImageWithFullTilesAndOverlap) {
  const sam3::label::TileGrid grid(1000, 300, 300, 60);
  ASSERT_EQ(grid.size(), 4);
  EXPECT_EQ(grid[0].x0, 0);
  EXPECT_EQ(grid[1].x0, 240);
  EXPECT_EQ(grid[2].x0, 480);
  EXPECT_EQ(grid[3].x0, 700) << "the last tile is flush with the right edge";
  for (std::int64_t i = 0; i < grid.size(); ++i) {
    const sam3::TileRect t = grid[i];
    EXPECT_EQ(t.x1 - t.x0, 300);
    EXPECT_EQ(t.y1 - t.y0, 300);
  }
  EXPECT_EQ(sam3::label::TileGrid(200, 100, 300, 60).size(), 1) << "small images are one tile";
}

// The grid as the tiles were once listed: every start, then own parts, first holders and
// neighbours by brute force over the list. The lazy grid must agree everywhere.
std::vector<sam3::TileRect> listed_grid(int width, int height, int tile, int overlap) {
  const auto starts = [&](int size) {
    if (size <= tile) return std::vector<int>{0};
    std::vector<int> out;
    for (int s = 0; s + tile < size; s += std::max(1, tile - overlap)) out.push_back(s);
    out.push_back(size - tile);
    return out;
  };
  std::vector<sam3::TileRect> out;
  for (int y : starts(height))
    for (int x : starts(width)) out.push_back({x, y, std::min(width, x + tile), std::min(height, y + tile)});
  return out;
}

TEST(Tiling, TheLazyGridAgreesWithTheListedOneTileForTile) {
  for (const auto [w, h, tile, overlap] : std::vector<std::array<int, 4>>{{1000, 300, 300, 60},
                                                                          {1200, 800, 600, 100},
                                                                          {700, 700, 100, 90},
                                                                          {50, 40, 64, 8},
                                                                          {1020, 777, 300, 0},
                                                                          {1000, 1000, 100, 60},
                                                                          {1, 1, 1, 0},
                                                                          {199, 201, 7, 3}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " tile " + std::to_string(tile) + " overlap " + std::to_string(overlap));
    const sam3::label::TileGrid grid(w, h, tile, overlap);
    const auto listed = listed_grid(w, h, tile, overlap);
    ASSERT_EQ(grid.size(), static_cast<std::int64_t>(listed.size()));
    const auto same = [](const sam3::TileRect& a, const sam3::TileRect& b) {
      return a.x0 == b.x0 && a.y0 == b.y0 && a.x1 == b.x1 && a.y1 == b.y1;
    };
    for (size_t t = 0; t < listed.size(); ++t) {
      ASSERT_TRUE(same(grid[static_cast<std::int64_t>(t)], listed[t])) << "tile " << t;
      sam3::TileRect own = listed[t];
      for (size_t u = 0; u < t; ++u) {
        if (listed[u].y0 == listed[t].y0 && listed[u].x0 < listed[t].x0) own.x0 = std::max(own.x0, std::min(listed[u].x1, own.x1));
        if (listed[u].x0 == listed[t].x0 && listed[u].y0 < listed[t].y0) own.y0 = std::max(own.y0, std::min(listed[u].y1, own.y1));
      }
      ASSERT_TRUE(same(grid.own_part(static_cast<std::int64_t>(t)), own)) << "own part of tile " << t;
      std::vector<std::int64_t> later;
      for (size_t u = t + 1; u < listed.size(); ++u) {
        const auto& a = listed[t];
        const auto& b = listed[u];
        if (std::max(a.x0, b.x0) < std::min(a.x1, b.x1) && std::max(a.y0, b.y0) < std::min(a.y1, b.y1)) {
          later.push_back(static_cast<std::int64_t>(u));
        }
      }
      ASSERT_EQ(grid.later_neighbours(static_cast<std::int64_t>(t)), later) << "neighbours of tile " << t;
    }
    for (double x = 0; x < w; x += 13.5) {
      for (double y = 0; y < h; y += 17.25) {
        std::int64_t first = 0;
        for (size_t t = 0; t < listed.size(); ++t) {
          const auto& r = listed[t];
          if (x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1) {
            first = static_cast<std::int64_t>(t);
            break;
          }
        }
        ASSERT_EQ(grid.tile_at(x, y), first) << "the tile holding " << x << "," << y;
      }
    }
  }
}

TEST(Tiling, AGridOfTrillionsOfTilesCostsAFewIntegers) {
  // 2147483647 x 2147483647 pixels (a 1 KB VRT can declare it): listing its 5.9e12 tiles
  // needed about 95 TB; the grid answers any tile at once.
  const sam3::label::TileGrid grid(2147483647, 2147483647, 1008, 126);
  EXPECT_EQ(grid.columns(), 2434789);
  EXPECT_EQ(grid.size(), std::int64_t{2434789} * 2434789);
  const sam3::TileRect last = grid[grid.size() - 1];
  EXPECT_EQ(last.x1, 2147483647);
  EXPECT_EQ(last.y0, 2147483647 - 1008);
  EXPECT_EQ(grid.tile_at(2147483646.5, 0.5), grid.columns() - 1);
  EXPECT_THROW(sam3::label::TileGrid(100, 100, 64, 64), sam3::Error) << "overlap must be below the tile";
  EXPECT_THROW(sam3::label::TileGrid(100, 100, 0, 0), sam3::Error);
}

TEST(Tiling, CropRleEqualsFullMaskRle) {
  const auto crop = crop_of_rect({13, 7, 29, 40}, 50, 45);
  EXPECT_EQ(crop.x0, 13);
  EXPECT_EQ(crop.width, 16);
  EXPECT_EQ(crop.area(), 16 * 33);
  EXPECT_EQ(sam3::label::rle_counts(crop), sam3::rle_counts(crop.to_mask()));
  sam3::label::MaskCrop empty{0, 0, 0, 0, 5, 4, {}};
  EXPECT_EQ(sam3::label::rle_counts(empty), (std::vector<std::uint32_t>{20}));
}

TEST(Tiling, SeamHalvesAreMergedAndSeparateObjectsAreNot) {
  const sam3::label::TileGrid grid(1000, 300, 300, 60);
  // An object at x 270..330 seen cut by tile 0 (up to its edge at 300) and whole by tile 1.
  sam3::label::LabeledInstance left{0, 0.9f, {270, 40, 300, 110}, crop_of_rect({270, 40, 300, 110}, 1000, 300)};
  sam3::label::LabeledInstance right{0, 0.8f, {270, 40, 330, 110}, crop_of_rect({270, 40, 330, 110}, 1000, 300)};
  sam3::label::LabeledInstance other{0, 0.7f, {600, 40, 650, 100}, crop_of_rect({600, 40, 650, 100}, 1000, 300)};
  sam3::label::LabeledInstance other_category{1, 0.7f, {270, 40, 330, 110}, crop_of_rect({270, 40, 330, 110}, 1000, 300)};
  const auto merged = sam3::label::merge_across_tiles({left, right, other, other_category}, {0, 1, 2, 1}, grid, {});
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_FLOAT_EQ(merged[0].score, 0.9f);
  EXPECT_EQ(merged[0].mask.area(), 60 * 70);
  EXPECT_FLOAT_EQ(merged[0].box.x1, 330.f);
}

TEST(Tiling, AutoTilesOnlyImagesMuchLargerThanTheModelInput) {
  auto model = sam3::Model::load(sam3::test::test_models_dir() / "usls");  // input 224
  sam3::TileOptions automatic;
  automatic.mode = sam3::TileOptions::Mode::kAuto;
  EXPECT_FALSE(sam3::label::will_tile(*model, 448, 300, automatic));
  EXPECT_TRUE(sam3::label::will_tile(*model, 449, 300, automatic));
  EXPECT_FALSE(sam3::label::will_tile(*model, 5000, 5000, {}));
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
  sam3::label::LabelTimings timings;
  const auto found = sam3::label::label_image(model, image, {{"red", {"red", {}}}}, {}, tiles, &timings);
  EXPECT_EQ(timings.tiles, 4);
  ASSERT_EQ(found.size(), 2u);
  const sam3::Mask first = found[0].mask.to_mask(), second = found[1].mask.to_mask();
  const double a = sam3::test::iou_with_rect(first, across), b = sam3::test::iou_with_rect(second, across);
  EXPECT_GT(std::max(a, b), 0.75) << "the seam object is one instance covering both halves";
  EXPECT_GT(std::max(sam3::test::iou_with_rect(first, alone), sam3::test::iou_with_rect(second, alone)), 0.75);
  EXPECT_EQ(found[0].mask.full_width, 1000);
  const auto semantic = sam3::label::semantic_mask(found, 0, 1000, 300);
  EXPECT_TRUE(semantic.at(300, 60));
}

}  // namespace
