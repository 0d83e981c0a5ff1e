// sam3 serve as Label Studio's ML backend, with a loopback stand-in for Label Studio (task
// images behind its token, the personal-access-token exchange, presigned cloud URLs) and a
// second host that must never see the token.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <nlohmann/json.hpp>
#include <thread>

#include "sam3/base64.h"
#include "sam3/export.h"
#include "support/serve.h"
#include "support/server_process.h"
#include "support/stand_in.h"
#include "support/test_images.h"

namespace {

using nlohmann::json;
using sam3::test::ServerProcess;
using sam3::test::StandIn;
using namespace std::chrono_literals;

const std::string kLegacyToken = "3f1c0ffee0123456789abcdef0123456789abcde";
// A personal access token: a JWT, exchanged at /api/token/refresh/ for an access token.
const std::string kPat = "eyJhbGciOiJIUzI1NiJ9.eyJ0b2tlbl90eXBlIjoicmVmcmVzaCJ9.c2lnbmF0dXJl";
const std::string kAccess = "eyJhbGciOiJIUzI1NiJ9.eyJ0b2tlbl90eXBlIjoiYWNjZXNzIn0.YWNjZXNz";
const std::string kServeKey = "serve-secret";

const char* kConfig = R"(<View>
  <Image name="image" value="$image"/>
  <BrushLabels name="brush" toName="image">
    <Label value="Car" predicted_values="red"/><Label value="Water" predicted_values="blue"/>
  </BrushLabels>
  <PolygonLabels name="outline" toName="image"><Label value="Car" predicted_values="red"/></PolygonLabels>
  <RectangleLabels name="box" toName="image"><Label value="Car" predicted_values="red"/></RectangleLabels>
  <TextArea name="prompt" toName="image"/>
</View>)";

std::string scene_png(bool portrait = false) { return sam3::encode_rgb_png(sam3::test::make_scene(portrait).image); }

std::string base64url_decode(std::string s) {
  for (char& c : s) c = c == '-' ? '+' : c == '_' ? '/' : c;
  return sam3::base64_decode(s).value_or("");
}

