// The polarity words every front accepts for boxes and points, and the segment options' bounds
// every front meets.
#include <gtest/gtest.h>

#include "pure/prompt_rules.h"
#include "sam3/error.h"
#include "sam3/prompt_json.h"
#include "sam3/types.h"

namespace {

TEST(Polarity, EveryFrontSpellsItTheSameWay) {
  for (const char* w : {"pos", "positive", "POS", "Positive"}) EXPECT_EQ(sam3::parse_polarity(w), true) << w;
  for (const char* w : {"neg", "negative", "NEG", "Negative"}) EXPECT_EQ(sam3::parse_polarity(w), false) << w;
  for (const char* w : {"", "p", "posi", "yes", "1", "neg ", "ne\xc3\xa9"}) EXPECT_FALSE(sam3::parse_polarity(w)) << w;
}

// The library's own check (which the CLI's, Python's and the labeler's segmentations meet) has the
// JSON codec's bounds: max_instances 2,000,000 was taken from Python while the server refused it.
TEST(SegmentOptionsBounds, TheLibraryRefusesWhatTheJsonCodecRefuses) {
  sam3::SegmentOptions o;
  o.min_area = sam3::kMaxMinArea;
  o.max_instances = sam3::kMaxMaxInstances;
  EXPECT_NO_THROW(sam3::pure::check_options(o));
  EXPECT_NO_THROW(sam3::parse_segment_options_json(R"({"min_area": 1000000000000, "max_instances": 1000000})"));
  o.max_instances = sam3::kMaxMaxInstances + 1;
  EXPECT_THROW(sam3::pure::check_options(o), sam3::Error);
  EXPECT_THROW(sam3::parse_segment_options_json(R"({"max_instances": 1000001})"), sam3::Error);
  o.max_instances = 0;
  o.min_area = sam3::kMaxMinArea + 1;
  try {
    sam3::pure::check_options(o);
    ADD_FAILURE() << "min_area above the bound was taken";
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), sam3::ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("min_area must be from 0 to 1000000000000"), std::string::npos) << e.what();
  }
  EXPECT_THROW(sam3::parse_segment_options_json(R"({"min_area": 1000000000001})"), sam3::Error);
}

}  // namespace
