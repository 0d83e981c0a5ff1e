// sam3 serve as CVAT's model: CVAT's lambda manager's requests replayed as its code sends them
// (python-requests, JSON, the x-nuclio-* headers), and the detector's masks decoded the way CVAT
// decodes them (datumaro's mask_to_rle over the flat crop, cvat-core's rle2Mask), compared
// with the masks `sam3 segment` gives on the same image.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "sam3/base64.h"
#include "sam3/export.h"
#include "sam3/mask_encodings.h"
#include "support/files.h"
#include "support/raw_http.h"
#include "support/run_command.h"
#include "support/serve.h"
#include "support/server_process.h"
#include "support/test_images.h"

namespace {

using nlohmann::json;
using sam3::test::ServerProcess;

// The headers of CVAT's LambdaGateway._http, and python-requests' own.
httplib::Headers cvat_headers(const std::string& function = "") {
  httplib::Headers h = {{"x-nuclio-project-name", "cvat"},        {"x-nuclio-function-namespace", "nuclio"},
                        {"x-nuclio-invoke-via", "domain-name"},   {"X-Nuclio-Invoke-Timeout", "120s"},
                        {"User-Agent", "python-requests/2.31.0"}, {"Accept", "*/*"}};
  if (!function.empty()) h.insert({{"x-nuclio-function-name", function}, {"x-nuclio-path", "/"}});
  return h;
}

std::unique_ptr<ServerProcess> serve(const std::vector<std::string>& options) {
  return std::unique_ptr<ServerProcess>(sam3::test::start_serve("usls", options));
}

// CVAT's path for a detector's mask: datumaro's mask_to_rle on the flat crop (runs at every
// value change, the first run of zeros), then cvat-core's rle2Mask into the crop's box.
sam3::Mask cvat_decode(const json& mask_field, int width, int height) {
  std::vector<int> flat = mask_field.get<std::vector<int>>();
  const int xbr = flat[flat.size() - 2], ybr = flat.back(), xtl = flat[flat.size() - 4], ytl = flat[flat.size() - 3];
  flat.resize(flat.size() - 4);
  std::vector<int> rle;
  int current = 0, run = 0;
  for (int v : flat) {
    const int bit = v ? 1 : 0;
    if (bit != current) rle.push_back(run), run = 0, current = bit;
    ++run;
  }
  rle.push_back(run);
  const int w = xbr - xtl + 1, h = ybr - ytl + 1;
  EXPECT_EQ(static_cast<long>(flat.size()), static_cast<long>(w) * h) << "the crop does not fill its box";
  std::vector<std::uint8_t> full(static_cast<size_t>(width) * height, 0);
  int pos = 0, value = 0;
  for (int r : rle) {
    for (int k = 0; k < r; ++k, ++pos) {
      if (value) full[static_cast<size_t>(ytl + pos / w) * width + xtl + pos % w] = 1;
    }
    value ^= 1;
  }
  return sam3::Mask::from_raster(width, height, full);
}

double iou(const sam3::Mask& a, const sam3::Mask& b) {
  long inter = 0, uni = 0;
  const auto ra = a.to_raster(), rb = b.to_raster();
  for (size_t i = 0; i < ra.size(); ++i) inter += ra[i] && rb[i], uni += ra[i] || rb[i];
  return uni ? static_cast<double>(inter) / uni : 1.0;
}

class Cvat : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = serve({"--cvat-label", "Red car=red", "--cvat-label", "Water=blue,sea", "--max-request-mb", "4"}).release();
    png_ = sam3::encode_rgb_png(sam3::test::make_scene(false).image);
  }
  static void TearDownTestSuite() { delete server_; }
  static httplib::Client client() {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(120, 0);
    return c;
  }
  static inline ServerProcess* server_ = nullptr;
  static inline std::string png_;
};

TEST_F(Cvat, TheListingIsWhatCvatsLambdaManagerReads) {
  auto c = client();
  auto r = c.Get("/api/functions", cvat_headers());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json all = json::parse(r->body);
  ASSERT_TRUE(all.is_object()) << "CVAT iterates the listing's values";
  ASSERT_TRUE(all.contains("sam3-detector"));
  const json& f = all["sam3-detector"];
  EXPECT_EQ(f["metadata"]["name"], "sam3-detector");
  EXPECT_EQ(f["metadata"]["annotations"]["type"], "detector");
  EXPECT_TRUE(f["spec"]["description"].is_string()) << "CVAT raises KeyError without spec.description";
  EXPECT_TRUE(f["status"].is_object());
  EXPECT_EQ(f["status"]["state"], "ready");
  const json spec = json::parse(f["metadata"]["annotations"]["spec"].get<std::string>());  // a JSON string
  ASSERT_EQ(spec.size(), 2u);
  EXPECT_EQ(spec[0]["name"], "Red car");
  EXPECT_EQ(spec[1]["name"], "Water");
  EXPECT_EQ(std::stoi(f["metadata"]["annotations"]["version"].get<std::string>()), 1);
  EXPECT_FALSE(all.contains("sam3-tracker")) << "the tracker needs SAM 3.1's video bundle, not this model";

  auto one = c.Get("/api/functions/sam3-detector", cvat_headers());
  ASSERT_TRUE(one);
  EXPECT_EQ(one->status, 200);
  EXPECT_EQ(json::parse(one->body), f);
  auto missing = c.Get("/api/functions/openvino-mask-rcnn", cvat_headers());
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404) << "CVAT answers its client 404 for a function that is not there";
}