class LabelStudio : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    other_ = new StandIn;
    other_->http().Get("/public/scene.png",
                       [](const httplib::Request&, httplib::Response& res) { res.set_content(scene_png(), "image/png"); });
    other_->http().Get("/signed/scene.png", [](const httplib::Request& req, httplib::Response& res) {
      if (req.get_param_value("sig") != "ok")
        res.status = 403;
      else
        res.set_content(scene_png(), "image/png");
    });
    third_ = new StandIn;
    third_->http().Get("/x.png", [](const httplib::Request&, httplib::Response& res) { res.set_content(scene_png(), "image/png"); });
    other_->http().Get("/elsewhere.png",
                       [](const httplib::Request&, httplib::Response& res) { res.set_redirect(third_->url() + "/x.png"); });
    ls_ = new StandIn;
    auto& ls = ls_->http();
    const auto authorized = [](const httplib::Request& req) {
      const auto a = req.get_header_value("Authorization");
      return a == "Token " + kLegacyToken || a == "Bearer " + kAccess;
    };
    ls.Get("/data/upload/1/scene.png", [authorized](const httplib::Request& req, httplib::Response& res) {
      if (!authorized(req))
        res.status = 401;
      else
        res.set_content(scene_png(), "image/png");
    });
    ls.Get("/data/upload/1/portrait.png", [authorized](const httplib::Request& req, httplib::Response& res) {
      if (!authorized(req))
        res.status = 401;
      else
        res.set_content(scene_png(true), "image/png");
    });
    ls.Post("/api/token/refresh/", [](const httplib::Request& req, httplib::Response& res) {
      const auto body = json::parse(req.body, nullptr, false);
      if (body.is_object() && body.value("refresh", "") == kPat)
        res.set_content(json{{"access", kAccess}}.dump(), "application/json");
      else
        res.status = 401;
    });
    ls.Get(R"(/tasks/(\d+)/presign/)", [authorized](const httplib::Request& req, httplib::Response& res) {
      if (!authorized(req)) {
        res.status = 401;
        return;
      }
      if (base64url_decode(req.get_param_value("fileuri")) != "s3://bucket/scene.png" || req.matches[1] != "7") {
        res.status = 404;
        return;
      }
      res.set_redirect(other_->url() + "/signed/scene.png?sig=ok");
    });
    for (auto* s : {other_, third_, ls_}) s->start();
    root_ = std::filesystem::temp_directory_path() / ("sam3_label_studio_" + std::to_string(::getpid()));
    std::filesystem::create_directories(root_ / "photos");
    sam3::write_file_atomic(root_ / "photos" / "scene.png", scene_png());
    sam3::write_file_atomic(root_ / "outside.png", scene_png());

    server_ = start({"--label-studio-url", ls_->url(), "--label-studio-api-key", kLegacyToken, "--api-key", kServeKey, "--fetch-host",
                     "127.0.0.1:" + std::to_string(other_->port()), "--workers", "2", "--local-files-root", (root_ / "photos").string()});
  }
  static void TearDownTestSuite() {
    delete server_;
    delete ls_;
    delete other_;
    delete third_;
    std::filesystem::remove_all(root_);
  }

  static ServerProcess* start(const std::vector<std::string>& options, const std::string& layout = "usls") {
    return sam3::test::start_serve(layout, options);
  }

  static httplib::Result post(ServerProcess& server, const std::string& path, const json& body, bool with_key = true) {
    httplib::Client c("127.0.0.1", server.port());
    c.set_read_timeout(60, 0);
    if (with_key) c.set_basic_auth("label-studio", kServeKey);
    return c.Post(path, body.dump(), "application/json");
  }

  static json predict(ServerProcess& server, const json& tasks, const json& context = nullptr, int expect = 200,
                      const char* config = kConfig) {
    auto r = post(server, "/predict",
                  {{"tasks", tasks},
                   {"model_version", "x"},
                   {"project", "1.1700000000"},
                   {"label_config", config},
                   {"params", {{"login", nullptr}, {"context", context}}}});
    EXPECT_TRUE(r) << "no answer";
    if (!r) return {};
    EXPECT_EQ(r->status, expect) << r->body;
    return json::parse(r->body, nullptr, false);
  }

  static bool token_seen_by_other_hosts() {
    for (auto* s : {other_, third_}) {
      for (const auto& seen : s->seen()) {
        if (!seen.authorization.empty()) return true;
      }
    }
    return false;
  }

  static inline StandIn *ls_ = nullptr, *other_ = nullptr, *third_ = nullptr;
  static inline std::filesystem::path root_;
  static inline ServerProcess* server_ = nullptr;
};

json task(int id, const std::string& image) { return {{"id", id}, {"data", {{"image", image}}}, {"meta", json::object()}}; }

// The brush RLE is checked pixel by pixel with Label Studio's own decoder in
// tests/web/label_studio.test.mjs; here: its length, and where the polygon and box are.
struct Extent {
  double x0 = 1e9, y0 = 1e9, x1 = -1e9, y1 = -1e9;
};
Extent polygon_extent(const json& region, int w, int h) {
  Extent e;
  for (const auto& p : region["value"]["points"]) {
    e.x0 = std::min(e.x0, p[0].get<double>() * w / 100), e.x1 = std::max(e.x1, p[0].get<double>() * w / 100);
    e.y0 = std::min(e.y0, p[1].get<double>() * h / 100), e.y1 = std::max(e.y1, p[1].get<double>() * h / 100);
  }
  return e;
}

void expect_near_rect(const Extent& e, const sam3::test::Rect& r, double tolerance, const std::string& what) {
  EXPECT_NEAR(e.x0, r.x0, tolerance) << what;
  EXPECT_NEAR(e.y0, r.y0, tolerance) << what;
  EXPECT_NEAR(e.x1, r.x1, tolerance) << what;
  EXPECT_NEAR(e.y1, r.y1, tolerance) << what;
}

std::vector<json> regions_of_type(const json& result, const std::string& type) {
  std::vector<json> out;
  for (const auto& r : result["result"]) {
    if (r["type"] == type) out.push_back(r);
  }
  return out;
}

