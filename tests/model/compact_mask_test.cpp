// The compact form "segment everything" keeps its candidates in gives back the same instance.
#include <gtest/gtest.h>

#include <random>

#include "pure/compact_mask.h"
#include "predictor/postprocess.h"

namespace {

sam3::Instance instance_of(const sam3::Mask& mask, float score) {
  sam3::Instance inst;
  inst.mask = mask;
  inst.score = score;
  inst.box = sam3::predictor::mask_bounds(mask);
  inst.area = mask.area();
  return inst;
}

void expect_same(const sam3::Instance& a, const sam3::Instance& b) {
  EXPECT_EQ(a.mask, b.mask);
  EXPECT_EQ(a.mask.to_raster(), b.mask.to_raster());
  EXPECT_EQ(a.area, b.area);
  EXPECT_EQ(a.score, b.score);
  EXPECT_EQ(a.box.x0, b.box.x0);
  EXPECT_EQ(a.box.y1, b.box.y1);
}

TEST(CompactMask, GivesBackTheSameMask) {
  std::mt19937 rng(7);
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {7, 3}, {64, 48}, {301, 17}}) {
    for (int density : {0, 1, 50, 99, 100}) {
      std::vector<std::uint8_t> raster(static_cast<size_t>(w) * h, 0);
      for (auto& v : raster) v = static_cast<int>(rng() % 100) < density ? 1 : 0;
      const auto inst = instance_of(sam3::Mask::from_raster(w, h, raster), 0.5f);
      expect_same(sam3::pure::expand(sam3::pure::compact(inst)), inst);
    }
  }
}

TEST(CompactMask, AnObjectsMaskIsAFewBytesARow) {
  std::vector<std::uint8_t> raster(2000u * 2000u, 0);
  for (int y = 500; y < 1500; ++y) {
    for (int x = 700; x < 1700; ++x) raster[static_cast<size_t>(y) * 2000 + x] = 1;
  }
  const auto m = sam3::Mask::from_raster(2000, 2000, raster);
  const auto small = sam3::pure::compact(instance_of(m, 0.9f));
  EXPECT_LT(sam3::pure::compact_bytes(small), 1000u * 2u * 4u + 256u) << "two runs a row of the box";
  EXPECT_EQ(sam3::pure::expand(small).mask, m);
}

TEST(CompactMask, MovesIntoTheImage) {
  std::vector<std::uint8_t> raster(80, 0);
  raster[3 * 10 + 4] = raster[4 * 10 + 5] = 1;
  auto small = sam3::pure::compact(instance_of(sam3::Mask::from_raster(10, 8, raster), 0.9f));
  sam3::pure::move_mask(small, 100, 50, 200, 120);
  const auto big = sam3::pure::expand(small);
  ASSERT_EQ(big.mask.width(), 200);
  EXPECT_TRUE(big.mask.at(104, 53));
  EXPECT_TRUE(big.mask.at(105, 54));
  EXPECT_EQ(big.area, 2);
  EXPECT_EQ(big.box.x0, 104.f);
}

}  // namespace