TEST_F(Cvat, DetectorMasksDecodedAsCvatDoesEqualTheClis) {
  auto c = client();
  const json payload = {{"image", sam3::base64_encode(png_)}, {"threshold", 0.5}};
  auto r = c.Post("/api/function_invocations", cvat_headers("sam3-detector"), payload.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json items = json::parse(r->body);
  ASSERT_TRUE(items.is_array());

  const auto dir = sam3::test::fresh_test_dir("sam3_cvat");
  sam3::write_file_atomic(dir / "scene.png", png_);
  const auto cli = sam3::test::run_command(std::string(SAM3_CLI_PATH) + " segment --models " +
                                           sam3::test::quote((sam3::test::test_models_dir() / "usls").string()) + " --image " +
                                           sam3::test::quote((dir / "scene.png").string()) + " --prompt red --json");
  std::filesystem::remove_all(dir);
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  const json cli_instances = json::parse(cli.out)["images"][0]["prompts"][0]["instances"];
  ASSERT_FALSE(cli_instances.empty());

  std::vector<json> red;
  for (const auto& item : items) {
    EXPECT_EQ(item["type"], "mask");
    EXPECT_TRUE(item["confidence"].is_string()) << "as CVAT's own functions send it";
    if (item.contains("points")) EXPECT_GE(item["points"].size(), 6u) << "points must be a real polygon, never empty";
    if (item["label"] == "Red car")
      red.push_back(item);
    else
      EXPECT_EQ(item["label"], "Water");
  }
  ASSERT_EQ(red.size(), cli_instances.size()) << "the detector and the CLI found different numbers of red objects";
  for (size_t i = 0; i < red.size(); ++i) {
    const auto cvat_mask = cvat_decode(red[i]["mask"], 400, 240);
    const auto cli_mask = sam3::rle_decode(cli_instances[i]["mask"]["counts"], 240, 400);
    EXPECT_EQ(iou(cvat_mask, cli_mask), 1.0) << "instance " << i;
    EXPECT_NEAR(std::stod(red[i]["confidence"].get<std::string>()), cli_instances[i]["score"].get<double>(), 1e-4);
  }
}

TEST_F(Cvat, ErrorsAreTheStatusCodesCvatRelays) {
  auto c = client();
  const auto invoke = [&](const httplib::Headers& h, const std::string& body) {
    auto r = c.Post("/api/function_invocations", h, body, "application/json");
    return r ? r->status : 0;
  };
  const std::string good = json{{"image", sam3::base64_encode(png_)}}.dump();
  EXPECT_EQ(invoke(cvat_headers(), good), 400) << "no x-nuclio-function-name, as Nuclio's dashboard answers";
  EXPECT_EQ(invoke(cvat_headers("openvino-mask-rcnn"), good), 404);
  // The tracker on a server without SAM 3.1's video bundle is a function this server does not
  // have (it is not listed), as Nuclio answers one not deployed: 404 (it was 400), with the reason.
  const auto tracker = c.Post("/api/function_invocations", cvat_headers("sam3-tracker"),
                              json{{"image", sam3::base64_encode(png_)}, {"shapes", json::array()}}.dump(), "application/json");
  ASSERT_TRUE(tracker);
  EXPECT_EQ(tracker->status, 404) << tracker->body;
  EXPECT_NE(tracker->body.find("video bundle"), std::string::npos) << tracker->body;
  // The same for the interactor on a server without an interactive model (it answered 400).
  const auto interactor = c.Post("/api/function_invocations", cvat_headers("sam3-interactor"),
                                 json{{"image", sam3::base64_encode(png_)}, {"pos_points", {{4, 4}}}}.dump(), "application/json");
  ASSERT_TRUE(interactor);
  EXPECT_EQ(interactor->status, 404) << interactor->body;
  EXPECT_NE(interactor->body.find("--interactive-models"), std::string::npos) << interactor->body;
  EXPECT_EQ(invoke(cvat_headers("sam3-detector"), json{{"image", "bm90IGFuIGltYWdl"}}.dump()), 415) << "not an image";
  EXPECT_EQ(invoke(cvat_headers("sam3-detector"), json{{"image", 7}}.dump()), 400);
  EXPECT_EQ(invoke(cvat_headers("sam3-detector"), json{{"image", sam3::base64_encode(png_)}, {"threshold", 3}}.dump()), 400);
  // The threshold goes through sam3's one options codec: its message names the key and the value.
  const auto words = c.Post("/api/function_invocations", cvat_headers("sam3-detector"),
                            json{{"image", sam3::base64_encode(png_)}, {"threshold", "high"}}.dump(), "application/json");
  ASSERT_TRUE(words);
  EXPECT_EQ(words->status, 400);
  EXPECT_NE(words->body.find("threshold must be a number, got \\\"high\\\""), std::string::npos) << words->body;
  EXPECT_EQ(invoke(cvat_headers("sam3-detector"), "{"), 400);
  sam3::test::RawConnection raw(server_->port());  // announced larger than --max-request-mb (4)
  raw.send(
      "POST /api/function_invocations HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "x-nuclio-function-name: sam3-detector\r\nContent-Length: 8388608\r\n\r\n");
  EXPECT_EQ(sam3::test::status_of(raw.receive(std::chrono::seconds(5), "\r\n\r\n")), 413);
}

TEST(CvatAuth, WithAnApiKeyCvatSendsItAsTheHostsPassword) {
  auto server = serve({"--cvat-label", "Red car=red", "--api-key", "k3y"});
  httplib::Client c("127.0.0.1", server->port());
  auto refused = c.Get("/api/functions", cvat_headers());
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  EXPECT_NE(refused->body.find("CVAT_NUCLIO_HOST"), std::string::npos) << refused->body;
  c.set_basic_auth("cvat", "k3y");  // CVAT_NUCLIO_HOST=cvat:k3y@host: python-requests sends HTTP Basic
  auto ok = c.Get("/api/functions", cvat_headers());
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST(CvatInteractor, ClicksGiveTheMaskTheCliGivesForThem) {
  auto server = serve({"--interactive-models", (sam3::test::test_models_dir() / "tracker").string(), "--cvat-label", "Red car=red"});
  httplib::Client c("127.0.0.1", server->port());
  c.set_read_timeout(120, 0);
  auto listing = c.Get("/api/functions", cvat_headers());
  ASSERT_TRUE(listing);
  const json all = json::parse(listing->body);
  ASSERT_TRUE(all.contains("sam3-interactor")) << listing->body;
  EXPECT_EQ(all["sam3-interactor"]["metadata"]["annotations"]["type"], "interactor");
  EXPECT_EQ(std::stoi(all["sam3-interactor"]["metadata"]["annotations"]["min_pos_points"].get<std::string>()), 1);
  auto one = c.Get("/api/functions/sam3-interactor", cvat_headers());
  ASSERT_TRUE(one);
  EXPECT_EQ(one->status, 200);

  const std::string png = sam3::encode_rgb_png(sam3::test::make_scene(false).image);
  const json payload = {
      {"image", sam3::base64_encode(png)}, {"pos_points", {{100, 60}}}, {"neg_points", json::array()}, {"obj_bbox", nullptr}};
  auto r = c.Post("/api/function_invocations", cvat_headers("sam3-interactor"), payload.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body.substr(0, 300);
  const json answer = json::parse(r->body);
  const auto bounds = answer["bounds"].get<std::vector<int>>();  // left, top, right, bottom (inclusive)
  ASSERT_EQ(bounds.size(), 4u);
  std::vector<std::uint8_t> raster(400 * 240, 0);
  ASSERT_EQ(answer["mask"].size(), static_cast<size_t>(bounds[3] - bounds[1] + 1));
  for (int y = bounds[1]; y <= bounds[3]; ++y) {
    const json& row = answer["mask"][y - bounds[1]];
    ASSERT_EQ(row.size(), static_cast<size_t>(bounds[2] - bounds[0] + 1));
    for (int x = bounds[0]; x <= bounds[2]; ++x) raster[static_cast<size_t>(y) * 400 + x] = row[x - bounds[0]].get<int>() ? 1 : 0;
  }
  const sam3::Mask ours = sam3::Mask::from_raster(400, 240, raster);
  const auto dir = sam3::test::fresh_test_dir("sam3_cvat_click");
  sam3::write_file_atomic(dir / "scene.png", png);
  const auto cli = sam3::test::run_command(std::string(SAM3_CLI_PATH) + " segment --models " +
                                           sam3::test::quote((sam3::test::test_models_dir() / "tracker").string()) + " --image " +
                                           sam3::test::quote((dir / "scene.png").string()) + " --point 100,60 --json");
  std::filesystem::remove_all(dir);
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  const json inst = json::parse(cli.out)["images"][0]["prompts"][0]["instances"][0];
  EXPECT_EQ(iou(ours, sam3::rle_decode(inst["mask"]["counts"], 240, 400)), 1.0) << "the click's mask differs from the CLI's";

  const json outside = {{"image", sam3::base64_encode(png)}, {"pos_points", {{1000, 60}}}};
  auto bad = c.Post("/api/function_invocations", cvat_headers("sam3-interactor"), outside.dump(), "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400) << "a click outside the image";
}

TEST(CvatLabels, BadLabelsAreRefusedAtStartNamingThem) {
  for (const std::string& bad : {std::string("=red"), std::string("Car=")}) {
    const auto r = sam3::test::run_command(std::string(SAM3_CLI_PATH) + " serve --models " +
                                           sam3::test::quote((sam3::test::test_models_dir() / "usls").string()) +
                                           " --port 0 --cvat-label " + sam3::test::quote(bad));
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
  }
}

}  // namespace
