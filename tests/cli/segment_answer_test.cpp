// `sam3 segment --json` and POST /v1/segment answer the same image and prompts with one
// document (sam3/answer_json.h): the real binary and a real server on loopback, compared whole
// but for how the image is named (path / image_id) and the times measured.
#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "sam3/base64.h"
#include "sam3/export.h"
#include "support/files.h"
#include "support/run_command.h"
#include "support/serve.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using sam3::test::quote;

// The answer with the image's name taken out and each time set to 0 (their keys kept).
json comparable(json answer, const char* name_key) {
  for (auto& image : answer["images"]) {
    EXPECT_TRUE(image.contains(name_key)) << image.dump().substr(0, 200);
    image.erase(name_key);
  }
  for (auto& [key, value] : answer["timings_ms"].items()) {
    if (value.is_number())
      value = 0.0;
    else if (key == "image_cached")
      value = false;
  }
  return answer;
}

class SegmentAnswer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = sam3::test::start_serve("usls", {"--threads", "1"});
    ASSERT_GT(server_->port(), 0) << server_->first_line();
  }
  static void TearDownTestSuite() {
    EXPECT_EQ(server_->stop(SIGTERM), 0);
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    dir_ = sam3::test::fresh_test_dir("sam3_segment_answer");
    const auto scene = sam3::test::make_scene(false);
    png_ = sam3::encode_rgb_png(scene.image);
    image_ = dir_ / "scene.png";
    sam3::write_file_atomic(image_, png_);
  }

  json cli_answer(const std::string& options) {
    const auto r = sam3::test::run_command(std::string(SAM3_CLI_PATH) + " segment --threads 1 --models " +
                                           quote((sam3::test::test_models_dir() / "usls").string()) + " --image " + quote(image_.string()) +
                                           " --prompt red --prompt blue --json " + options);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }
  json server_answer(json request) {
    request["image"] = sam3::base64_encode(png_);
    request["prompts"] = {"red", "blue"};
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(120, 0);
    const auto r = c.Post("/v1/segment", request.dump(), "application/json");
    EXPECT_TRUE(r);
    if (!r) return nullptr;
    EXPECT_EQ(r->status, 200) << r->body.substr(0, 300);
    return json::parse(r->body);
  }

  static inline sam3::test::ServerProcess* server_ = nullptr;
  fs::path dir_, image_;
  std::string png_;
};

TEST_F(SegmentAnswer, TheCliAndTheServerGiveOneDocumentButForPathAndImageId) {
  const json cli = cli_answer("");
  const json server = server_answer(json::object());
  ASSERT_FALSE(cli["images"][0]["prompts"][0]["instances"].empty()) << "the red rectangles are found";
  EXPECT_EQ(cli["images"][0]["path"], image_.string());
  EXPECT_EQ(server["images"][0]["image_id"].get<std::string>().size(), 32u);
  EXPECT_EQ(comparable(cli, "path").dump(), comparable(server, "image_id").dump());
}

TEST_F(SegmentAnswer, EveryMaskFormatIsTheSameDocumentFromBoth) {
  for (const char* format : {"png", "polygon"}) {
    const json cli = cli_answer(std::string("--mask-format ") + format + " --polygon-tolerance 0");
    const json server = server_answer({{"mask_format", format}, {"polygon_tolerance", 0}});
    const auto& mask = cli["images"][0]["prompts"][0]["instances"][0]["mask"];
    EXPECT_TRUE(mask.contains(std::string(format) == "png" ? "png" : "polygons")) << mask.dump().substr(0, 200);
    EXPECT_EQ(comparable(cli, "path").dump(), comparable(server, "image_id").dump()) << format;
  }
}

TEST_F(SegmentAnswer, TheModelIsNamedByItsFolderNeverItsPath) {
  const json cli = cli_answer("");
  EXPECT_EQ(cli["model"], json::parse(R"({"layout":"usls","name":"usls"})"));
}

}  // namespace
