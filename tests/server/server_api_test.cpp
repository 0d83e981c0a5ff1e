// The real `sam3 serve` binary on a free port with the generated models.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "sam3/base64.h"
#include "sam3/export.h"
#include "support/files.h"
#include "support/run_command.h"
#include "support/serve.h"
#include "support/server_process.h"
#include "support/test_images.h"

namespace {

using nlohmann::json;
using sam3::test::ServerProcess;

const std::string kSam3 = SAM3_CLI_PATH;

std::string models(const std::string& layout = "usls") { return (sam3::test::test_models_dir() / layout).string(); }

std::string scene_png(int scale = 1) { return sam3::encode_rgb_png(sam3::test::upscale(sam3::test::make_scene(false).image, scale)); }

void wait_ready(int port) {
  if (!sam3::test::wait_healthy(port)) FAIL() << "server never became ready";
}

json body_of(const httplib::Result& r) { return r ? json::parse(r->body, nullptr, false) : json(); }

void expect_error(const httplib::Result& r, int status, const std::string& code) {
  ASSERT_TRUE(r) << "no response";
  EXPECT_EQ(r->status, status) << r->body;
  const auto j = body_of(r);
  ASSERT_TRUE(j.contains("error")) << r->body;
  EXPECT_EQ(j["error"]["code"], code) << r->body;
  EXPECT_FALSE(j["error"]["message"].get<std::string>().empty());
}

class ServerApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess({kSam3, "serve", "--models", models(), "--port", "0", "--max-request-mb", "2", "--max-pixels", "1000000"});
    ASSERT_GT(server_->port(), 0) << server_->first_line();
    wait_ready(server_->port());
  }
  static void TearDownTestSuite() {
    EXPECT_EQ(server_->stop(SIGTERM), 0) << "graceful shutdown exits 0";
    delete server_;
  }
  httplib::Client client() {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(60, 0);
    return c;
  }
  std::string upload(const std::string& png) {
    auto c = client();
    auto r = c.Post("/v1/images", png, "image/png");
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no response");
    return body_of(r)["image_id"];
  }
  static ServerProcess* server_;
};
ServerProcess* ServerApi::server_ = nullptr;

