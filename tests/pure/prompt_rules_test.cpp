// The polarity words every front accepts for boxes and points, and the segment options' bounds
// every front meets.
#include <gtest/gtest.h>

#include <limits>
#include <utility>

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

// One place rule for every prompt in pixels (text prompts' boxes, clicks, video prompts, map
// exemplars): the edges are inside, NaN and infinities are not, and the refusal prints numbers as
// given (it printed 1000.000000 for a text prompt's box).
TEST(PlaceRule, PointsAndBoxesInsideThePictureOnly) {
  using sam3::pure::box_refusal;
  using sam3::pure::point_refusal;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const auto& [x, y] : {std::pair{0.f, 0.f}, {640.f, 480.f}, {319.5f, 0.25f}})
    EXPECT_EQ(point_refusal("p", x, y, 640, 480, "image"), "");
  for (const auto& [x, y] : {std::pair{-0.5f, 1.f}, {1.f, 480.5f}, {640.1f, 1.f}, {nan, 1.f}, {1.f, inf}}) {
    EXPECT_NE(point_refusal("p", x, y, 640, 480, "image"), "") << x << "," << y;
  }
  EXPECT_EQ(point_refusal("object 1, point 2", 700, 20.5f, 640, 480, "image"),
            "object 1, point 2 (700, 20.5) is outside the 640x480 image; x must be 0..640 and y 0..480 (pixels)");
  EXPECT_EQ(box_refusal("b", {0, 0, 640, 480}, 640, 480, "image"), "");
  for (const auto& b : {sam3::Box{10, 10, 10, 20}, {10, 20, 30, 10}, {-1, 0, 5, 5}, {0, 0, 641, 5}, {nan, 0, 5, 5}, {0, 0, inf, 5}}) {
    EXPECT_NE(box_refusal("b", b, 640, 480, "image"), "") << b.x0 << "," << b.y0 << "," << b.x1 << "," << b.y1;
  }
  EXPECT_EQ(box_refusal("box 1", {1000, 1000, 1100, 1100.5f}, 640, 480, "frame"),
            "box 1 (1000, 1000, 1100, 1100.5) must satisfy 0 <= x0 < x1 <= 640 and 0 <= y0 < y1 <= 480 (pixels x0,y0,x1,y1 of the "
            "640x480 frame)");
  try {
    sam3::pure::check_boxes({sam3::BoxPrompt{{1000, 10, 1100, 20}, true}}, 640, 480);
    ADD_FAILURE() << "a box outside the image was taken";
  } catch (const sam3::Error& e) {
    EXPECT_NE(std::string(e.what()).find("box 1 (1000, 10, 1100, 20) must satisfy"), std::string::npos) << e.what();
  }
}

}  // namespace
