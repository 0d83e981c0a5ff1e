// The shard set a merge takes (image folders and maps): every K of one N, each once.
#include <gtest/gtest.h>

#include "label/shard_set.h"
#include "sam3/error.h"

namespace {

using sam3::label::check_shard_set;
using sam3::label::ShardNumber;

std::string refusal(const std::vector<ShardNumber>& shards) {
  try {
    check_shard_set(shards);
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), sam3::ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "";
}

TEST(ShardSet, EveryShardOfOneNOnce) {
  EXPECT_EQ(refusal({{2, 3, "b"}, {1, 3, "a"}, {3, 3, "c"}}), "");
  EXPECT_EQ(refusal({{1, 1, "all"}}), "");
  EXPECT_EQ(refusal({{1, 3, "a"}, {3, 3, "c"}}), "shard 2/3 is missing; run it, then merge all 3");
  EXPECT_EQ(refusal({{1, 5, "a"}, {3, 5, "c"}, {5, 5, "e"}}), "shards 2/5 and 4/5 are missing; run them, then merge all 5");
  EXPECT_EQ(refusal({{1, 3, "a"}, {1, 2, "b"}}).find("b is shard 1/2 and a shard 1/3"), 0u);
  EXPECT_EQ(refusal({{1, 3, "a"}, {1, 3, "a2"}, {2, 3, "b"}}).find("shard 1/3 is given twice (a and a2)"), 0u);
  EXPECT_NE(refusal({{4, 3, "d"}}).find("which no run has"), std::string::npos);
  EXPECT_NE(refusal({{0, 0, "z"}}).find("which no run has"), std::string::npos);
}

TEST(ShardSet, AHugeNFromADamagedFileSizesNothing) {
  // N comes from a file: 2^31 - 1 once meant a vector of that many entries.
  const auto why = refusal({{1, 2147483647, "a"}});
  EXPECT_NE(why.find("shards 2/2147483647, 3/2147483647"), std::string::npos) << why;
  EXPECT_NE(why.find("and 2147483638 more are missing"), std::string::npos) << why;
}

}  // namespace
