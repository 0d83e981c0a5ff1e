// `sam3 segment --point/--box/--multimask/--everything` on the generated interactive model, as
// a user runs it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sam3/export.h"
#include "sam3/mask_encodings.h"
#include "support/files.h"
#include "support/run_command.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;
using sam3::test::quote;
using sam3::test::run_command;

class InteractiveCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = sam3::test::fresh_test_dir("sam3_interactive_cli");
    image_ = dir_ / "scene.png";
    sam3::write_file_atomic(image_, sam3::encode_rgb_png(scene_.image));
  }
  void TearDown() override { fs::remove_all(dir_); }
  sam3::test::CommandResult segment(const std::string& args, const std::string& model = "tracker") {
    return run_command(std::string(SAM3_CLI_PATH) + " segment --threads 1 --models " +
                       quote((sam3::test::test_models_dir() / model).string()) + " --image " + quote(image_.string()) + " " + args);
  }
  fs::path dir_, image_;
  const sam3::test::ClickScene scene_ = sam3::test::make_click_scene();
};

TEST_F(InteractiveCli, AClickGivesTheObjectWithItsPromptEchoed) {
  const auto r = segment("--point 160,160 --point 105,105,neg --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"]["layout"], "sam3-tracker");
  const auto& p = j["images"][0]["prompts"];
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0]["points"], nlohmann::json::parse(R"([[160, 160, "pos"], [105, 105, "neg"]])"));
  EXPECT_TRUE(p[0]["box"].is_null());
  ASSERT_EQ(p[0]["instances"].size(), 1u);
  const auto mask = sam3::rle_decode(p[0]["instances"][0]["mask"]["counts"], 480, 640);
  EXPECT_TRUE(mask.at(200, 200));
  EXPECT_FALSE(mask.at(110, 110)) << "cut around the negative click";
  EXPECT_FALSE(mask.at(460, 160)) << "the other square";
}

TEST_F(InteractiveCli, BoxesAloneAreOneObjectEachAndFilesAreWritten) {
  const auto r = segment("--box 380,80,540,240 --box 90,90,230,230 --multimask --out " + quote((dir_ / "out").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* object : {"object-1", "object-2"}) {
    for (const char* file : {"instance_000.png", "instance_001.png", "instance_002.png", "overlay.jpg", "result.json"}) {
      EXPECT_TRUE(fs::exists(dir_ / "out" / "scene" / object / file)) << object << "/" << file;
    }
  }
  const auto j = nlohmann::json::parse(sam3::test::read_file(dir_ / "out" / "result.json"));
  EXPECT_EQ(j["images"][0]["prompts"][1]["box"], nlohmann::json::parse("[90, 90, 230, 230]"));
}

TEST_F(InteractiveCli, EverythingFindsTheObjects) {
  const auto r = segment("--everything --points-per-side 16 --min-area 200 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& p = j["images"][0]["prompts"][0];
  EXPECT_TRUE(p["everything"].get<bool>());
  // Each red square is found by clicks inside it; the blue bar is wider than the model's 250
  // pixels around a click, so no click gives all of it stably.
  int squares = 0;
  for (const auto& inst : p["instances"]) {
    const auto mask = sam3::rle_decode(inst["mask"]["counts"], 480, 640);
    squares += sam3::test::iou_with_rect(mask, scene_.red_left) > 0.9 || sam3::test::iou_with_rect(mask, scene_.red_right) > 0.9;
  }
  EXPECT_EQ(squares, 2) << p.dump().substr(0, 400);
}

TEST_F(InteractiveCli, EverythingWithCropLayersKeepsEachSquareOnce) {
  const auto r = segment("--everything --points-per-side 16 --min-area 200 --crop-layers 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& p = j["images"][0]["prompts"][0];
  int left = 0, right = 0;
  for (const auto& inst : p["instances"]) {
    const auto mask = sam3::rle_decode(inst["mask"]["counts"], 480, 640);
    left += sam3::test::iou_with_rect(mask, scene_.red_left) > 0.9;
    right += sam3::test::iou_with_rect(mask, scene_.red_right) > 0.9;
  }
  EXPECT_EQ(left, 1) << "seen whole by the image and by crops, kept once";
  EXPECT_EQ(right, 1);
  const auto bad = segment("--everything --crop-layers 9 --json");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("crop-layers"), std::string::npos) << bad.err;
}

// Options that would be dropped unsaid: --everything prompts the whole image (a click or box
// beside it was left out of the answer), the grid's options need it, --multimask needs clicks.
TEST_F(InteractiveCli, OptionsThatWouldBeIgnoredAreRefused) {
  const std::pair<const char*, const char*> usage[] = {
      {"--everything --point 10,10", "--point excludes --everything"},
      {"--everything --box 20,20,60,60", "--box excludes --everything"},
      {"--everything --multimask", "excludes --everything"},
      {"--point 160,160 --points-per-side 4", "--points-per-side requires --everything"},
      {"--point 160,160 --crop-layers 1", "--crop-layers requires --everything"},
  };
  for (const auto& [args, message] : usage) {
    const auto r = segment(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
  }
  const auto r = segment("--prompt red --multimask", "usls");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("--multimask needs SAM3's interactive model"), std::string::npos) << r.err;
}

TEST_F(InteractiveCli, BadClicksExit3WithTheReason) {
  auto r = segment("--point 700,20");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("object 1, point 1 (700, 20) is outside the 640x480 image"), std::string::npos) << r.err;
  r = segment("--point 10,nan");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("object 1, point 1 (10, nan) is not a pair of numbers"), std::string::npos) << r.err;
  r = segment("--point 10,20,maybe");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("pos or neg"), std::string::npos) << r.err;
  r = segment("--point 10,20,neg");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("neither a positive point nor a box"), std::string::npos) << r.err;
  r = segment("--point 10,20 --box 1,1,9,9 --box 2,2,8,8");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("at most one --box"), std::string::npos) << r.err;
  r = segment("--prompt red");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("not --prompt text"), std::string::npos) << r.err;
  r = segment("--point 10,20", "usls");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("--point needs SAM3's interactive model"), std::string::npos) << r.err;
  std::string thousands;
  for (int i = 0; i < 2000; ++i) thousands += " --point 160,160";
  r = segment(thousands);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("object 1 has 2000 points; at most 64"), std::string::npos) << r.err.substr(0, 300);
  r = segment("--box 10,nan,50,50");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("--box '10,nan,50,50': 'nan' is not a finite number"), std::string::npos) << r.err;
}

}  // namespace
