// Clicks through `sam3 serve`: one server holding a text model and the interactive model, each
// image encoded by each model only when a prompt needs it.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "sam3/base64.h"
#include "sam3/export.h"
#include "sam3/mask_encodings.h"
#include "support/serve.h"
#include "support/test_images.h"

namespace {

using nlohmann::json;
using sam3::test::ServerProcess;

json body_of(const httplib::Result& r) { return r ? json::parse(r->body, nullptr, false) : json(); }

class InteractiveServer : public sam3::test::TextAndClicksServer {
 protected:
  static httplib::Client client() {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(60, 0);
    return c;
  }
  static json info() { return body_of(client().Get("/v1/info")); }
  static json segment(const json& request) {
    auto r = client().Post("/v1/segment", request.dump(), "application/json");
    EXPECT_TRUE(r) << "no response";
    if (r) EXPECT_EQ(r->status, 200) << r->body;
    return body_of(r);
  }
  static inline const sam3::test::ClickScene scene_ = sam3::test::make_click_scene();
};

TEST_F(InteractiveServer, TextAndClicksOnOneImageEachModelEncodingOnlyWhenNeeded) {
  const std::string png = sam3::encode_rgb_png(scene_.image);
  auto up = client().Post("/v1/images", png, "image/png");
  ASSERT_EQ(up->status, 200) << up->body;
  const std::string id = body_of(up)["image_id"];
  EXPECT_EQ(info()["model"]["image_encodes"], 1);
  EXPECT_EQ(info()["interactive_model"]["image_encodes"], 0) << "no click yet: the interactive model has not encoded";

  // The text model finds every red thing; a click picks one of them.
  const auto r =
      segment({{"image_id", id}, {"prompts", json::array({"red", {{"points", json::array({json::array({160, 160, "pos"})})}}})}});
  const auto prompts = r["images"][0]["prompts"];
  ASSERT_EQ(prompts.size(), 2u) << r.dump();
  EXPECT_EQ(prompts[0]["text"], "red");
  EXPECT_EQ(prompts[1]["points"], json::array({json::array({160, 160, "pos"})}));
  EXPECT_TRUE(prompts[1]["box"].is_null());
  ASSERT_EQ(prompts[1]["instances"].size(), 1u);
  const auto& inst = prompts[1]["instances"][0];
  EXPECT_NEAR(inst["score"].get<double>(), 0.9, 1e-4);
  const auto mask = sam3::rle_decode(inst["mask"]["counts"], 480, 640);
  EXPECT_GT(sam3::test::iou_with_rect(mask, scene_.red_left), 0.95);
  EXPECT_GT(prompts[1]["object_score"].get<double>(), 0.9);
  EXPECT_EQ(r["interactive_model"]["layout"], "sam3-tracker");
  EXPECT_EQ(info()["interactive_model"]["image_encodes"], 1);
  EXPECT_EQ(info()["model"]["image_encodes"], 1) << "the text model's embedding came from the cache";

  // Another click on the same image: both embeddings are cached now.
  const auto again = segment({{"image_id", id}, {"prompts", json::array({{{"box", {380, 80, 540, 240}}}})}});
  EXPECT_TRUE(again["timings_ms"]["image_cached"].get<bool>());
  EXPECT_EQ(info()["interactive_model"]["image_encodes"], 1);
  EXPECT_GT(sam3::test::iou_with_rect(sam3::rle_decode(again["images"][0]["prompts"][0]["instances"][0]["mask"]["counts"], 480, 640),
                                      scene_.red_right),
            0.95);
}

TEST_F(InteractiveServer, AnInlineImageWithClicksOnlyIsEncodedByTheInteractiveModelOnly) {
  auto image = scene_.image;
  sam3::test::fill(image, {0, 0, 4, 4}, 0, 255, 0);  // another image (another id)
  const auto text_before = info()["model"]["image_encodes"].get<int>();
  const auto click_before = info()["interactive_model"]["image_encodes"].get<int>();
  const auto r = segment(
      {{"image", sam3::base64_encode(sam3::encode_rgb_png(image))},
       {"multimask", true},
       {"prompts", json::array({{{"points", json::array({json::array({160, 160})})}}, {{"everything", true}, {"points_per_side", 12}}})}});
  const auto prompts = r["images"][0]["prompts"];
  ASSERT_EQ(prompts.size(), 2u) << r.dump();
  EXPECT_EQ(prompts[0]["instances"].size(), 3u) << "multimask";
  EXPECT_TRUE(prompts[1]["everything"].get<bool>());
  EXPECT_FALSE(prompts[1]["instances"].empty());
  EXPECT_EQ(info()["model"]["image_encodes"].get<int>(), text_before);
  EXPECT_EQ(info()["interactive_model"]["image_encodes"].get<int>(), click_before + 1);
}

TEST_F(InteractiveServer, BadClicksAreA400NamingThePoint) {
  const std::string png = sam3::encode_rgb_png(scene_.image);
  const std::string id = body_of(client().Post("/v1/images", png, "image/png"))["image_id"];
  const auto post = [&](const json& prompts) {
    return client().Post("/v1/segment", json{{"image_id", id}, {"prompts", prompts}}.dump(), "application/json");
  };
  auto r = post(json::array({{{"points", json::array({json::array({700, 20})})}}}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("prompts[0].points[0] (700, 20) is outside the 640x480 image"), std::string::npos) << r->body;
  r = post(json::array({{{"points", json::array({json::array({10, 20, "neg"})})}}}));
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("neither a positive point nor a box"), std::string::npos) << r->body;
  r = post(json::array({{{"points", json::array({json::array({10, "x"})})}}}));
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("prompts[0].points[0]"), std::string::npos) << r->body;
  r = post(json::array({{{"points", json::array({json::array({10, 20, "maybe"})})}}}));
  EXPECT_EQ(r->status, 400);
  json many = json::array();
  for (int i = 0; i < 1000; ++i) many.push_back(json::array({10, 20}));
  r = post(json::array({{{"points", many}}}));
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("1000 points; at most 64"), std::string::npos) << r->body;
  json objects = json::array();
  for (int i = 0; i < 65; ++i) objects.push_back({{"points", json::array({json::array({10, 20})})}});
  r = post(objects);
  EXPECT_EQ(r->status, 413) << "clicked objects count toward --max-prompts (64)";
  r = post(json::array({{{"text", "red"}, {"points", json::array({json::array({10, 20})})}}}));
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("two prompts"), std::string::npos) << r->body;
}

