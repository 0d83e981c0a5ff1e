// The one check of integers sam3 reads back from its own files: in its own JSON type, before it
// narrows (records, checkpoints and shard manifests all use it).
#include "core/json_integer.h"

#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;
using sam3::core::json_integer_in;

TEST(JsonInteger, ValuesInRangeAreReadAsThemselves) {
  EXPECT_EQ(sam3::core::json_integer_in(json::parse("0"), 0, 10), 0);
  EXPECT_EQ(sam3::core::json_integer_in(json::parse("-1"), -1, 10), -1);
  EXPECT_EQ(sam3::core::json_integer_in(json::parse("9223372036854775807"), 0, std::numeric_limits<std::int64_t>::max()),
            std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(sam3::core::json_integer_in(nlohmann::ordered_json(7u), 7, 7), 7) << "ordered_json too";
}

TEST(JsonInteger, WrappingValuesAndOtherTypesAreRefused) {
  // Read through get<int64_t>() these become -1 and INT64_MIN: the bug class of issue 42 item 7.
  EXPECT_FALSE(sam3::core::json_integer_in(json::parse("18446744073709551615"), -1, 100)) << "2^64 - 1 is not -1";
  EXPECT_FALSE(sam3::core::json_integer_in(json::parse("9223372036854775808"), std::numeric_limits<std::int64_t>::min(), 0));
  EXPECT_FALSE(sam3::core::json_integer_in(json::parse("4294967295"), 0, std::numeric_limits<int>::max())) << "past an int";
  EXPECT_FALSE(sam3::core::json_integer_in(json::parse("0"), 1, 10)) << "an unsigned value below lo";
  EXPECT_FALSE(sam3::core::json_integer_in(json::parse("-5"), 0, 10));
  EXPECT_FALSE(sam3::core::json_integer_in(json::parse("3"), 0, -1)) << "an empty range";
  EXPECT_FALSE(sam3::core::json_integer_in(json::parse("1.0"), 0, 10)) << "a float is not an integer";
  EXPECT_FALSE(sam3::core::json_integer_in(json::parse("\"3\""), 0, 10));
  EXPECT_FALSE(sam3::core::json_integer_in(json::parse("null"), 0, 10));
  EXPECT_FALSE(sam3::core::json_integer_in(json::parse("true"), 0, 10));
}

}  // namespace
