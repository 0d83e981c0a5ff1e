// Clicks from the labeling tools: Label Studio's keypoints and rectangles (interactive mode)
// and X-AnyLabeling's point and rectangle marks, on a server holding the text model and the
// generated interactive model; and what a server without the interactive model says. The brush
// RLE is checked pixel by pixel against `sam3 segment --point` with Label Studio's decoder in
// tests/web/labeling_clicks.test.mjs.
#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "sam3/base64.h"
#include "sam3/export.h"
#include "support/serve.h"
#include "support/test_images.h"

namespace {

using nlohmann::json;
using sam3::test::ServerProcess;

const char* kConfig = R"(<View>
  <Image name="image" value="$image"/>
  <BrushLabels name="brush" toName="image"><Label value="Car" predicted_values="red"/><Label value="Sea"/></BrushLabels>
  <PolygonLabels name="outline" toName="image"><Label value="Sea"/></PolygonLabels>
  <KeyPointLabels name="click" toName="image" smart="true"><Label value="Car" smart="true"/><Label value="Sea" smart="true"/></KeyPointLabels>
  <RectangleLabels name="box" toName="image" smart="true"><Label value="Car" smart="true"/></RectangleLabels>
</View>)";

std::string scene_uri() {
  return "data:image/png;base64," + sam3::base64_encode(sam3::encode_rgb_png(sam3::test::make_click_scene().image));
}

// As Label Studio's editor sends them: percent of the image, the image's size beside.
json keypoint(double x, double y, bool positive, const std::string& label = "Car") {
  return {{"original_width", 640},    {"original_height", 480},
          {"image_rotation", 0},      {"value", {{"x", x}, {"y", y}, {"width", 0.3125}, {"keypointlabels", {label}}}},
          {"is_positive", positive},  {"id", "kp" + std::to_string(int(x * 100))},
          {"from_name", "click"},     {"to_name", "image"},
          {"type", "keypointlabels"}, {"origin", "manual"}};
}
json rectangle(double x, double y, double w, double h, bool positive = true) {
  return {{"original_width", 640},
          {"original_height", 480},
          {"image_rotation", 0},
          {"value", {{"x", x}, {"y", y}, {"width", w}, {"height", h}, {"rotation", 0}, {"rectanglelabels", {"Car"}}}},
          {"is_positive", positive},
          {"id", "rect1"},
          {"from_name", "box"},
          {"to_name", "image"},
          {"type", "rectanglelabels"},
          {"origin", "manual"}};
}

httplib::Result post(ServerProcess& server, const std::string& path, const json& body) {
  httplib::Client c("127.0.0.1", server.port());
  c.set_read_timeout(60, 0);
  return c.Post(path, body.dump(), "application/json");
}

json ls_predict(ServerProcess& server, const json& context_result, int expect = 200) {
  const json task = {{"id", 11},
                     {"data", {{"image", scene_uri()}}},
                     {"meta", json::object()},
                     {"annotations", json::array()},
                     {"predictions", json::array()},
                     {"project", 1}};
  auto r = post(server, "/predict",
                {{"tasks", {task}},
                 {"model_version", "x"},
                 {"project", "1.1700000000"},
                 {"label_config", kConfig},
                 {"params", {{"login", nullptr}, {"password", nullptr}, {"context", {{"result", context_result}}}}}});
  EXPECT_TRUE(r);
  if (!r) return {};
  EXPECT_EQ(r->status, expect) << r->body;
  return json::parse(r->body, nullptr, false);
}

json xal_predict(ServerProcess& server, const std::string& model, const json& marks, const std::string& text = "") {
  json params = {{"conf_threshold", 0.5}, {"iou_threshold", 0.0}, {"epsilon_factor", 0.001}, {"marks", marks}};
  if (!text.empty()) params["text_prompt"] = text;
  auto r = post(server, "/v1/predict", {{"model", model}, {"image", scene_uri()}, {"params", params}});
  EXPECT_TRUE(r);
  if (!r) return {};
  EXPECT_EQ(r->status, 200) << r->body;
  return json::parse(r->body, nullptr, false);
}

