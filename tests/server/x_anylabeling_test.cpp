// sam3 serve as X-AnyLabeling's remote server: the requests its client sends, the answers it
// reads (polygons in pixels that match the masks, rectangles, success:false errors).
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "sam3/base64.h"
#include "sam3/export.h"
#include "support/serve.h"
#include "support/server_process.h"
#include "support/test_images.h"

namespace {

using nlohmann::json;
using sam3::test::ServerProcess;

const std::string kKey = "xal-key";

std::string scene_uri(bool portrait = false) {
  return "data:image/png;base64," + sam3::base64_encode(sam3::encode_rgb_png(sam3::test::make_scene(portrait).image));
}

class XAnyLabeling : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = sam3::test::start_serve("usls", {"--api-key", kKey}); }
  static void TearDownTestSuite() { delete server_; }

  static json call(const std::string& method, const std::string& path, const json& body = nullptr, bool key = true, int expect = 200) {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(60, 0);
    httplib::Headers headers;
    if (key) headers.emplace("Token", kKey);
    auto r = method == "GET" ? c.Get(path, headers) : c.Post(path, headers, body.dump(), "application/json");
    EXPECT_TRUE(r);
    if (!r) return {};
    EXPECT_EQ(r->status, expect) << r->body;
    return json::parse(r->body, nullptr, false);
  }

  static json predict(const json& params, const std::string& image = scene_uri()) {
    return call("POST", "/v1/predict", {{"model", "segment_anything_3"}, {"image", image}, {"params", params}});
  }

  static inline ServerProcess* server_ = nullptr;
};

double shoelace(const json& points) {
  double a = 0;
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    a += points[i][0].get<double>() * points[i + 1][1].get<double>() - points[i + 1][0].get<double>() * points[i][1].get<double>();
  }
  return std::abs(a) / 2;
}

// Pixels whose centre is inside the polygon (even-odd, edges counted in) against the mask.
double polygon_mask_iou(const json& points, const sam3::Mask& mask) {
  std::int64_t inter = 0, uni = 0;
  for (int y = 0; y < mask.height(); ++y) {
    for (int x = 0; x < mask.width(); ++x) {
      bool inside = false, on_edge = false;
      for (size_t i = 0, j = points.size() - 1; i < points.size(); j = i++) {
        const double xi = points[i][0], yi = points[i][1], xj = points[j][0], yj = points[j][1];
        const double cross = (xj - xi) * (y - yi) - (yj - yi) * (x - xi);
        on_edge =
            on_edge || (cross == 0 && x >= std::min(xi, xj) && x <= std::max(xi, xj) && y >= std::min(yi, yj) && y <= std::max(yi, yj));
        if ((yi > y) != (yj > y) && x < (xj - xi) * (y - yi) / (yj - yi) + xi) inside = !inside;
      }
      const bool p = inside || on_edge, q = mask.at(x, y);
      inter += p && q;
      uni += p || q;
    }
  }
  return uni ? double(inter) / double(uni) : 0;
}

std::vector<json> shapes_of(const json& answer, const std::string& type, const std::string& label) {
  std::vector<json> out;
  for (const auto& s : answer["data"]["shapes"]) {
    if (s["shape_type"] == type && s["label"] == label) out.push_back(s);
  }
  return out;
}

TEST_F(XAnyLabeling, ListsSegmentAnything3WithItsWidgets) {
  const json models = call("GET", "/v1/models");
  ASSERT_TRUE(models["success"].get<bool>());
  const json& m = models["data"]["segment_anything_3"];
  EXPECT_EQ(m["display_name"], "Segment Anything 3");
  EXPECT_EQ(m["batch_processing_mode"], "text_prompt");
  std::set<std::string> widgets;
  for (const auto& w : m["widgets"]) widgets.insert(w["name"].get<std::string>());
  for (const char* w : {"edit_text", "button_send", "add_pos_rect", "add_neg_rect", "button_run_rect", "edit_conf"}) {
    EXPECT_TRUE(widgets.count(w)) << w;
  }
}

