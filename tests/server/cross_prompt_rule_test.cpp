// The family's rule across the prompts of one image is the library's (ImageSegmenter::segment_all),
// so every front gives the same instances for one image and one set of prompts. EfficientSAM3
// drops an instance that repeats a better one of another prompt: on the generated model "red"
// and "red car" find the same two squares (its text encoder reads the first word), so the second
// prompt keeps nothing. The CLI, /v1/segment, Label Studio's /predict, CVAT's detector and
// X-AnyLabeling's /v1/predict must agree; the labeling-tool routes used to skip the rule and
// answered the squares twice. (The map labeler: tests/geo; the browser module: tests/web.)
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sam3/base64.h"
#include "sam3/export.h"
#include "support/files.h"
#include "support/run_command.h"
#include "support/serve.h"
#include "support/server_process.h"
#include "support/test_images.h"

namespace {

using nlohmann::json;

const char* kLabelConfig = R"(<View>
  <Image name="image" value="$image"/>
  <RectangleLabels name="box" toName="image">
    <Label value="Red" predicted_values="red"/><Label value="Red car" predicted_values="red car"/>
  </RectangleLabels>
</View>)";

// One found instance as every front can say it: its box in pixels and its score.
struct Found {
  double x0, y0, x1, y1, score;
};

void expect_same(const std::vector<std::vector<Found>>& got, const std::vector<std::vector<Found>>& want, const std::string& front,
                 double box_tolerance) {
  ASSERT_EQ(got.size(), want.size()) << front;
  for (size_t p = 0; p < want.size(); ++p) {
    ASSERT_EQ(got[p].size(), want[p].size()) << front << ": prompt " << p << " found another number of instances than the CLI";
    for (size_t i = 0; i < want[p].size(); ++i) {
      EXPECT_NEAR(got[p][i].x0, want[p][i].x0, box_tolerance) << front << " prompt " << p << " instance " << i;
      EXPECT_NEAR(got[p][i].y0, want[p][i].y0, box_tolerance) << front << " prompt " << p << " instance " << i;
      EXPECT_NEAR(got[p][i].x1, want[p][i].x1, box_tolerance) << front << " prompt " << p << " instance " << i;
      EXPECT_NEAR(got[p][i].y1, want[p][i].y1, box_tolerance) << front << " prompt " << p << " instance " << i;
      EXPECT_NEAR(got[p][i].score, want[p][i].score, 1e-4) << front << " prompt " << p << " instance " << i;
    }
  }
}

std::vector<std::vector<Found>> from_prompts(const json& prompts) {
  std::vector<std::vector<Found>> out;
  for (const auto& p : prompts) {
    out.emplace_back();
    for (const auto& inst : p["instances"]) {
      const auto& b = inst["box"];
      out.back().push_back({b[0].get<double>(), b[1].get<double>(), b[2].get<double>(), b[3].get<double>(), inst["score"].get<double>()});
    }
  }
  return out;
}

// Best first within a label, as the CLI lists them.
void sort_by_score(std::vector<std::vector<Found>>& all) {
  for (auto& list : all) std::stable_sort(list.begin(), list.end(), [](const Found& a, const Found& b) { return a.score > b.score; });
}

class CrossPromptRule : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    png_ = new std::string(sam3::encode_rgb_png(sam3::test::make_scene(false).image));
    server_ = sam3::test::start_serve("efficientsam3", {"--cvat-label", "Red=red", "--cvat-label", "Red car=red car"});
    ASSERT_GT(server_->port(), 0) << server_->first_line();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete png_;
  }
  static httplib::Result post(const std::string& path, const json& body, const httplib::Headers& headers = {}) {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(120, 0);
    return c.Post(path, headers, body.dump(), "application/json");
  }
  // `sam3 segment --prompt red --prompt "red car" --json` on the scene.
  static std::vector<std::vector<Found>> cli() {
    const auto dir = sam3::test::fresh_test_dir("sam3_cross_prompt");
    sam3::write_file_atomic(dir / "scene.png", *png_);
    const auto run = sam3::test::run_command(std::string(SAM3_CLI_PATH) + " segment --models " +
                                             sam3::test::quote((sam3::test::test_models_dir() / "efficientsam3").string()) + " --image " +
                                             sam3::test::quote((dir / "scene.png").string()) + " --prompt red --prompt 'red car' --json");
    std::filesystem::remove_all(dir);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return from_prompts(json::parse(run.out)["images"][0]["prompts"]);
  }
  static inline sam3::test::ServerProcess* server_ = nullptr;
  static inline std::string* png_ = nullptr;
};