struct Extent {
  double x0 = 1e9, y0 = 1e9, x1 = -1e9, y1 = -1e9;
};
Extent extent_of(const json& points, double sx = 1, double sy = 1) {
  Extent e;
  for (const auto& p : points) {
    e.x0 = std::min(e.x0, p[0].get<double>() * sx), e.x1 = std::max(e.x1, p[0].get<double>() * sx);
    e.y0 = std::min(e.y0, p[1].get<double>() * sy), e.y1 = std::max(e.y1, p[1].get<double>() * sy);
  }
  return e;
}
void expect_near(const Extent& e, const sam3::test::Rect& r, double tolerance, const std::string& what) {
  EXPECT_NEAR(e.x0, r.x0, tolerance) << what;
  EXPECT_NEAR(e.y0, r.y0, tolerance) << what;
  EXPECT_NEAR(e.x1, r.x1, tolerance) << what;
  EXPECT_NEAR(e.y1, r.y1, tolerance) << what;
}

bool inside(const json& points, double x, double y, double sx = 1, double sy = 1) {
  bool in = false;
  for (size_t i = 0, j = points.size() - 1; i < points.size(); j = i++) {
    const double xi = points[i][0].get<double>() * sx, yi = points[i][1].get<double>() * sy;
    const double xj = points[j][0].get<double>() * sx, yj = points[j][1].get<double>() * sy;
    if ((yi > y) != (yj > y) && x < (xj - xi) * (y - yi) / (yj - yi) + xi) in = !in;
  }
  return in;
}

std::vector<json> of_type(const json& result, const std::string& type) {
  std::vector<json> out;
  for (const auto& r : result["result"]) {
    if (r["type"] == type) out.push_back(r);
  }
  return out;
}

std::string message_of(const json& j) { return j["error"]["message"].get<std::string>(); }

class LabelingClicks : public sam3::test::TextAndClicksServer {
 protected:
  const sam3::test::ClickScene scene_ = sam3::test::make_click_scene();
};

TEST_F(LabelingClicks, LabelStudioKeypointsGiveOneBrushRegionForTheClickedObject) {
  // A click on the left red square (160, 168): 25%, 35%.
  const json out = ls_predict(*server_, json::array({keypoint(25, 35, true)}));
  ASSERT_EQ(out["results"].size(), 1u);
  const auto& result = out["results"][0];
  const auto brushes = of_type(result, "brushlabels");
  ASSERT_EQ(brushes.size(), 1u) << result.dump().substr(0, 600);
  EXPECT_EQ(brushes[0]["value"]["brushlabels"], json::array({"Car"})) << "the keypoint's label";
  EXPECT_EQ(brushes[0]["from_name"], "brush");
  EXPECT_EQ(brushes[0]["original_width"], 640);
  EXPECT_EQ(brushes[0]["original_height"], 480);
  EXPECT_NEAR(brushes[0]["score"].get<double>(), 0.9, 1e-3) << "the predicted IoU of the best candidate";
  EXPECT_NEAR(result["score"].get<double>(), brushes[0]["score"].get<double>(), 1e-9);
  EXPECT_TRUE(of_type(result, "rectanglelabels").empty()) << "Car's rectangle control is a prompt, not an answer";
  EXPECT_TRUE(of_type(result, "polygonlabels").empty()) << "the polygon control has no Car label";

  // A keypoint labelled Sea gives Sea's brush and polygon; the polygon is the clicked square.
  const json sea = ls_predict(*server_, json::array({keypoint(71.875, 35, true, "Sea")}));  // (460, 168)
  const auto polygons = of_type(sea["results"][0], "polygonlabels");
  ASSERT_EQ(polygons.size(), 1u) << sea.dump().substr(0, 600);
  expect_near(extent_of(polygons[0]["value"]["points"], 6.4, 4.8), scene_.red_right, 2, "the clicked square");
  EXPECT_EQ(of_type(sea["results"][0], "brushlabels").size(), 1u);
}

