// Label Studio label configs: what is found in them, and what is refused with which message.
#include <gtest/gtest.h>

#include "api_error.h"
#include "protocols/label_studio_config.h"

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

}  // namespace
