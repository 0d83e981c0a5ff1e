// The labeling tools' answers carry masks and outlines a value per pixel or point (CVAT's mask
// crops: a 0 or 1 per pixel); they are written as text, not built as a JSON tree of a value
// per element (about 26 bytes of memory per mask pixel for CVAT), and give the bytes the tree
// gave (parsing and dumping an answer again gives the same text).
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "sam3/base64.h"
#include "sam3/export.h"
#include "support/serve.h"
#include "support/server_process.h"
#include "support/test_images.h"

namespace {

using json = nlohmann::ordered_json;
using sam3::test::ServerProcess;

long status_kb(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

// How far the server's resident memory rose above where it was while `run` ran (its peak,
// reset first through /proc/PID/clear_refs).
template <typename F>
long peak_rise_mb(pid_t pid, F&& run) {
  std::ofstream("/proc/" + std::to_string(pid) + "/clear_refs") << "5";
  const long before = status_kb(pid, "VmRSS");
  run();
  return (status_kb(pid, "VmHWM") - before) / 1024;
}

httplib::Headers nuclio(const std::string& function) { return {{"x-nuclio-function-name", function}}; }

std::string red_frame_png(int width, int height) {
  sam3::Image image{width, height, std::vector<std::uint8_t>(static_cast<size_t>(width) * height * 3, 0)};
  for (size_t i = 0; i < image.rgb.size(); i += 3) image.rgb[i] = 255;
  return sam3::encode_rgb_png(image);
}

TEST(AnswerMemory, TheCvatDetectorsAnswerCostsItsTextNotAValuePerMaskPixel) {
  std::unique_ptr<ServerProcess> server(sam3::test::start_serve("usls", {"--cvat-label", "red", "--threads", "1"}));
  ASSERT_GT(server->port(), 0) << server->first_line();
  httplib::Client c("127.0.0.1", server->port());
  c.set_read_timeout(300, 0);
  const std::string image = sam3::base64_encode(red_frame_png(4000, 3000));  // every pixel red: 12 M mask pixels
  const std::string segment = json{{"image", image}, {"prompts", {"red"}}}.dump();
  ASSERT_EQ(c.Post("/v1/segment", segment, "application/json")->status, 200);  // encoded and cached
  // The same segmentation answered on /v1/segment (RLE masks), then as CVAT's detector.
  const long segment_mb = peak_rise_mb(server->pid(), [&] { ASSERT_EQ(c.Post("/v1/segment", segment, "application/json")->status, 200); });
  std::string body;
  const long cvat_mb = peak_rise_mb(server->pid(), [&] {
    const auto r = c.Post("/api/function_invocations", nuclio("sam3-detector"), json{{"image", image}}.dump(), "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body.substr(0, 200);
    body = r->body;
  });
  const json items = json::parse(body);
  ASSERT_FALSE(items.empty());
  std::int64_t values = 0;
  for (const auto& item : items) values += static_cast<std::int64_t>(item["mask"].size()) - 4;
  ASSERT_GT(values, 11'000'000) << "nearly every pixel of the red frame is in the crop of an instance";
  EXPECT_EQ(items.dump(), body) << "the bytes a JSON tree of the answer dumps";
  std::printf("/v1/segment rose %ld MB, CVAT's detector %ld MB, answer %.1f MB for %lld mask pixels\n", segment_mb, cvat_mb,
              body.size() / 1048576.0, static_cast<long long>(values));
  // As a tree, the answer alone was about 26 bytes a pixel (300 MB here); as text it is 2 bytes a
  // pixel, with room for the text growing and the outlines being traced.
  EXPECT_LT(cvat_mb - segment_mb, values * 12 / (1 << 20))
      << "CVAT's answer cost " << cvat_mb - segment_mb << " MB more than /v1/segment's for the same masks";
  EXPECT_EQ(server->stop(SIGTERM), 0);
}

TEST(AnswerMemory, AnswersWrittenAsTextAreTheBytesOfTheirTree) {
  std::unique_ptr<ServerProcess> server(sam3::test::start_serve(
      "usls", {"--cvat-label", "red", "--interactive-models", (sam3::test::test_models_dir() / "tracker").string(), "--threads", "1"}));
  ASSERT_GT(server->port(), 0) << server->first_line();
  httplib::Client c("127.0.0.1", server->port());
  const auto scene = sam3::test::make_scene(false);
  const std::string image = sam3::base64_encode(sam3::encode_rgb_png(scene.image));
  const auto same_text = [](const httplib::Result& r, const char* what) {
    ASSERT_TRUE(r) << what;
    ASSERT_EQ(r->status, 200) << what << ": " << r->body.substr(0, 200);
    EXPECT_EQ(json::parse(r->body).dump(), r->body) << what;
    EXPECT_GT(r->body.size(), 100u) << what;
  };
  same_text(c.Post("/api/function_invocations", nuclio("sam3-detector"), json{{"image", image}}.dump(), "application/json"),
            "CVAT's detector");
  const json click = {{"image", image}, {"pos_points", {{scene.red_big.x0 + 5, scene.red_big.y0 + 5}}}, {"neg_points", json::array()}};
  same_text(c.Post("/api/function_invocations", nuclio("sam3-interactor"), click.dump(), "application/json"), "CVAT's interactor");
  for (const double tolerance : {0.0, 1.0}) {
    const json segment = {{"image", image}, {"prompts", {"red"}}, {"mask_format", "polygon"}, {"polygon_tolerance", tolerance}};
    const auto r = c.Post("/v1/segment", segment.dump(), "application/json");
    same_text(r, "/v1/segment's polygons");
    if (r && r->status == 200) {
      const json answer = json::parse(r->body);
      EXPECT_GE(answer["images"][0]["prompts"][0]["instances"][0]["mask"]["polygons"][0].size(), 8u) << "a polygon, spliced";
    }
  }
  for (const double epsilon : {0.0, 0.001}) {
    const json predict = {{"model", "segment_anything_3"},
                          {"image", "data:image/png;base64," + image},
                          {"params", {{"text_prompt", "red"}, {"epsilon_factor", epsilon}}}};
    same_text(c.Post("/v1/predict", predict.dump(), "application/json"), "X-AnyLabeling's polygons");
  }
  EXPECT_EQ(server->stop(SIGTERM), 0);
}

}  // namespace