TEST_F(LabelingClicks, LabelStudioRectanglesAreTheObjectsBoxAndNegativeKeypointsCut) {
  // A rectangle around the right square (384, 96, 544, 240): one object, not "everything like it".
  const json out = ls_predict(*server_, json::array({rectangle(60, 20, 25, 30)}));
  const auto brushes = of_type(out["results"][0], "brushlabels");
  ASSERT_EQ(brushes.size(), 1u) << out.dump().substr(0, 600);
  const json sea = ls_predict(*server_, json::array({keypoint(71.875, 35, true, "Sea"), rectangle(60, 20, 25, 30)}));
  const auto polygons = of_type(sea["results"][0], "polygonlabels");
  ASSERT_EQ(polygons.size(), 1u) << "a rectangle and a keypoint are one object";
  expect_near(extent_of(polygons[0]["value"]["points"], 6.4, 4.8), scene_.red_right, 2, "the boxed square");
  EXPECT_EQ(sea["results"][0]["result"][0]["value"]["brushlabels"], json::array({"Sea"})) << "the first mark's label";

  // Two rectangles without keypoints: one object each.
  const json two = ls_predict(*server_, json::array({rectangle(60, 20, 25, 30), rectangle(15, 20, 25, 30)}));
  EXPECT_EQ(of_type(two["results"][0], "brushlabels").size(), 2u);

  // A negative keypoint near the left square's corner (105, 108) cuts the region there.
  const json cut = ls_predict(*server_, json::array({keypoint(25, 35, true, "Sea"), keypoint(16.40625, 22.5, false, "Sea")}));
  const auto cut_polygons = of_type(cut["results"][0], "polygonlabels");
  ASSERT_FALSE(cut_polygons.empty());
  const json& outline = cut_polygons[0]["value"]["points"];
  EXPECT_TRUE(inside(outline, 200, 200, 6.4, 4.8));
  EXPECT_FALSE(inside(outline, 110, 110, 6.4, 4.8)) << "the corner was cut away";
}

TEST_F(LabelingClicks, LabelStudioTextStillGoesToTheTextModel) {
  const json text = {{"from_name", "prompt"}, {"to_name", "image"}, {"type", "textarea"}, {"value", {{"text", {"red"}}}}};
  const json out = ls_predict(*server_, json::array({text}));
  EXPECT_EQ(of_type(out["results"][0], "brushlabels").size(), 2u) << "both red squares: a concept, not a click";
}

TEST_F(LabelingClicks, LabelStudioBadMarksNameTheContextItem) {
  auto j = ls_predict(*server_, json::array({keypoint(25, 35, true), keypoint(120, 35, true)}), 400);
  EXPECT_EQ(j["error"]["code"], "invalid_context");
  EXPECT_NE(message_of(j).find("params.context.result[1] (keypointlabels)'s value.x is 120: outside the image"), std::string::npos)
      << j.dump();
  json not_a_number = keypoint(25, 35, true);
  not_a_number["value"]["y"] = "NaN";
  j = ls_predict(*server_, json::array({not_a_number}), 400);
  EXPECT_NE(message_of(j).find("params.context.result[0] (keypointlabels)'s value.y is \"NaN\", not a number"), std::string::npos)
      << j.dump();
  json no_x = keypoint(25, 35, true);
  no_x["value"].erase("x");
  j = ls_predict(*server_, json::array({no_x}), 400);
  EXPECT_NE(message_of(j).find("has no value.x"), std::string::npos) << j.dump();
  j = ls_predict(*server_, json::array({keypoint(25, 35, false)}), 400);
  EXPECT_NE(message_of(j).find("all negative (params.context.result[0]"), std::string::npos) << j.dump();
  json thousands = json::array();
  for (int i = 0; i < 3000; ++i) thousands.push_back(keypoint(25, 35, true));
  j = ls_predict(*server_, thousands, 400);
  EXPECT_NE(message_of(j).find("3000 keypoints; one object takes at most 64 (the first beyond that is params.context.result[64])"),
            std::string::npos)
      << message_of(j);
  j = ls_predict(*server_, json::array({keypoint(25, 35, true), rectangle(60, 20, 25, 30), rectangle(15, 20, 25, 30)}), 400);
  EXPECT_NE(message_of(j).find("which takes one box"), std::string::npos) << j.dump();
  j = ls_predict(*server_, json::array({rectangle(60, 20, 25, 30, false)}), 400);
  EXPECT_NE(message_of(j).find("params.context.result[0] (rectanglelabels) is a negative rectangle"), std::string::npos) << j.dump();
  j = ls_predict(*server_, json::array({rectangle(90, 20, 25, 30)}), 400);
  EXPECT_NE(message_of(j).find("reaches outside the image"), std::string::npos) << j.dump();
  json boxes = json::array();
  for (int i = 0; i < 65; ++i) boxes.push_back(rectangle(60, 20, 25, 30));
  j = ls_predict(*server_, boxes, 413);
  EXPECT_NE(message_of(j).find("65 objects; this server takes at most 64"), std::string::npos) << j.dump();
}