TEST_F(LabelStudio, HealthSetupAndHousekeepingRoutes) {
  httplib::Client c("127.0.0.1", server_->port());
  for (const char* path : {"/health", "/"}) {
    auto r = c.Get(path);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << path;
    EXPECT_EQ(json::parse(r->body)["status"], "UP") << path << ": " << r->body;
  }
  auto page = c.Get("/", {{"Accept", "text/html,application/xhtml+xml"}});
  ASSERT_TRUE(page);
  EXPECT_NE(page->body.find("<html"), std::string::npos) << "a browser still gets the web page";

  auto setup = post(*server_, "/setup",
                    {{"project", "1.1700000000"},
                     {"schema", kConfig},
                     {"hostname", ls_->url()},
                     {"access_token", "x"},
                     {"model_version", nullptr},
                     {"extra_params", json::object()}});
  ASSERT_TRUE(setup);
  EXPECT_EQ(setup->status, 200) << setup->body;
  EXPECT_TRUE(json::parse(setup->body)["model_version"].get<std::string>().starts_with("sam3cpp-"));
  auto bad_setup = post(*server_, "/setup", {{"project", "1.1"}, {"schema", "<View><Image name='i' value='$image'/></View>"}});
  ASSERT_TRUE(bad_setup);
  EXPECT_EQ(bad_setup->status, 400);
  EXPECT_NE(bad_setup->body.find("BrushLabels"), std::string::npos) << bad_setup->body;

  auto hook = post(*server_, "/webhook", {{"action", "ANNOTATION_CREATED"}});
  ASSERT_TRUE(hook);
  EXPECT_EQ(json::parse(hook->body)["status"], "Unknown event");
  c.set_basic_auth("label-studio", kServeKey);
  auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->body, "{}");
  auto versions = c.Get("/versions");
  ASSERT_TRUE(versions);
  EXPECT_EQ(json::parse(versions->body)["versions"].size(), 1u);
}