TEST_F(CrossPromptRule, TheCliDropsWhatTheSecondPromptRepeats) {
  const auto want = cli();
  ASSERT_EQ(want.size(), 2u);
  EXPECT_EQ(want[0].size(), 2u) << "the scene's two red squares";
  EXPECT_EQ(want[1].size(), 0u) << "\"red car\" finds the same squares: EfficientSAM3's rule drops them";
}

TEST_F(CrossPromptRule, SegmentRouteEqualsTheCli) {
  const json body = {{"image", sam3::base64_encode(*png_)}, {"prompts", json::array({{{"text", "red"}}, {{"text", "red car"}}})}};
  auto r = post("/v1/segment", body);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  expect_same(from_prompts(json::parse(r->body)["images"][0]["prompts"]), cli(), "/v1/segment", 1e-3);
}

TEST_F(CrossPromptRule, LabelStudioPredictEqualsTheCli) {
  const json task = {{"id", 1}, {"data", {{"image", "data:image/png;base64," + sam3::base64_encode(*png_)}}}};
  auto r = post("/predict", {{"tasks", json::array({task})}, {"label_config", kLabelConfig}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  std::vector<std::vector<Found>> got(2);
  const json prediction = json::parse(r->body)["results"][0];
  for (const auto& region : prediction["result"]) {
    const auto& v = region["value"];
    const std::string label = v["rectanglelabels"][0];
    const double w = region["original_width"], h = region["original_height"];
    const double x = v["x"].get<double>() * w / 100, y = v["y"].get<double>() * h / 100;
    got[label == "Red" ? 0 : 1].push_back(
        {x, y, x + v["width"].get<double>() * w / 100, y + v["height"].get<double>() * h / 100, region["score"].get<double>()});
  }
  sort_by_score(got);
  expect_same(got, cli(), "Label Studio's /predict", 0.01);
}

TEST_F(CrossPromptRule, CvatDetectorEqualsTheCli) {
  const httplib::Headers headers = {{"x-nuclio-function-name", "sam3-detector"}};
  auto r = post("/api/function_invocations", {{"image", sam3::base64_encode(*png_)}, {"threshold", 0.5}}, headers);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const auto want = cli();
  std::vector<std::vector<Found>> got(2);
  for (const auto& item : json::parse(r->body)) {
    // The detector says a mask by its crop's corners (the last four numbers): the mask's extent
    // in whole pixels, within two pixels of the model's box.
    const auto flat = item["mask"].get<std::vector<int>>();
    const double x0 = flat[flat.size() - 4], y0 = flat[flat.size() - 3], x1 = flat[flat.size() - 2] + 1, y1 = flat.back() + 1;
    got[item["label"] == "Red" ? 0 : 1].push_back({x0, y0, x1, y1, std::stod(item["confidence"].get<std::string>())});
  }
  sort_by_score(got);
  expect_same(got, want, "CVAT's detector", 2.0);
}

TEST_F(CrossPromptRule, XAnyLabelingPredictEqualsTheCli) {
  auto r = post("/v1/predict", {{"model", "segment_anything_3"},
                                {"image", "data:image/png;base64," + sam3::base64_encode(*png_)},
                                {"params", {{"text_prompt", "red, red car"}}}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json answer = json::parse(r->body);
  ASSERT_TRUE(answer["success"].get<bool>()) << r->body;
  std::vector<std::vector<Found>> got(2);
  for (const auto& shape : answer["data"]["shapes"]) {
    if (shape["shape_type"] != "rectangle") continue;
    const auto& p = shape["points"];
    got[shape["label"] == "red" ? 0 : 1].push_back(
        {p[0][0].get<double>(), p[0][1].get<double>(), p[2][0].get<double>(), p[2][1].get<double>(), shape["score"].get<double>()});
  }
  expect_same(got, cli(), "X-AnyLabeling's /v1/predict", 1e-3);
}

}  // namespace