TEST_F(LabelingClicks, XAnyLabelingListsTheClickModelWithItsPointButtons) {
  httplib::Client c("127.0.0.1", server_->port());
  const json models = json::parse(c.Get("/v1/models")->body);
  ASSERT_TRUE(models["data"].contains("segment_anything_3_clicks")) << models.dump();
  std::vector<std::string> widgets;
  for (const auto& w : models["data"]["segment_anything_3_clicks"]["widgets"]) widgets.push_back(w["name"]);
  for (const char* w : {"button_add_point", "button_remove_point", "button_add_rect", "button_clear", "button_finish_object"}) {
    EXPECT_NE(std::find(widgets.begin(), widgets.end(), w), widgets.end()) << w;
  }
  EXPECT_TRUE(models["data"].contains("segment_anything_3"));
}

TEST_F(LabelingClicks, XAnyLabelingPointAndRectangleMarksGiveOneObjectsPolygonAndBox) {
  const json out = xal_predict(*server_, "segment_anything_3_clicks", {{{"type", "point"}, {"data", {460, 168}}, {"label", 1}}});
  ASSERT_TRUE(out["success"].get<bool>()) << out.dump();
  const auto& shapes = out["data"]["shapes"];
  ASSERT_EQ(shapes.size(), 2u) << shapes.dump().substr(0, 400);
  EXPECT_EQ(shapes[0]["shape_type"], "polygon");
  EXPECT_EQ(shapes[0]["label"], "object");
  EXPECT_EQ(shapes[0]["points"].front(), shapes[0]["points"].back()) << "closed";
  expect_near(extent_of(shapes[0]["points"]), scene_.red_right, 2, "the clicked square's outline");
  EXPECT_EQ(shapes[1]["shape_type"], "rectangle");
  EXPECT_NEAR(shapes[0]["score"].get<double>(), 0.9, 1e-3);

  // A box with a negative point, labelled with the text prompt.
  const json boxed = xal_predict(
      *server_, "segment_anything_3_clicks",
      {{{"type", "rectangle"}, {"data", {230, 230, 90, 90}}, {"label", 1}}, {{"type", "point"}, {"data", {105, 108}}, {"label", 0}}},
      "car");
  ASSERT_TRUE(boxed["success"].get<bool>()) << boxed.dump();
  EXPECT_EQ(boxed["data"]["shapes"][0]["label"], "car");
  const json& outline = boxed["data"]["shapes"][0]["points"];
  EXPECT_LT(extent_of(outline).x1, 225);
  EXPECT_TRUE(inside(outline, 200, 200));
  EXPECT_FALSE(inside(outline, 110, 110)) << "the negative point cut the corner";
  // Two rectangles alone: two objects.
  const json two = xal_predict(*server_, "segment_anything_3_clicks",
                               {{{"type", "rectangle"}, {"data", {90, 90, 230, 230}}, {"label", 1}},
                                {{"type", "rectangle"}, {"data", {390, 90, 530, 230}}, {"label", 1}}});
  EXPECT_EQ(two["data"]["shapes"].size(), 4u);
}

