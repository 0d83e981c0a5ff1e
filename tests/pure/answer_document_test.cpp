// The answer's envelope (sam3/answer_json.h): the keys in their order, an image named by path or
// by id (exactly one), the second model only when there is one, and the bytes of its tree.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sam3/answer_json.h"
#include "sam3/error.h"

namespace {

using json = nlohmann::ordered_json;

sam3::Answer two_images() {
  sam3::Answer a;
  a.model = {"usls", "sam3-int8"};
  a.images.push_back({"photo.jpg", "", 40, 30, {R"({"text":"cat","boxes":[],"instances":[]})"}});
  a.images.push_back({"", "9188e926", 8, 6, {R"({"everything":true,"instances":[]})", R"({"text":"dog","boxes":[],"instances":[]})"}});
  a.timings_ms = {1.5, 2, 3, 4, 5, 6, true};
  return a;
}

std::vector<std::string> keys(const json& j) {
  std::vector<std::string> out;
  for (const auto& [k, v] : j.items()) out.push_back(k);
  return out;
}

TEST(AnswerDocument, HoldsTheModelTheImagesAndTheTimingsInOrder) {
  const std::string text = sam3::answer_json(two_images());
  const json j = json::parse(text);
  EXPECT_EQ(j.dump(), text) << "the bytes of its tree";
  EXPECT_EQ(keys(j), (std::vector<std::string>{"model", "images", "timings_ms"}));
  EXPECT_EQ(j["model"], json::parse(R"({"layout":"usls","name":"sam3-int8"})"));
  EXPECT_EQ(keys(j["images"][0]), (std::vector<std::string>{"path", "width", "height", "prompts"}));
  EXPECT_EQ(keys(j["images"][1]), (std::vector<std::string>{"image_id", "width", "height", "prompts"}));
  EXPECT_EQ(j["images"][1]["prompts"].size(), 2u);
  EXPECT_EQ(j["images"][1]["prompts"][1]["text"], "dog");
  EXPECT_EQ(keys(j["timings_ms"]),
            (std::vector<std::string>{"load", "preprocess", "encode_image", "encode_text", "decode", "postprocess", "image_cached"}));
  EXPECT_EQ(j["timings_ms"]["load"], 1.5);
  EXPECT_EQ(j["timings_ms"]["image_cached"], true);
}

TEST(AnswerDocument, NamesTheInteractiveModelOnlyWhenThereIsOne) {
  auto a = two_images();
  EXPECT_FALSE(json::parse(sam3::answer_json(a)).contains("interactive_model"));
  a.interactive_model = sam3::AnswerModel{"sam3-tracker", "tracker"};
  const json j = json::parse(sam3::answer_json(a));
  EXPECT_EQ(keys(j), (std::vector<std::string>{"model", "interactive_model", "images", "timings_ms"}));
  EXPECT_EQ(j["interactive_model"]["name"], "tracker");
}

TEST(AnswerDocument, AnImageIsNamedByExactlyOneOfPathAndId) {
  for (const auto& [path, id] : {std::pair{"", ""}, std::pair{"a.jpg", "9188"}}) {
    auto a = two_images();
    a.images[1].path = path;
    a.images[1].image_id = id;
    try {
      sam3::answer_json(a);
      ADD_FAILURE() << "path '" << path << "', id '" << id << "' was taken";
    } catch (const sam3::Error& e) {
      EXPECT_EQ(e.code(), sam3::ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("answer image 1 needs exactly one of path"), std::string::npos) << e.what();
    }
  }
}

TEST(AnswerDocument, AnEntryThatIsNotAnObjectIsRefused) {
  for (const char* entry : {"", "[]", "{\"text\":\"cat\"", "null"}) {
    auto a = two_images();
    a.images[0].prompts = {entry};
    EXPECT_THROW(sam3::answer_json(a), sam3::Error) << entry;
  }
}

TEST(AnswerDocument, NoImagesIsAnEmptyList) {
  sam3::Answer a;
  a.model = {"usls", "m"};
  EXPECT_EQ(json::parse(sam3::answer_json(a))["images"], json::array());
}

}  // namespace