TEST_F(ServerApi, UploadOnceThenPromptFromTheCache) {
  auto c = client();
  const std::string png = scene_png();
  auto first = c.Post("/v1/images", png, "image/png");
  ASSERT_EQ(first->status, 200) << first->body;
  const auto id = body_of(first)["image_id"].get<std::string>();
  EXPECT_EQ(body_of(first)["width"], 400);
  httplib::MultipartFormDataItems form = {{"image", png, "scene.png", "image/png"}};
  auto again = c.Post("/v1/images", form);
  ASSERT_EQ(again->status, 200) << again->body;
  EXPECT_EQ(body_of(again)["image_id"], id) << "the id is the content hash";
  EXPECT_EQ(body_of(again)["cached"], true);

  const json request = {{"image_id", id}, {"prompts", {"red", {{"text", "blue"}}}}};
  auto r = c.Post("/v1/segment", request.dump(), "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  const auto j = body_of(r);
  EXPECT_EQ(j["model"]["layout"], "usls");
  const auto& image = j["images"][0];
  EXPECT_EQ(image["image_id"], id);
  ASSERT_EQ(image["prompts"].size(), 2u);
  EXPECT_EQ(image["prompts"][0]["instances"].size(), 2u);
  EXPECT_EQ(image["prompts"][1]["instances"].size(), 1u);
  const auto mask = sam3::rle_decode(image["prompts"][0]["instances"][0]["mask"]["counts"], 240, 400);
  EXPECT_GT(sam3::test::iou_with_rect(mask, sam3::test::make_scene(false).red_big), 0.85);
  EXPECT_EQ(j["timings_ms"]["image_cached"], true);
  EXPECT_EQ(j["timings_ms"]["encode_image"], 0.0);

  const auto info = body_of(c.Get("/v1/info"));
  EXPECT_GE(info["cache"]["hits"].get<int>(), 2);
  EXPECT_EQ(info["model"]["image_encodes"], 1) << "one encode for one image, however many prompts";
  EXPECT_EQ(info["versions"]["onnxruntime"].get<std::string>().substr(0, 2), "1.");
}

TEST_F(ServerApi, InlineImageAndMaskFormats) {
  auto c = client();
  json request = {{"image", sam3::base64_encode(scene_png())}, {"prompts", {"blue"}}, {"mask_format", "png"}};
  auto r = c.Post("/v1/segment", request.dump(), "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_FALSE(body_of(r)["images"][0]["prompts"][0]["instances"][0]["mask"]["png"].get<std::string>().empty());
  request["mask_format"] = "polygon";
  r = c.Post("/v1/segment", request.dump(), "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  const auto j = body_of(r);
  const auto& polygons = j["images"][0]["prompts"][0]["instances"][0]["mask"]["polygons"];
  ASSERT_EQ(polygons.size(), 1u) << r->body.substr(0, 600);
  EXPECT_GE(polygons[0].size(), 8u) << "a rectangle has at least 4 corners";
  EXPECT_EQ(j["timings_ms"]["image_cached"], true) << "the inline image was hashed and cached";
}

TEST_F(ServerApi, EveryErrorHasItsStatusAndShape) {
  auto c = client();
  const auto id = upload(scene_png());
  expect_error(c.Post("/v1/segment", "{not json", "application/json"), 400, "invalid_json");
  expect_error(c.Post("/v1/segment", json{{"image_id", id}}.dump(), "application/json"), 400, "invalid_request");
  expect_error(c.Post("/v1/segment", json{{"image_id", id}, {"prompts", {""}}}.dump(), "application/json"), 400, "invalid_request");
  expect_error(
      c.Post("/v1/segment", json{{"image_id", id}, {"prompts", {{{"text", "red"}, {"boxes", {{1, 2, 3}}}}}}}.dump(), "application/json"),
      400, "invalid_request");
  expect_error(c.Post("/v1/segment", json{{"image_id", id}, {"prompts", {{{"text", "red"}, {"boxes", {{50, 50, 10, 10}}}}}}}.dump(),
                      "application/json"),
               400, "invalid_argument");
  expect_error(c.Post("/v1/segment", json{{"image_id", id}, {"prompts", {"red"}}, {"threshold", 7}}.dump(), "application/json"), 400,
               "invalid_request");
  // The options' bounds are the library's one codec's (the browser module reads the same): a
  // fraction of a pixel or a count past an int is refused, naming the key.
  for (const auto& [key, value] : std::vector<std::pair<std::string, json>>{{"min_area", 10.5}, {"max_instances", 4294967297LL}}) {
    const auto r = c.Post("/v1/segment", json{{"image_id", id}, {"prompts", {"red"}}, {key, value}}.dump(), "application/json");
    expect_error(r, 400, "invalid_request");
    if (r) EXPECT_NE(body_of(r)["error"]["message"].get<std::string>().find(key), std::string::npos) << r->body;
  }
  expect_error(c.Post("/v1/segment", json{{"image_id", "0123"}, {"prompts", {"red"}}}.dump(), "application/json"), 404, "unknown_image");
  expect_error(c.Post("/v1/segment", "prompts=red", "text/plain"), 415, "unsupported_media_type");
  expect_error(c.Post("/v1/images", "hello", "text/plain"), 415, "unsupported_media_type");
  expect_error(c.Post("/v1/images", "GIF89a....", "image/gif"), 415, "image_unsupported");
  expect_error(c.Post("/v1/images", std::string("\x89PNG\r\n\x1a\n garbage", 17), "image/png"), 400, "image_corrupt");
  expect_error(c.Post("/v1/images", "", "image/png"), 400, "invalid_request");
  expect_error(c.Post("/v1/images", scene_png(4), "image/png"), 413, "image_too_large");  // 1600x960 > 1 M pixels
  expect_error(c.Post("/v1/images", std::string(3 * 1024 * 1024, 'x'), "image/png"), 413, "payload_too_large");
  httplib::MultipartFormDataItems no_file = {{"note", "hello", "", ""}};
  expect_error(c.Post("/v1/images", no_file), 400, "invalid_request");
  expect_error(c.Get("/v2/nothing"), 404, "not_found");
}

// Both an image_id and an inline image: which one was meant cannot be told (the trial's request
// was answered for the id, the upload silently ignored).
TEST_F(ServerApi, AnImageIdAndAnInlineImageTogetherAreRefused) {
  auto c = client();
  const auto id = upload(scene_png());
  const auto r = c.Post("/v1/segment", json{{"image_id", id}, {"image", sam3::base64_encode(scene_png(2))}, {"prompts", {"red"}}}.dump(),
                        "application/json");
  expect_error(r, 400, "invalid_request");
  if (r) EXPECT_NE(body_of(r)["error"]["message"].get<std::string>().find("not both"), std::string::npos) << r->body;
}

// A misspelled key is refused, naming it, where it was and the keys that are known: "treshold"
// was answered with the default threshold, "bozes" with no boxes, "multimask" inside a prompt
// ignored (a new user's trial).
TEST_F(ServerApi, UnknownKeysAreRefusedNamingTheKeyAndWhereItWas) {
  auto c = client();
  const auto id = upload(scene_png());
  const auto message = [&](const json& request) {
    const auto r = c.Post("/v1/segment", request.dump(), "application/json");
    expect_error(r, 400, "invalid_request");
    return r ? body_of(r)["error"]["message"].get<std::string>() : std::string();
  };
  auto m = message({{"image_id", id}, {"prompts", {"red"}}, {"treshold", 0.9}});
  EXPECT_NE(m.find("the body has an unknown key \"treshold\""), std::string::npos) << m;
  EXPECT_NE(m.find("\"threshold\""), std::string::npos) << "the known keys are listed: " << m;
  m = message({{"image_id", id}, {"prompts", {{{"text", "car"}, {"bozes", {{1, 1, 5, 5}}}}}}});
  EXPECT_NE(m.find("prompts[0] has an unknown key \"bozes\""), std::string::npos) << m;
  EXPECT_NE(m.find("\"boxes\""), std::string::npos) << m;
  m = message({{"image_id", id}, {"prompts", {"red", {{"points", {{10, 20}}}, {"multimask", true}}}}});
  EXPECT_NE(m.find("prompts[1] has an unknown key \"multimask\""), std::string::npos) << m;
  EXPECT_NE(m.find("beside \"prompts\""), std::string::npos) << "says where multimask goes: " << m;
  // The known keys still work.
  const auto r = c.Post("/v1/segment",
                        json{{"image_id", id},
                             {"prompts", {{{"text", "red"}, {"boxes", json::array()}}}},
                             {"threshold", 0.5},
                             {"nms", 0.5},
                             {"mask_format", "rle"},
                             {"polygon_tolerance", 1},
                             {"multimask", false}}
                            .dump(),
                        "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

TEST_F(ServerApi, ConcurrentRequestsAllSucceedWithTheSameAnswer) {
  const auto id = upload(scene_png());
  std::atomic<int> ok{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      auto c = client();
      for (int i = 0; i < 5; ++i) {
        const char* text = (t + i) % 2 ? "red" : "blue";
        auto r = c.Post("/v1/segment", json{{"image_id", id}, {"prompts", {text}}}.dump(), "application/json");
        if (!r || r->status != 200) continue;
        const size_t n = body_of(r)["images"][0]["prompts"][0]["instances"].size();
        (n == ((t + i) % 2 ? 2u : 1u) ? ok : wrong)++;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 30);
  EXPECT_EQ(wrong, 0);
}

TEST(ServerLifecycle, FullQueueAnswers503) {
  ServerProcess server({kSam3, "serve", "--models", models(), "--port", "0", "--workers", "1", "--queue", "1"});
  httplib::Client probe("127.0.0.1", server.port());
  wait_ready(server.port());
  // Each request runs 64 prompts on a 1600x960 image: long enough for the others to pile up.
  json request = {{"image", sam3::base64_encode(scene_png(4))}, {"prompts", json::array()}};
  for (int i = 0; i < 64; ++i) request["prompts"].push_back(i % 2 ? "red" : "blue");
  std::atomic<int> ok{0}, busy{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      httplib::Client c("127.0.0.1", server.port());
      c.set_read_timeout(120, 0);
      auto r = c.Post("/v1/segment", request.dump(), "application/json");
      if (r && r->status == 200)
        ++ok;
      else if (r && r->status == 503 && body_of(r)["error"]["code"] == "busy" && r->has_header("Retry-After"))
        ++busy;
      else
        ++other;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_GE(ok, 1);
  EXPECT_GE(busy, 1) << "a full queue must refuse, not pile up";
  EXPECT_EQ(other, 0);
  EXPECT_EQ(server.stop(SIGINT), 0);
}

TEST(ServerLifecycle, ApiKeyIsRequiredWhenSet) {
  ServerProcess server({kSam3, "serve", "--models", models(), "--port", "0", "--api-key", "s3cret"});
  httplib::Client c("127.0.0.1", server.port());
  wait_ready(server.port());
  EXPECT_EQ(c.Get("/")->status, 200) << "the page itself is public";
  expect_error(c.Get("/v1/info"), 401, "unauthorized");
  EXPECT_EQ(c.Get("/v1/info", {{"Authorization", "Bearer s3cret"}})->status, 200);
  EXPECT_EQ(c.Get("/v1/info", {{"X-API-Key", "s3cret"}})->status, 200);
}

// A model whose files are named right but do not load: the server said "listening", then
// answered 503 model_unavailable forever; now sam3 serve ends with the library's error code
// (4 or 5, as sam3 segment), no path in any answer given meanwhile.
TEST(ServerLifecycle, ModelThatFailsToLoadEndsTheServer) {
  const auto dir = sam3::test::fresh_test_dir("sam3_server_bad_model");
  for (const char* f : {"vision-encoder.onnx", "text-encoder.onnx", "decoder.onnx"}) std::ofstream(dir / f) << "broken";
  ServerProcess server({kSam3, "serve", "--models", dir.string(), "--port", "0"});
  const auto code = server.exit_within(std::chrono::seconds(60));
  ASSERT_TRUE(code.has_value()) << "the server kept running with a model that cannot load";
  EXPECT_TRUE(*code == 4 || *code == 5) << *code;
  std::filesystem::remove_all(dir);
}

TEST(ServerLifecycle, NonLocalBindNeedsAKey) {
  const auto r = sam3::test::run_command(kSam3 + " serve --models " + models() + " --host 0.0.0.0 --port 0");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("--api-key"), std::string::npos) << r.err;
}

// `sam3 serve --help`: every option has its line of description, and the labeling tools' options
// say which tool they are for (a new user read "MB of that one client (a peer address) may hold" and
// "Seconds another client's session must be unused ..." as saying nothing).
TEST(ServerLifecycle, HelpDescribesEveryOptionOnItsOwn) {
  const auto r = sam3::test::run_command(kSam3 + " serve --help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::string> described;  // option -> its description
  std::istringstream lines(r.out);
  std::string line, pending;
  while (std::getline(lines, line)) {
    if (!pending.empty()) {  // CLI11 puts a long header's description on the next line
      described[pending] = line.substr(std::min(line.size(), line.find_first_not_of(' ')));
      pending.clear();
      continue;
    }
    if (!line.starts_with("  -")) continue;
    const std::string option = line.substr(2, line.find_first_of(" ,", 2) - 2);
    const size_t gap = line.find("  ", 2);
    if (gap == std::string::npos)
      pending = option;
    else
      described[option] = line.substr(std::min(line.size(), line.find_first_not_of(' ', gap)));
  }
  ASSERT_GT(described.size(), 30u) << r.out;
  for (const auto& [option, text] : described) EXPECT_GE(text.size(), 8u) << option << " has no description: \"" << text << "\"";
  for (const auto& [option, tool] : std::vector<std::pair<std::string, std::string>>{{"--label-studio-video-frames", "Label Studio"},
                                                                                     {"--cvat-tracker-memory", "CVAT"},
                                                                                     {"--cvat-tracker-client-memory", "CVAT"},
                                                                                     {"--cvat-tracker-sessions", "CVAT"},
                                                                                     {"--cvat-tracker-idle", "CVAT"}}) {
    ASSERT_TRUE(described.count(option)) << option << " is not in: " << r.out;
    EXPECT_NE(described[option].find(tool), std::string::npos) << option << ": " << described[option];
  }
}

TEST(ServerLifecycle, ServesThePageAndTheOpenApiDescription) {
  ServerProcess server({kSam3, "serve", "--models", models("samexporter"), "--port", "0"});
  httplib::Client c("127.0.0.1", server.port());
  auto page = c.Get("/", {{"Accept", "text/html,application/xhtml+xml,*/*;q=0.8"}});  // what browsers send
  ASSERT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<canvas id=\"view\">"), std::string::npos);
  EXPECT_EQ(c.Get("/app.js")->status, 200);
  auto spec = c.Get("/openapi.json");
  ASSERT_EQ(spec->status, 200);
  const auto j = body_of(spec);
  EXPECT_EQ(j["openapi"], "3.0.3");
  EXPECT_TRUE(j["paths"].contains("/v1/segment"));
}

}  // namespace

namespace {

// sam3 serve on every generation sam3 loads: the red objects where they are.
class ServeEveryGeneration : public ::testing::TestWithParam<const char*> {};

TEST_P(ServeEveryGeneration, SegmentFindsTheRedObjects) {
  ServerProcess server({kSam3, "serve", "--models", models(GetParam()), "--port", "0"});
  ASSERT_GT(server.port(), 0) << server.first_line();
  httplib::Client c("127.0.0.1", server.port());
  wait_ready(server.port());
  const auto scene = sam3::test::make_scene(false);
  auto r = c.Post("/v1/segment", json{{"image", sam3::base64_encode(scene_png())}, {"prompts", {"red"}}}.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const auto instances = body_of(r)["images"][0]["prompts"][0]["instances"];
  ASSERT_EQ(instances.size(), 2u) << r->body.substr(0, 300);
  EXPECT_NEAR(instances[0]["box"][2].get<double>(), scene.red_big.x1, 9);
  const auto info = body_of(c.Get("/v1/info"));
  EXPECT_FALSE(info["model"]["generation"].get<std::string>().empty()) << info.dump();
  EXPECT_EQ(server.stop(SIGTERM), 0);
}

INSTANTIATE_TEST_SUITE_P(Generations, ServeEveryGeneration,
                         ::testing::Values("usls-504x896", "usls-fp16", "usls-v1", "geti", "samexporter-float-4slots", "osam"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