TEST_F(LabelingClicks, XAnyLabelingBadMarksNameTheMark) {
  const auto expect_error = [&](const json& marks, const std::string& text) {
    const json j = xal_predict(*server_, "segment_anything_3_clicks", marks);
    EXPECT_FALSE(j["success"].get<bool>()) << j.dump();
    EXPECT_EQ(j["error"]["code"], "INVALID_REQUEST") << j.dump();
    EXPECT_NE(j["error"]["message"].get<std::string>().find(text), std::string::npos) << j.dump();
  };
  expect_error({{{"type", "point"}, {"data", {160, 168}}, {"label", 1}}, {{"type", "point"}, {"data", {900, 20}}, {"label", 1}}},
               "marks[1] (point 900, 20) is outside the 640x480 image");
  expect_error({{{"type", "point"}, {"data", {"nan", 20}}, {"label", 1}}}, "marks[0]'s data [\"nan\",20] is not [x, y]");
  expect_error({{{"type", "point"}, {"data", {160, 168}}, {"label", 0}}}, "every point mark is negative (marks[0]");
  expect_error({{{"type", "point"}, {"data", {160, 168}}, {"label", 7}}}, "marks[0]'s label is 7");
  expect_error(json::array(), "no point or rectangle mark");
  expect_error({{{"type", "rectangle"}, {"data", {90, 90, 230, 230}}, {"label", 0}}}, "marks[0] is a negative rectangle");
  json thousands = json::array();
  for (int i = 0; i < 2000; ++i) thousands.push_back({{"type", "point"}, {"data", {160, 168}}, {"label", 1}});
  expect_error(thousands, "2000 point marks; one object takes at most 64 (the first beyond that is marks[64])");
  json boxes = json::array();
  for (int i = 0; i < 65; ++i) boxes.push_back({{"type", "rectangle"}, {"data", {90, 90, 230, 230}}, {"label", 1}});
  expect_error(boxes, "65 objects; this server takes at most 64");
  // Points sent to the concept model say where clicks go.
  const json j = xal_predict(*server_, "segment_anything_3", {{{"type", "point"}, {"data", {160, 168}}, {"label", 1}}});
  EXPECT_NE(j["error"]["message"].get<std::string>().find("segment_anything_3_clicks"), std::string::npos) << j.dump();
}

TEST(LabelingClicksTextOnly, WithoutTheInteractiveModelClicksSayHowToGetIt) {
  std::unique_ptr<ServerProcess> server(sam3::test::start_serve("usls", {"--threads", "1"}));
  ASSERT_GT(server->port(), 0);
  const json j = ls_predict(*server, json::array({keypoint(25, 35, true)}), 400);
  EXPECT_EQ(j["error"]["code"], "no_interactive_model");
  EXPECT_NE(message_of(j).find("--interactive-models"), std::string::npos) << j.dump();
  // Rectangles alone stay SAM3 exemplars there ("find things like this").
  const json boxes = ls_predict(*server, json::array({rectangle(60, 20, 25, 30)}));
  EXPECT_FALSE(of_type(boxes["results"][0], "brushlabels").empty());

  httplib::Client c("127.0.0.1", server->port());
  EXPECT_FALSE(json::parse(c.Get("/v1/models")->body)["data"].contains("segment_anything_3_clicks"));
  const json x = xal_predict(*server, "segment_anything_3_clicks", {{{"type", "point"}, {"data", {160, 168}}, {"label", 1}}});
  EXPECT_EQ(x["error"]["code"], "MODEL_NOT_FOUND") << x.dump();
  EXPECT_EQ(server->stop(SIGTERM), 0);
}

}  // namespace