TEST_F(LabelStudio, BasicAuthWithTheKeyAsPasswordIsRequired) {
  auto none = post(*server_, "/predict", {{"tasks", json::array()}}, false);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(none->get_header_value("WWW-Authenticate"), "Basic realm=\"sam3\"");
  httplib::Client wrong("127.0.0.1", server_->port());
  wrong.set_basic_auth("label-studio", "not-the-key");
  auto r = wrong.Post("/predict", "{}", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
}

void expect_scene_pre_annotation(ServerProcess& server, const std::string& image);

TEST_F(LabelStudio, PreAnnotatesEveryLabelAsBrushPolygonAndRectangle) {
  expect_scene_pre_annotation(*server_, "/data/upload/1/scene.png");
  for (const auto& seen : ls_->seen()) {
    if (seen.path == "/data/upload/1/scene.png") EXPECT_EQ(seen.authorization, "Token " + kLegacyToken);
  }
}

TEST_F(LabelStudio, PreAnnotatesWithTheSamexporterLayoutToo) {
  std::unique_ptr<ServerProcess> samexporter(
      start({"--label-studio-url", ls_->url(), "--label-studio-api-key", kLegacyToken}, "samexporter"));
  expect_scene_pre_annotation(*samexporter, "/data/upload/1/scene.png");
}

void expect_scene_pre_annotation(ServerProcess& server, const std::string& image) {
  const auto scene = sam3::test::make_scene(false);
  const json out = LabelStudio::predict(server, json::array({task(1, image)}));
  ASSERT_EQ(out["results"].size(), 1u);
  const json& result = out["results"][0];
  EXPECT_TRUE(result["model_version"].get<std::string>().starts_with("sam3cpp-"));
  EXPECT_GT(result["score"].get<double>(), 0.5);
  // "red" (Car): the big and the small red box; "blue" (Water): the blue one.
  const auto brushes = regions_of_type(result, "brushlabels");
  ASSERT_EQ(brushes.size(), 3u) << result.dump();
  int cars = 0, water = 0;
  for (const auto& b : brushes) {
    EXPECT_EQ(b["from_name"], "brush");
    EXPECT_EQ(b["to_name"], "image");
    EXPECT_EQ(b["original_width"], 400);
    EXPECT_EQ(b["original_height"], 240);
    EXPECT_EQ(b["image_rotation"], 0);
    EXPECT_EQ(b["value"]["format"], "rle");
    EXPECT_FALSE(b["value"]["rle"].empty());
    cars += b["value"]["brushlabels"][0] == "Car";
    water += b["value"]["brushlabels"][0] == "Water";
  }
  EXPECT_EQ(cars, 2);
  EXPECT_EQ(water, 1);
  const auto polygons = regions_of_type(result, "polygonlabels");
  ASSERT_EQ(polygons.size(), 2u) << "Car only: Water is not a polygon label";
  expect_near_rect(polygon_extent(polygons[0], 400, 240), scene.red_big, 2.5, "the best Car polygon is the big red box");
  const auto boxes = regions_of_type(result, "rectanglelabels");
  ASSERT_EQ(boxes.size(), 2u);
  const json& v = boxes[0]["value"];
  expect_near_rect({v["x"].get<double>() * 4, v["y"].get<double>() * 2.4, (v["x"].get<double>() + v["width"].get<double>()) * 4,
                    (v["y"].get<double>() + v["height"].get<double>()) * 2.4},
                   scene.red_big, 4, "the best Car rectangle, in percent");
  std::set<std::string> ids;
  for (const auto& r : result["result"]) ids.insert(r["id"].get<std::string>());
  EXPECT_EQ(ids.size(), result["result"].size()) << "region ids are unique";
}

TEST_F(LabelStudio, SeveralTasksAnswerInOrderAtTheirOwnSizes) {
  const json out = predict(*server_, json::array({task(1, "/data/upload/1/portrait.png"), task(2, "/data/upload/1/scene.png"),
                                                  task(3, "http://127.0.0.1:" + std::to_string(other_->port()) + "/public/scene.png")}));
  ASSERT_EQ(out["results"].size(), 3u);
  EXPECT_EQ(regions_of_type(out["results"][0], "brushlabels")[0]["original_width"], 240) << "the portrait task first";
  const auto portrait = sam3::test::make_scene(true);
  expect_near_rect(polygon_extent(regions_of_type(out["results"][0], "polygonlabels")[0], 240, 400), portrait.red_big, 2.5,
                   "portrait polygon");
  EXPECT_EQ(regions_of_type(out["results"][1], "brushlabels")[0]["original_width"], 400);
  EXPECT_EQ(out["results"][2]["result"].size(), out["results"][1]["result"].size()) << "the same image from an allowed host";
  EXPECT_FALSE(token_seen_by_other_hosts());
}

TEST_F(LabelStudio, InteractiveTextPromptGoesToTheLabelItNames) {
  const json context = {
      {"result", {{{"from_name", "prompt"}, {"to_name", "image"}, {"type", "textarea"}, {"value", {{"text", {"blue"}}}}}}}};
  const json out = predict(*server_, json::array({task(1, "/data/upload/1/scene.png")}), context);
  const auto& result = out["results"][0];
  const auto brushes = regions_of_type(result, "brushlabels");
  ASSERT_EQ(brushes.size(), 1u) << result.dump();
  EXPECT_EQ(brushes[0]["value"]["brushlabels"][0], "Water") << "\"blue\" is Water's predicted value";
  EXPECT_TRUE(regions_of_type(result, "rectanglelabels").empty()) << "interactive answers are masks";
  // A text naming no label goes to the first brush or polygon label.
  const json red = {{"result", {{{"type", "textarea"}, {"value", {{"text", {"red"}}}}}}}};
  const auto brushes_red =
      regions_of_type(predict(*server_, json::array({task(1, "/data/upload/1/scene.png")}), red)["results"][0], "brushlabels");
  ASSERT_EQ(brushes_red.size(), 2u);
  EXPECT_EQ(brushes_red[0]["value"]["brushlabels"][0], "Car");
}

TEST_F(LabelStudio, InteractiveBoxesAreExemplars) {
  // A positive box on the blue object, drawn in percent: only what is like it comes back.
  const json context = {{"result",
                         {{{"from_name", "box"},
                           {"to_name", "image"},
                           {"type", "rectanglelabels"},
                           {"original_width", 400},
                           {"original_height", 240},
                           {"is_positive", true},
                           {"value", {{"x", 60.0}, {"y", 58.33}, {"width", 35.0}, {"height", 33.33}, {"rectanglelabels", {"Car"}}}}}}}};
  const json out = predict(*server_, json::array({task(1, "/data/upload/1/scene.png")}), context);
  const auto polygons = regions_of_type(out["results"][0], "polygonlabels");
  ASSERT_FALSE(polygons.empty()) << out.dump();
  expect_near_rect(polygon_extent(polygons[0], 400, 240), sam3::test::make_scene(false).blue, 3, "the box's object");
  EXPECT_EQ(polygons[0]["value"]["polygonlabels"][0], "Car") << "the label of the drawn box";
}

TEST_F(LabelStudio, CloudUrisGoThroughThePresignRouteAndTheTokenStaysHome) {
  const json out = predict(*server_, json::array({task(7, "s3://bucket/scene.png")}));
  ASSERT_EQ(out["results"].size(), 1u);
  EXPECT_EQ(regions_of_type(out["results"][0], "brushlabels").size(), 3u);
  bool signed_fetch = false;
  for (const auto& s : other_->seen()) signed_fetch = signed_fetch || s.path == "/signed/scene.png";
  EXPECT_TRUE(signed_fetch) << "the presigned URL Label Studio redirected to was fetched";
  EXPECT_FALSE(token_seen_by_other_hosts()) << "the token went to a host that is not Label Studio";
}

TEST_F(LabelStudio, LocalFilesAreReadFromTheDocumentRootOnly) {
  const json out = predict(*server_, json::array({task(1, "/data/local-files/?d=scene.png")}));
  EXPECT_EQ(regions_of_type(out["results"][0], "brushlabels").size(), 3u);
  const json escape = predict(*server_, json::array({task(1, "/data/local-files/?d=..%2Foutside.png")}), nullptr, 400);
  EXPECT_EQ(escape["error"]["code"], "invalid_task") << escape.dump();
  const json missing = predict(*server_, json::array({task(1, "/data/local-files/?d=nope.png")}), nullptr, 404);
  EXPECT_NE(missing["error"]["message"].get<std::string>().find("LOCAL_FILES_DOCUMENT_ROOT"), std::string::npos);
}

TEST_F(LabelStudio, EveryFailureSaysWhatIsWrong) {
  const auto message_of = [](const json& j) { return j["error"]["message"].get<std::string>(); };
  const json unknown_key = predict(*server_, json::array({{{"id", 3}, {"data", {{"img", "x"}}}}}), nullptr, 400);
  EXPECT_EQ(unknown_key["error"]["code"], "unknown_data_key");
  EXPECT_NE(message_of(unknown_key).find("\"image\""), std::string::npos) << unknown_key.dump();
  const json refused = predict(*server_, json::array({task(1, "http://127.0.0.2:9/x.png")}), nullptr, 403);
  EXPECT_NE(message_of(refused).find("--fetch-host"), std::string::npos) << refused.dump();
  const json redirect = predict(*server_, json::array({task(1, other_->url() + "/elsewhere.png")}), nullptr, 403);
  EXPECT_NE(message_of(redirect).find("redirect"), std::string::npos) << redirect.dump();
  EXPECT_TRUE(third_->seen().empty()) << "a redirect to a host not allowed is not followed";
  const json not_found = predict(*server_, json::array({task(1, "/data/upload/1/none.png")}), nullptr, 502);
  EXPECT_NE(message_of(not_found).find("404"), std::string::npos) << not_found.dump();
  const json bad_config = predict(*server_, json::array({task(1, "/data/upload/1/scene.png")}), nullptr, 400,
                                  "<View><Image name='image' value='$image'/><Choices name='c' toName='image'/></View>");
  EXPECT_EQ(bad_config["error"]["code"], "unsupported_label_config");
  const json no_tasks = json::parse(post(*server_, "/predict", {{"label_config", kConfig}})->body);
  EXPECT_EQ(no_tasks["error"]["code"], "invalid_request");
}

TEST_F(LabelStudio, WithoutItsAddressTheErrorSaysWhatToSet) {
  std::unique_ptr<ServerProcess> bare(start({}));
  const json out = predict(*bare, json::array({task(1, "/data/upload/1/scene.png")}), nullptr, 500);
  EXPECT_EQ(out["error"]["code"], "label_studio_url_missing");
  EXPECT_NE(out["error"]["message"].get<std::string>().find("LABEL_STUDIO_URL"), std::string::npos);
  const json data_uri = predict(*bare, json::array({task(1, "data:image/png;base64," + sam3::base64_encode(scene_png()))}));
  EXPECT_EQ(regions_of_type(data_uri["results"][0], "brushlabels").size(), 3u) << "data: URIs need nothing";
}

TEST_F(LabelStudio, AWrongTokenIsNamedAsSuch) {
  std::unique_ptr<ServerProcess> wrong(start({"--label-studio-url", ls_->url(), "--label-studio-api-key", "0123abcd"}));
  const json out = predict(*wrong, json::array({task(1, "/data/upload/1/scene.png")}), nullptr, 502);
  EXPECT_EQ(out["error"]["code"], "label_studio_unauthorized");
  EXPECT_NE(out["error"]["message"].get<std::string>().find("LABEL_STUDIO_API_KEY"), std::string::npos);
  std::unique_ptr<ServerProcess> gone(start({"--label-studio-url", "http://127.0.0.1:9", "--label-studio-api-key", "x"}));
  EXPECT_EQ(predict(*gone, json::array({task(1, "/data/upload/1/scene.png")}), nullptr, 502)["error"]["code"], "label_studio_unreachable");
}

TEST_F(LabelStudio, EnvironmentVariablesAndPersonalAccessTokens) {
  ::setenv("LABEL_STUDIO_URL", ls_->url().c_str(), 1);
  ::setenv("LABEL_STUDIO_API_KEY", kPat.c_str(), 1);
  std::unique_ptr<ServerProcess> env(start({}));
  ::unsetenv("LABEL_STUDIO_URL");
  ::unsetenv("LABEL_STUDIO_API_KEY");
  const json out = predict(*env, json::array({task(1, "/data/upload/1/scene.png"), task(2, "/data/upload/1/scene.png")}));
  ASSERT_EQ(out["results"].size(), 2u);
  EXPECT_EQ(regions_of_type(out["results"][1], "brushlabels").size(), 3u);
  int exchanges = 0;
  for (const auto& s : ls_->seen()) {
    exchanges += s.path == "/api/token/refresh/";
    if (s.path == "/data/upload/1/scene.png" && s.authorization.starts_with("Bearer")) EXPECT_EQ(s.authorization, "Bearer " + kAccess);
  }
  EXPECT_EQ(exchanges, 1) << "the access token is kept, not exchanged per image";
}

TEST_F(LabelStudio, HealthAnswersAtOnceWhileBothWorkersPredict) {
  // Two requests of 16 images each, all different (no cache hits): a few seconds of work per worker.
  json tasks[2] = {json::array(), json::array()};
  for (int i = 0; i < 32; ++i) {
    auto image = sam3::test::upscale(sam3::test::make_scene(i % 2).image, 3 + (i / 2) % 4);
    image.rgb[0] = static_cast<std::uint8_t>(i);  // a different image each time
    tasks[i / 16].push_back(task(i, "data:image/png;base64," + sam3::base64_encode(sam3::encode_rgb_png(image))));
  }
  std::atomic<int> running{2};
  std::vector<std::thread> busy;
  for (int i = 0; i < 2; ++i)
    busy.emplace_back([&, i] {
      predict(*server_, tasks[i]);
      --running;
    });
  std::this_thread::sleep_for(300ms);
  httplib::Client probe("127.0.0.1", server_->port());
  double worst = 0;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = probe.Get(i % 2 ? "/" : "/health");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    worst = std::max(worst, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  EXPECT_EQ(running, 2) << "the predictions ended before the probes: they prove nothing";
  EXPECT_LT(worst, 100) << "ms for Label Studio's health check with both workers busy (it waits 1 s)";
  for (auto& t : busy) t.join();
}

}  // namespace
