// `sam3 label --everything` on the generated interactive model, as a user runs it: every object
// of every image, category "object", in COCO, YOLO and masks; resumed, redone when the grid
// changes, and refused with the wrong model or beside prompts.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "sam3/export.h"
#include "sam3/image.h"
#include "sam3/mask_encodings.h"
#include "support/files.h"
#include "support/run_command.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using sam3::test::quote;
using sam3::test::read_file;
using sam3::test::run_command;

class LabelEverything : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = sam3::test::fresh_test_dir("sam3_label_everything");
    fs::create_directories(root_ / "images");
    sam3::write_file_atomic(root_ / "images" / "three.png", sam3::encode_rgb_png(scene_.image));
    sam3::Image one = scene_.image;  // only the red square
    for (const auto* r : {&scene_.green, &scene_.blue}) sam3::test::fill(one, *r, 0, 0, 0);
    sam3::write_file_atomic(root_ / "images" / "one.png", sam3::encode_rgb_png(one));
  }
  void TearDown() override { fs::remove_all(root_); }
  // 16 x 16 clicks land in each 60-pixel square; --min-area drops the generated decoder's
  // 1-pixel slivers at the squares' edges (see tests/model/interactive_test.cpp).
  sam3::test::CommandResult label(const std::string& args, const std::string& model = "tracker") {
    return run_command(std::string(SAM3_CLI_PATH) + " label " + quote((root_ / "images").string()) + " --models " +
                       quote((sam3::test::test_models_dir() / model).string()) + " --threads 1 --out " + quote((root_ / "out").string()) +
                       " " + args);
  }
  fs::path root_;
  const sam3::test::EverythingScene scene_ = sam3::test::make_everything_scene();
};

TEST_F(LabelEverything, EveryObjectOfEveryImageOnceInEachFormat) {
  const auto r = label("--everything --points-per-side 16 --min-area 200 --format coco,yolo,masks");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 images: 2 labeled"), std::string::npos) << r.out;
  const auto coco = json::parse(read_file(root_ / "out" / "coco.json"));
  ASSERT_EQ(coco["categories"].size(), 1u);
  EXPECT_EQ(coco["categories"][0]["name"], "object");
  int id_three = 0;
  for (const auto& im : coco["images"]) id_three = im["file_name"] == "three.png" ? im["id"].get<int>() : id_three;
  int matched = 0, in_three = 0, in_one = 0;
  for (const auto& a : coco["annotations"]) {
    EXPECT_EQ(a["category_id"], 1);
    EXPECT_NEAR(a["score"].get<double>(), 0.9, 1e-4) << "the predicted IoU";
    const auto& seg = a["segmentation"];
    const sam3::Mask m = sam3::rle_decode(seg["counts"], seg["size"][0], seg["size"][1]);
    (a["image_id"] == id_three ? in_three : in_one)++;
    for (const auto& rect : {scene_.red, scene_.green, scene_.blue}) matched += sam3::test::iou_with_rect(m, rect) > 0.9;
  }
  EXPECT_EQ(in_three, 3) << "each square once";
  EXPECT_EQ(in_one, 1);
  EXPECT_EQ(matched, 4);

  std::istringstream yolo(read_file(root_ / "out" / "yolo" / "labels" / "three.txt"));
  int lines = 0;
  for (std::string line; std::getline(yolo, line); ++lines) EXPECT_EQ(line.rfind("0 ", 0), 0u) << line;
  EXPECT_EQ(lines, 3);
  EXPECT_NE(read_file(root_ / "out" / "yolo" / "data.yaml").find("0: 'object'"), std::string::npos);
  const auto classes = sam3::load_image(root_ / "out" / "masks" / "three_classes.png");
  EXPECT_EQ(classes.rgb[(static_cast<size_t>(90) * 512 + 90) * 3], 1) << "inside the red square: object";
  EXPECT_EQ(classes.rgb[(static_cast<size_t>(10) * 512 + 10) * 3], 0) << "the background";

  // The same command again skips both images; another grid redoes them.
  auto again = label("--everything --points-per-side 16 --min-area 200 --format coco,yolo,masks");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("0 labeled, 2 already done"), std::string::npos) << again.out;
  again = label("--everything --points-per-side 8 --min-area 200 --format coco");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("2 labeled"), std::string::npos) << again.out;
  // Crop layers change what is found: the images are redone, each square still once.
  again = label("--everything --points-per-side 8 --min-area 200 --crop-layers 1 --format coco");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("2 labeled"), std::string::npos) << again.out;
  int squares = 0;
  const auto cropped = json::parse(read_file(root_ / "out" / "coco.json"));
  for (const auto& a : cropped["annotations"]) {
    const auto& seg = a["segmentation"];
    const sam3::Mask m = sam3::rle_decode(seg["counts"], seg["size"][0], seg["size"][1]);
    for (const auto& rect : {scene_.red, scene_.green, scene_.blue}) squares += sam3::test::iou_with_rect(m, rect) > 0.9;
  }
  EXPECT_EQ(squares, 4) << "three in three.png, one in one.png";
}

TEST_F(LabelEverything, TheWrongModelOrPromptsBesideAreRefusedAtOnce) {
  auto r = label("--everything", "usls");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("needs SAM3's interactive model"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "out" / "items")) << "refused before any image";
  r = label("-p red");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("label every object: sam3 label --everything"), std::string::npos) << r.err;
  r = label("--everything -p red");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("takes no --prompt"), std::string::npos) << r.err;
  r = label("--everything --points-per-side 0");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("points-per-side"), std::string::npos) << r.err;
}

}  // namespace
