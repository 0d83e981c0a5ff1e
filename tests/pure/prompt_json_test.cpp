// sam3's one prompt codec: every kind of entry, and errors that name the field path.
#include "sam3/prompt_json.h"

#include <gtest/gtest.h>

#include "sam3/error.h"

namespace {

std::string error_of(const std::string& json) {
  try {
    sam3::parse_prompts_json(json);
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), sam3::ErrorCode::kInvalidArgument) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted " << json;
  return {};
}

std::string options_error_of(const std::string& json);

TEST(PromptJson, EveryKindOfEntry) {
  const auto entries = sam3::parse_prompts_json(
      R"(["car", {"text": "bus", "boxes": [[1, 2, 30, 40], [5, 6, 7, 8, "NEG"]]}, {"boxes": [[0, 0, 9, 9]]},
         {"points": [[3, 4], [5, 6, "neg"]], "box": [1, 1, 8, 8]}, {"everything": true, "points_per_side": 12}])");
  ASSERT_EQ(entries.size(), 5u);
  EXPECT_EQ(entries[0].prompt.text, "car");
  EXPECT_EQ(entries[1].prompt.text, "bus");
  ASSERT_EQ(entries[1].prompt.boxes.size(), 2u);
  EXPECT_EQ(entries[1].prompt.boxes[0].box.x1, 30.f);
  EXPECT_TRUE(entries[1].prompt.boxes[0].positive);
  EXPECT_FALSE(entries[1].prompt.boxes[1].positive);
  EXPECT_TRUE(entries[2].prompt.text.empty());
  EXPECT_EQ(entries[3].kind, sam3::PromptEntry::Kind::kObject);
  ASSERT_EQ(entries[3].object.points.size(), 2u);
  EXPECT_FALSE(entries[3].object.points[1].positive);
  ASSERT_TRUE(entries[3].object.box.has_value());
  EXPECT_EQ(entries[4].kind, sam3::PromptEntry::Kind::kEverything);
  EXPECT_EQ(entries[4].points_per_side, 12);
}

TEST(PromptJson, ErrorsNameTheFieldPath) {
  EXPECT_NE(error_of(R"(["a", "b", {"boxes": [[1, 2, 3, 4, "maybe"]]}])").find("prompts[2].boxes[0][4] must be \"pos\" or \"neg\""),
            std::string::npos);
  EXPECT_NE(error_of(R"([{"boxes": [[1, "x", 3, 4]]}])").find("prompts[0].boxes[0][1] must be a number"), std::string::npos);
  EXPECT_NE(error_of(R"([{"boxes": [[1, 2, 3]]}])").find("prompts[0].boxes[0] must be [x0, y0, x1, y1]"), std::string::npos);
  EXPECT_NE(error_of(R"(["a", {"text": 5}])").find("prompts[1].text must be a string"), std::string::npos);
  EXPECT_NE(error_of(R"([{"text": "  "}])").find("prompts[0] is empty"), std::string::npos);
  EXPECT_NE(error_of(R"([{"points": [[1, 2, "up"]]}])").find("prompts[0].points[0][2] must be \"pos\" or \"neg\""), std::string::npos);
  EXPECT_NE(error_of(R"([{"box": [1, 2, 3, null]}])").find("prompts[0].box[3] must be a number"), std::string::npos);
  EXPECT_NE(error_of(R"([{"points": [[1, 2]], "text": "car"}])").find("mixes a concept"), std::string::npos);
  EXPECT_NE(error_of(R"([{"everything": true, "points_per_side": 2.5}])").find("prompts[0].points_per_side must be a whole"),
            std::string::npos);
  EXPECT_NE(error_of(R"([7])").find("prompts[0] must be a string or"), std::string::npos);
  EXPECT_NE(error_of(R"({"text": "car"})").find("prompts must be a list"), std::string::npos);
  EXPECT_NE(error_of("[").find("not valid JSON"), std::string::npos);
}

std::string options_error_of(const std::string& json) {
  try {
    sam3::parse_segment_options_json(json, "options");
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), sam3::ErrorCode::kInvalidArgument) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted " << json;
  return {};
}

// A misspelled key was dropped and the prompt answered without it (a new user's trial: "bozes",
// "treshold", "multimask" inside a prompt): refused, naming the key, where it was and the keys known.
TEST(PromptJson, UnknownKeysAreRefusedNamingTheKnownOnes) {
  auto m = error_of(R"(["a", {"text": "car", "bozes": [[1, 1, 5, 5]]}])");
  EXPECT_NE(m.find("prompts[1] has an unknown key \"bozes\"; the keys of a concept are \"text\", \"boxes\""), std::string::npos) << m;
  m = error_of(R"([{"points": [[1, 2]], "multimask": true}])");
  EXPECT_NE(m.find("prompts[0] has an unknown key \"multimask\"; the keys of a clicked object are \"points\", \"box\""), std::string::npos)
      << m;
  m = error_of(R"([{"points": []}])");
  EXPECT_NE(m.find("prompts[0].points is empty"), std::string::npos) << m;
  m = options_error_of(R"({"treshold": 0.9})");
  EXPECT_NE(m.find("options has an unknown key \"treshold\""), std::string::npos) << m;
  EXPECT_NE(m.find("\"threshold\", \"mask_threshold\", \"nms\", \"min_area\", \"max_instances\""), std::string::npos) << m;
}

TEST(SegmentOptionsJson, EveryFrontReadsTheSameNamesWithTheSameBounds) {
  sam3::SegmentOptions defaults;
  defaults.score_threshold = 0.3f;
  const auto o =
      sam3::parse_segment_options_json(R"({"mask_threshold": 0.25, "nms": 0.7, "min_area": 1e3, "max_instances": 12})", "", defaults);
  EXPECT_EQ(o.score_threshold, 0.3f) << "a missing key keeps the default";
  EXPECT_EQ(o.mask_threshold, 0.25f);
  EXPECT_EQ(o.nms_iou, 0.7f);
  EXPECT_EQ(o.min_area, 1000) << "1e3 is a whole number";
  EXPECT_EQ(o.max_instances, 12);
  EXPECT_EQ(sam3::parse_segment_options_json(R"({"min_area": 1000000000000})").min_area, 1000000000000LL)
      << "min_area is read as a 64-bit count, not through a float";
}

TEST(SegmentOptionsJson, OutOfRangeOrFractionalValuesAreRefusedNamingTheKey) {
  EXPECT_NE(options_error_of(R"({"threshold": 2})").find("options.threshold must be between 0 and 1"), std::string::npos);
  EXPECT_NE(options_error_of(R"({"nms": -0.1})").find("options.nms must be between 0 and 1"), std::string::npos);
  EXPECT_NE(options_error_of(R"({"mask_threshold": "0.5"})").find("options.mask_threshold must be a number"), std::string::npos);
  EXPECT_NE(options_error_of(R"({"min_area": 10.5})").find("options.min_area must be a whole number"), std::string::npos);
  EXPECT_NE(options_error_of(R"({"min_area": -1})").find("options.min_area must be between 0 and"), std::string::npos);
  // Would wrap an int: checked as a number before it becomes one.
  EXPECT_NE(options_error_of(R"({"max_instances": 4294967297})").find("options.max_instances must be between 0 and"), std::string::npos);
  EXPECT_NE(options_error_of(R"([0.5])").find("options must be an object"), std::string::npos);
  try {
    sam3::parse_segment_options_json("7");
    ADD_FAILURE() << "accepted 7";
  } catch (const sam3::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("the options must be an object", 0), 0u) << e.what();
  }
}

}  // namespace
