// Label Studio label configs: what is found in them, and what is refused with which message.
#include <gtest/gtest.h>

#include "api_error.h"
#include "protocols/label_studio_config.h"
#include "protocols/label_studio_video.h"

namespace {

using namespace sam3::server::label_studio;
using sam3::server::ApiError;

TEST(LabelStudioConfig, FindsImageControlsLabelsAndTextArea) {
  const auto config = parse_label_config(R"(<View>
    <Header value="Pick"/>
    <Image name="photo" value="$img" zoom="true"/>
    <brushlabels name="masks" toName="photo"><Label value="Car" predicted_values="car, automobile ,"/><Label value="Tree"/></brushlabels>
    <PolygonLabels name="outline" toName="photo"><Label value="Car"/></PolygonLabels>
    <RectangleLabels name="boxes" toName="other"><Label value="Car"/></RectangleLabels>
    <KeyPointLabels name="clicks" toName="photo"><Label value="Car"/></KeyPointLabels>
    <TextArea name="prompt" toName="photo"/>
  </View>)");
  EXPECT_EQ(config.image_name, "photo");
  EXPECT_EQ(config.data_key, "img");
  ASSERT_EQ(config.controls.size(), 2u) << "the rectangle control names another object; keypoints are no output";
  EXPECT_EQ(config.controls[0].kind, RegionKind::kBrush) << "tag names are case-insensitive";
  EXPECT_EQ(config.controls[0].name, "masks");
  ASSERT_EQ(config.controls[0].labels.size(), 2u);
  EXPECT_EQ(config.controls[0].labels[0].prompts, (std::vector<std::string>{"car", "automobile"}));
  EXPECT_EQ(config.controls[0].labels[1].prompts, (std::vector<std::string>{"Tree"})) << "no predicted_values: the value";
  EXPECT_EQ(config.controls[1].kind, RegionKind::kPolygon);
  EXPECT_EQ(config.text_areas, (std::vector<std::string>{"prompt"}));
}

void expect_refused(const std::string& xml, const std::string& code, const std::string& words) {
  try {
    parse_label_config(xml);
    ADD_FAILURE() << "accepted: " << xml;
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.code, code);
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(LabelStudioConfig, RefusesWhatItCannotServeSayingWhy) {
  expect_refused("", "invalid_label_config", "no label config");
  expect_refused("<View><Image name='i' value='$image'>", "invalid_label_config", "not valid XML");
  expect_refused("<View><Text name='t' value='$text'/><Labels name='l' toName='t'/></View>", "unsupported_label_config", "no <Image>");
  expect_refused("<View><Image name='i' value='$image'/><Choices name='c' toName='i'/></View>", "unsupported_label_config",
                 "no <BrushLabels>");
  expect_refused("<View><Image name='i' value='$image'/><BrushLabels name='b' toName='j'><Label value='A'/></BrushLabels></View>",
                 "unsupported_label_config", "toName");
  expect_refused("<View><Image name='i' value='$image'/><BrushLabels name='b' toName='i'/></View>", "unsupported_label_config",
                 "Label value");
}

// The frame rate keyframe times are written with: the <Video> tag's framerate, read as Label
// Studio's editor reads it (Video.js afterCreate), so a time is what the editor itself would write.
TEST(LabelStudioConfig, AVideosFramerateIsReadAsTheEditorReadsIt) {
  const auto rate = [](const std::string& attribute, const nlohmann::ordered_json& data) {
    const auto config =
        parse_video_label_config("<View><Video name='v' value='$video'" + attribute + "/><VideoRectangle name='b' toName='v'/></View>");
    return label_studio_framerate(*config, data);
  };
  const nlohmann::ordered_json none = nlohmann::ordered_json::object();
  EXPECT_EQ(rate(" framerate='25.0'", none), 25.0);
  EXPECT_EQ(rate(" frameRate='29.97'", none), 29.97) << "attribute names are case-insensitive";
  EXPECT_EQ(rate("", none), 24.0) << "the editor's default";
  EXPECT_EQ(rate(" framerate='fast'", none), 24.0) << "not a number";
  EXPECT_EQ(rate(" framerate='0.04'", none), 25.0) << "below 1: a frame's duration";
  EXPECT_EQ(rate(" framerate='$fps'", {{"fps", "30"}}), 30.0) << "a task data key";
  EXPECT_EQ(rate(" framerate='$fps'", {{"fps", 12.5}}), 12.5);
  EXPECT_EQ(rate(" framerate='$fps'", none), 24.0);
}

}  // namespace