// The server's messages name the body's own JSON path, counted as the body's list is (a new
// user's trial read "object 1, point 1" for the second prompt, beside "prompts[0].points[0]"
// from the codec); an empty points list has its own message (it got "negative points only say
// what the object is not" though no point was given).
TEST_F(InteractiveServer, ClickAndBoxMessagesNameThePathInTheBody) {
  const std::string png = sam3::encode_rgb_png(scene_.image);
  const std::string id = body_of(client().Post("/v1/images", png, "image/png"))["image_id"];
  const auto post = [&](const json& prompts) {
    return client().Post("/v1/segment", json{{"image_id", id}, {"prompts", prompts}}.dump(), "application/json");
  };
  const json inside = {{"points", json::array({json::array({10, 20})})}};
  auto r = post(json::array({"red", inside, {{"points", json::array({json::array({10, 20}), json::array({700, 20})})}}}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("prompts[2].points[1] (700, 20) is outside"), std::string::npos) << r->body;
  r = post(json::array({"red", {{"points", json::array({json::array({10, 20, "neg"})})}}}));
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("prompts[1] has neither a positive point nor a box"), std::string::npos) << r->body;
  r = post(json::array({inside, {{"box", json::array({0, 0, 900, 20})}}}));
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("prompts[1].box"), std::string::npos) << r->body;
  r = post(json::array({inside, {{"text", "red"}, {"boxes", json::array({json::array({0, 0, 900, 20})})}}}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("prompts[1].boxes[0]"), std::string::npos) << r->body;
  r = post(json::array({{{"points", json::array()}}}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("prompts[0].points is empty"), std::string::npos) << r->body;
  EXPECT_EQ(r->body.find("negative points"), std::string::npos) << "no point was given: " << r->body;
}

TEST(InteractiveServerTextOnly, ClicksWithoutAnInteractiveModelSayHowToGetOne) {
  std::unique_ptr<ServerProcess> server(sam3::test::start_serve("usls", {"--threads", "1"}));
  ASSERT_GT(server->port(), 0);
  httplib::Client c("127.0.0.1", server->port());
  c.set_read_timeout(60, 0);
  const std::string png = sam3::encode_rgb_png(sam3::test::make_click_scene().image);
  const std::string id = body_of(c.Post("/v1/images", png, "image/png"))["image_id"];
  auto r =
      c.Post("/v1/segment", json{{"image_id", id}, {"prompts", json::array({{{"points", json::array({json::array({10, 20})})}}})}}.dump(),
             "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_EQ(body_of(r)["error"]["code"], "no_interactive_model");
  EXPECT_NE(r->body.find("--interactive-models"), std::string::npos) << r->body;
  EXPECT_EQ(server->stop(SIGTERM), 0);
}

TEST(InteractiveServerTrackerOnly, TheInteractiveModelAloneTakesClicksAndRefusesText) {
  std::unique_ptr<ServerProcess> server(sam3::test::start_serve("tracker", {"--threads", "1"}));
  ASSERT_GT(server->port(), 0);
  httplib::Client c("127.0.0.1", server->port());
  c.set_read_timeout(60, 0);
  const std::string png = sam3::encode_rgb_png(sam3::test::make_click_scene().image);
  const std::string id = body_of(c.Post("/v1/images", png, "image/png"))["image_id"];
  auto r =
      c.Post("/v1/segment", json{{"image_id", id}, {"prompts", json::array({{{"box", {380, 80, 540, 240}}}})}}.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  r = c.Post("/v1/segment", json{{"image_id", id}, {"prompts", json::array({"red"})}}.dump(), "application/json");
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("interactive (tracker) model"), std::string::npos) << r->body;
  EXPECT_EQ(server->stop(SIGTERM), 0);
}

}  // namespace