TEST_F(XAnyLabeling, TextPromptsGivePolygonsThatMatchTheMasks) {
  const json answer = predict({{"conf_threshold", 0.5}, {"iou_threshold", 0.0}, {"epsilon_factor", 0.001}, {"text_prompt", "red, blue."}});
  ASSERT_TRUE(answer["success"].get<bool>()) << answer.dump();
  const auto scene = sam3::test::make_scene(false);
  const auto red = shapes_of(answer, "polygon", "red");
  ASSERT_EQ(red.size(), 2u) << answer.dump();
  ASSERT_EQ(shapes_of(answer, "polygon", "blue").size(), 1u);
  ASSERT_EQ(shapes_of(answer, "rectangle", "red").size(), 2u);
  const json& best = red[0];
  EXPECT_EQ(best["points"].front(), best["points"].back()) << "closed by repeating the first point";
  // The same prompt's mask from the API: the polygon covers it.
  const json segment = call("POST", "/v1/segment", {{"image", scene_uri().substr(22)}, {"prompts", {"red"}}});
  const json& mask = segment["images"][0]["prompts"][0]["instances"][0]["mask"];
  const auto m = sam3::rle_decode(mask["counts"], mask["size"][0], mask["size"][1]);
  EXPECT_GT(polygon_mask_iou(best["points"], m), 0.95);
  EXPECT_GT(best["score"].get<double>(), 0.5);
  EXPECT_LE(best["score"].get<double>(), 1.0);
  for (const auto& p : best["points"]) {
    EXPECT_GE(p[0].get<double>(), scene.red_big.x0 - 1);
    EXPECT_LE(p[0].get<double>(), scene.red_big.x1);
  }
  const json rect = shapes_of(answer, "rectangle", "red")[0];
  EXPECT_EQ(rect["points"].size(), 4u);
  EXPECT_NEAR(rect["points"][0][0].get<double>(), scene.red_big.x0, 4);
  EXPECT_NEAR(rect["points"][2][1].get<double>(), scene.red_big.y1, 4);
}

TEST_F(XAnyLabeling, PortraitImagesKeepTheirOrientation) {
  const json answer = predict({{"text_prompt", "blue"}}, scene_uri(true));
  const auto blue = shapes_of(answer, "rectangle", "blue");
  ASSERT_EQ(blue.size(), 1u) << answer.dump();
  EXPECT_NEAR(blue[0]["points"][0][0].get<double>(), sam3::test::make_scene(true).blue.x0, 4);
  EXPECT_NEAR(blue[0]["points"][0][1].get<double>(), sam3::test::make_scene(true).blue.y0, 4);
}

TEST_F(XAnyLabeling, RectangleMarksAreThePrompt) {
  const auto blue = sam3::test::make_scene(false).blue;
  const json answer = predict({{"text_prompt", ""},
                               {"marks",
                                {{{"type", "rectangle"}, {"data", {blue.x0, blue.y0, blue.x1, blue.y1}}, {"label", 1}},
                                 {{"type", "point"}, {"data", {10, 10}}, {"label", 0}}}}});
  ASSERT_TRUE(answer["success"].get<bool>()) << answer.dump();
  const auto polygons = shapes_of(answer, "polygon", "object");
  ASSERT_EQ(polygons.size(), 1u) << answer.dump();
  EXPECT_NEAR(shoelace(polygons[0]["points"]), double(blue.x1 - blue.x0 - 1) * (blue.y1 - blue.y0 - 1), 0.05 * blue.area());
}

TEST_F(XAnyLabeling, AnAbsentConceptGivesNoShapes) {
  const json answer = predict({{"text_prompt", "green"}});
  ASSERT_TRUE(answer["success"].get<bool>());
  EXPECT_TRUE(answer["data"]["shapes"].empty()) << answer.dump();
}

TEST_F(XAnyLabeling, ErrorsAreSuccessFalseWithTheirCodes) {
  const auto code_of = [](const json& j) { return j["error"]["code"].get<std::string>(); };
  EXPECT_EQ(code_of(call("POST", "/v1/predict", {{"model", "yolo"}, {"image", scene_uri()}})), "MODEL_NOT_FOUND");
  const json garbage = predict({{"text_prompt", "red"}}, "data:image/png;base64," + sam3::base64_encode("not an image"));
  EXPECT_FALSE(garbage["success"].get<bool>());
  EXPECT_EQ(code_of(garbage), "INVALID_IMAGE") << garbage.dump();
  EXPECT_EQ(code_of(predict({{"text_prompt", "red"}}, "%%%")), "INVALID_IMAGE");
  const json nothing = predict({{"marks", {{{"type", "point"}, {"data", {1, 2}}, {"label", 1}}}}});
  EXPECT_EQ(code_of(nothing), "INVALID_REQUEST");
  EXPECT_NE(nothing["error"]["message"].get<std::string>().find("rectangle"), std::string::npos);
  const json unauthorized = call("GET", "/v1/models", nullptr, false, 401);
  EXPECT_FALSE(unauthorized["success"].get<bool>());
  EXPECT_NE(unauthorized["error"]["message"].get<std::string>().find("Token"), std::string::npos);
}

}  // namespace
