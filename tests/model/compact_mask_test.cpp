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
  inst.box = sam3::mask_bounds(mask);
  inst.area = std::count(mask.data.begin(), mask.data.end(), std::uint8_t{1});
  return inst;
}

void expect_same(const sam3::Instance& a, const sam3::Instance& b) {
  EXPECT_EQ(a.mask.width, b.mask.width);
  EXPECT_EQ(a.mask.height, b.mask.height);
  EXPECT_EQ(a.mask.data, b.mask.data);
  EXPECT_EQ(a.area, b.area);
  EXPECT_EQ(a.score, b.score);
  EXPECT_EQ(a.box.x0, b.box.x0);
  EXPECT_EQ(a.box.y1, b.box.y1);
}

TEST(CompactMask, GivesBackTheSameMask) {
  std::mt19937 rng(7);
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {7, 3}, {64, 48}, {301, 17}}) {
    for (int density : {0, 1, 50, 99, 100}) {
      sam3::Mask m{w, h, std::vector<std::uint8_t>(static_cast<size_t>(w) * h, 0)};
      for (auto& v : m.data) v = static_cast<int>(rng() % 100) < density ? 1 : 0;
      const auto inst = instance_of(m, 0.5f);
      expect_same(sam3::pure::expand(sam3::pure::compact(inst)), inst);
    }
  }
}

TEST(CompactMask, AnObjectsMaskIsAFewBytesARow) {
  sam3::Mask m{2000, 2000, std::vector<std::uint8_t>(2000u * 2000u, 0)};
  for (int y = 500; y < 1500; ++y) {
    for (int x = 700; x < 1700; ++x) m.data[static_cast<size_t>(y) * 2000 + x] = 1;
  }
  const auto small = sam3::pure::compact(instance_of(m, 0.9f));
  EXPECT_LT(sam3::pure::compact_bytes(small), 1000u * 2u * 4u + 256u) << "two runs a row of the box";
  EXPECT_EQ(sam3::pure::expand(small).mask.data, m.data);
}

TEST(CompactMask, MovesIntoTheImage) {
  sam3::Mask m{10, 8, std::vector<std::uint8_t>(80, 0)};
  m.data[3 * 10 + 4] = m.data[4 * 10 + 5] = 1;
  auto small = sam3::pure::compact(instance_of(m, 0.9f));
  sam3::pure::move_mask(small, 100, 50, 200, 120);
  const auto big = sam3::pure::expand(small);
  ASSERT_EQ(big.mask.width, 200);
  EXPECT_EQ(big.mask.data[53u * 200 + 104], 1);
  EXPECT_EQ(big.mask.data[54u * 200 + 105], 1);
  EXPECT_EQ(big.area, 2);
  EXPECT_EQ(big.box.x0, 104.f);
}

}  // namespace
