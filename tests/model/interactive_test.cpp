// The interactive generation on the generated model (tools/make_tracker_model.py), whose
// decoder's behaviour is known: one click = the clicked colour within 250 model pixels, several
// positive clicks or a box = every pixel of that colour (within the box), negative clicks cut
// 100 model pixels around them.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "sam3/error.h"
#include "sam3/image_segmenter.h"
#include "sam3/interactive_segmenter.h"
#include "sam3/model.h"
#include "support/files.h"
#include "support/segmenters.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;
using sam3::test::iou_with_rect;

std::shared_ptr<const sam3::InteractiveSegmenter> tracker(const char* name = "tracker") {
  return sam3::test::load_interactive_segmenter(sam3::test::test_models_dir() / name);
}

bool at(const sam3::Mask& m, int x, int y) { return m.at(x, y); }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), sam3::ErrorCode::kInvalidArgument) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

class Interactive : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = tracker();
    scene_ = new sam3::test::ClickScene(sam3::test::make_click_scene());
    embedding_ = new sam3::ImageEmbedding(model_->encode(scene_->image));
  }
  static void TearDownTestSuite() {
    delete embedding_;
    delete scene_;
    model_.reset();
  }
  static inline std::shared_ptr<const sam3::InteractiveSegmenter> model_;
  static inline sam3::test::ClickScene* scene_ = nullptr;
  static inline sam3::ImageEmbedding* embedding_ = nullptr;
};

TEST(InteractiveLayout, HubLayoutAndGraphsAtTheRootWithADtypeSuffixBothLoad) {
  for (const char* name : {"tracker", "tracker-root-quantized"}) {
    const auto model = tracker(name)->shared_model();
    EXPECT_EQ(model->layout(), sam3::Layout::kTracker) << name;
    EXPECT_EQ(model->kind(), sam3::ModelKind::kInteractive) << name;
    EXPECT_EQ(model->input_size(), 1008) << name;
    EXPECT_NE(model->generation().find("sam3-tracker"), std::string::npos) << model->generation();
  }
  EXPECT_EQ(std::string(sam3::layout_name(sam3::Layout::kTracker)), "sam3-tracker");
  EXPECT_EQ(sam3::Model::load(sam3::test::test_models_dir() / "usls")->kind(), sam3::ModelKind::kText);
  EXPECT_STREQ(sam3::model_kind_name(sam3::ModelKind::kInteractive), "interactive");
  EXPECT_STREQ(sam3::model_kind_name(sam3::ModelKind::kText), "text");
}

TEST(InteractiveLayout, HalfAModelIsNamed) {
  const fs::path dir = sam3::test::fresh_test_dir("sam3_tracker_half");
  fs::create_directories(dir / "onnx");
  const auto src = sam3::test::test_models_dir() / "tracker" / "onnx";
  fs::copy_file(src / "vision_encoder.onnx", dir / "onnx" / "vision_encoder.onnx");
  fs::copy_file(src / "vision_encoder.onnx_data", dir / "onnx" / "vision_encoder.onnx_data");
  try {
    sam3::Model::load(dir);
    ADD_FAILURE() << "loaded half a model";
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), sam3::ErrorCode::kModelNotFound);
    EXPECT_NE(std::string(e.what()).find("prompt_encoder_mask_decoder.onnx"), std::string::npos) << e.what();
  }
}

TEST_F(Interactive, OneClickGivesTheClickedSquareOnly) {
  const auto r = model_->segment(*embedding_, sam3::InteractivePrompt{{{160, 160}}, std::nullopt});
  ASSERT_EQ(r.masks.size(), 1u);
  const auto& m = r.masks[0];
  EXPECT_NEAR(m.score, 0.9f, 1e-5) << "one positive click: candidate 1 has the best predicted IoU";
  EXPECT_GT(iou_with_rect(m.mask, scene_->red_left), 0.95);
  EXPECT_FALSE(at(m.mask, 460, 160)) << "the other red square is not this object";
  EXPECT_NEAR(m.box.x0, 100, 2);
  EXPECT_NEAR(m.box.x1, 220, 2);
  EXPECT_NEAR(m.box.y0, 100, 2);
  EXPECT_NEAR(m.box.y1, 220, 2);
  EXPECT_EQ(m.mask.width(), 640);
  EXPECT_EQ(m.mask.height(), 480);
  EXPECT_GT(r.object_score, 0.9f) << "logit 3 on red";
  EXPECT_EQ(r.prompt.points.size(), 1u);
}

TEST_F(Interactive, TwoPositiveClicksGiveEverythingOfThatColour) {
  const auto r = model_->segment(*embedding_, sam3::InteractivePrompt{{{160, 160}, {460, 160}}, std::nullopt});
  ASSERT_EQ(r.masks.size(), 1u);
  EXPECT_NEAR(r.masks[0].score, 0.75f, 1e-5);
  EXPECT_TRUE(at(r.masks[0].mask, 160, 160));
  EXPECT_TRUE(at(r.masks[0].mask, 460, 160));
  EXPECT_FALSE(at(r.masks[0].mask, 350, 360)) << "blue is another colour";
  EXPECT_NEAR(static_cast<double>(r.masks[0].area), 2 * 14400.0, 2 * 14400.0 * 0.05);
}

TEST_F(Interactive, ANegativeClickCutsAroundIt) {
  const auto plain = model_->segment(*embedding_, sam3::InteractivePrompt{{{160, 160}}, std::nullopt});
  const auto cut = model_->segment(*embedding_, sam3::InteractivePrompt{{{160, 160}, {105, 105, false}}, std::nullopt});
  EXPECT_TRUE(at(plain.masks[0].mask, 110, 110));
  EXPECT_FALSE(at(cut.masks[0].mask, 110, 110)) << "within 100 model pixels of the negative click";
  EXPECT_TRUE(at(cut.masks[0].mask, 200, 200));
  EXPECT_LT(cut.masks[0].area, plain.masks[0].area);
}

TEST_F(Interactive, ABoxAloneGivesTheObjectInIt) {
  const auto r = model_->segment(*embedding_, sam3::InteractivePrompt{{}, sam3::Box{380, 80, 540, 240}});
  ASSERT_EQ(r.masks.size(), 1u);
  EXPECT_NEAR(r.masks[0].score, 0.85f, 1e-5) << "a box: candidate 2 (the colour within the box)";
  EXPECT_GT(iou_with_rect(r.masks[0].mask, scene_->red_right), 0.95);
  ASSERT_TRUE(r.prompt.box.has_value());
}

TEST_F(Interactive, ABoxWithPointsKeepsToTheBox) {
  const auto r = model_->segment(*embedding_, sam3::InteractivePrompt{{{160, 160}}, sam3::Box{90, 90, 230, 230}});
  EXPECT_NEAR(r.masks[0].score, 0.85f, 1e-5);
  EXPECT_GT(iou_with_rect(r.masks[0].mask, scene_->red_left), 0.95);
  EXPECT_FALSE(at(r.masks[0].mask, 460, 160));
}

TEST_F(Interactive, MultimaskGivesAllThreeCandidatesBestFirst) {
  sam3::InteractiveOptions options;
  options.multimask = true;
  const auto r = model_->segment(*embedding_, sam3::InteractivePrompt{{{160, 160}}, std::nullopt}, options);
  ASSERT_EQ(r.masks.size(), 3u);
  EXPECT_NEAR(r.masks[0].score, 0.9f, 1e-5);
  EXPECT_NEAR(r.masks[1].score, 0.75f, 1e-5);
  EXPECT_NEAR(r.masks[2].score, 0.5f, 1e-5);
  EXPECT_TRUE(at(r.masks[1].mask, 460, 160)) << "candidate 2: every red pixel";
  EXPECT_LT(r.masks[2].area, r.masks[0].area) << "candidate 0: within 100 model pixels only";
}

TEST_F(Interactive, SeveralObjectsAreDecodedTogetherInOrder) {
  const auto before = model_->model().stats().decodes;
  const std::vector<sam3::InteractivePrompt> objects = {
      {{{160, 160}}, std::nullopt},        // points only
      {{}, sam3::Box{380, 80, 540, 240}},  // a box alone
      {{{350, 360}}, std::nullopt},        // points only: same run as the first
      {{}, sam3::Box{90, 90, 230, 230}},   // a box alone: same run as the second
  };
  const auto r = model_->segment_objects(*embedding_, objects);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(model_->model().stats().decodes - before, 2) << "one run for the clicks, one for the boxes";
  EXPECT_GT(iou_with_rect(r[0].masks[0].mask, scene_->red_left), 0.95);
  EXPECT_GT(iou_with_rect(r[1].masks[0].mask, scene_->red_right), 0.95);
  EXPECT_TRUE(at(r[2].masks[0].mask, 350, 360));
  EXPECT_FALSE(at(r[2].masks[0].mask, 160, 160));
  EXPECT_GT(iou_with_rect(r[3].masks[0].mask, scene_->red_left), 0.95);
  // Each the same as decoded alone.
  for (size_t i = 0; i < objects.size(); ++i) {
    EXPECT_EQ(model_->segment(*embedding_, objects[i]).masks[0].mask, r[i].masks[0].mask) << "object " << i;
  }
}

TEST_F(Interactive, ClickingTheBackgroundGivesALowObjectScore) {
  const auto r = model_->segment(*embedding_, sam3::InteractivePrompt{{{20, 20}}, std::nullopt});
  EXPECT_LT(r.object_score, 0.1f);
}

TEST_F(Interactive, BadPointsAreRefusedWithTheirPlace) {
  const auto seg = [&](sam3::InteractivePrompt p) { model_->segment(*embedding_, p); };
  auto msg = error_of([&] { seg({{{160, 160}, {700, 20}}, std::nullopt}); });
  EXPECT_NE(msg.find("object 1, point 2 (700, 20) is outside the 640x480 image"), std::string::npos) << msg;
  msg = error_of([&] { seg({{{std::numeric_limits<float>::quiet_NaN(), 3}}, std::nullopt}); });
  EXPECT_NE(msg.find("object 1, point 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not a pair of numbers"), std::string::npos) << msg;
  msg = error_of([&] { seg({{{-1, 3}}, std::nullopt}); });
  EXPECT_NE(msg.find("outside"), std::string::npos) << msg;
  msg = error_of([&] { seg({{{160, 160, false}}, std::nullopt}); });
  EXPECT_NE(msg.find("neither a positive point nor a box"), std::string::npos) << msg;
  msg = error_of([&] { seg({{}, std::nullopt}); });
  EXPECT_NE(msg.find("object 1 has no point and no box"), std::string::npos) << msg;
  msg = error_of([&] { seg({std::vector<sam3::PointPrompt>(5000, {10, 10}), std::nullopt}); });
  EXPECT_NE(msg.find("object 1 has 5000 points; at most 64"), std::string::npos) << msg;
  msg = error_of([&] { seg({{}, sam3::Box{10, 10, 5, 50}}); });
  EXPECT_NE(msg.find("object 1's box"), std::string::npos) << msg;
  msg = error_of([&] {
    model_->segment_objects(
        *embedding_, std::vector<sam3::InteractivePrompt>{{{{1, 1}}, std::nullopt}, {{{2, 2}, {3, 3, false}, {9999, 1}}, std::nullopt}});
  });
  EXPECT_NE(msg.find("object 2, point 3"), std::string::npos) << msg;
  msg = error_of([&] { model_->segment_objects(*embedding_, std::vector<sam3::InteractivePrompt>(300, {{{1, 1}}, std::nullopt})); });
  EXPECT_NE(msg.find("300 objects"), std::string::npos) << msg;
}

// Each facade takes one kind of model: the other kind is refused when the facade is made,
// naming what the model is and what to use instead; embeddings do not cross layouts.
TEST_F(Interactive, EachFacadeRefusesTheOtherKindOfModelAndItsEmbeddings) {
  const auto mismatch_of = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const sam3::Error& e) {
      EXPECT_EQ(e.code(), sam3::ErrorCode::kModelMismatch) << e.what();
      return std::string(e.what());
    }
    ADD_FAILURE() << "no error";
    return std::string();
  };
  auto msg = mismatch_of([&] { sam3::ImageSegmenter{model_->shared_model()}; });
  EXPECT_NE(msg.find("interactive (tracker) model"), std::string::npos) << msg;
  EXPECT_NE(msg.find("InteractiveSegmenter"), std::string::npos) << msg;
  const auto text_model = sam3::Model::load(sam3::test::test_models_dir() / "usls");
  msg = mismatch_of([&] { sam3::InteractiveSegmenter{text_model}; });
  EXPECT_NE(msg.find("not clicks"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ImageSegmenter"), std::string::npos) << msg;
  EXPECT_NE(mismatch_of([&] { sam3::InteractiveSegmenter::load(sam3::test::test_models_dir() / "usls"); }).find("usls"), std::string::npos);
  const sam3::ImageSegmenter text(text_model);
  const auto text_embedding = text.encode(scene_->image);
  msg = error_of([&] { model_->segment(text_embedding, sam3::InteractivePrompt{{{1, 1}}, std::nullopt}); });
  EXPECT_NE(msg.find("made by a usls model"), std::string::npos) << msg;
  msg = error_of([&] { text.segment(*embedding_, sam3::Prompt{"red", {}}); });
  EXPECT_NE(msg.find("made by a sam3-tracker model"), std::string::npos) << msg;
  msg = error_of([&] { sam3::ImageSegmenter{nullptr}; });
  EXPECT_NE(msg.find("needs a loaded model"), std::string::npos) << msg;
}

// One model, one encoder: a facade's encode is the model's, and both facades share its counters.
TEST_F(Interactive, TheFacadeSharesItsModelsEncoderAndCounters) {
  const sam3::InteractiveSegmenter again(model_->shared_model());
  const auto encodes = model_->model().stats().image_encodes;
  const auto embedding = again.encode(scene_->image);
  EXPECT_EQ(model_->model().stats().image_encodes, encodes + 1);
  const auto decodes = model_->model().stats().decodes;
  const auto a = again.segment(embedding, sam3::InteractivePrompt{{{160, 160}}, std::nullopt});
  const auto b = model_->segment(*embedding_, sam3::InteractivePrompt{{{160, 160}}, std::nullopt});
  EXPECT_EQ(model_->model().stats().decodes, decodes + 2);
  EXPECT_EQ(a.masks[0].mask, b.masks[0].mask);
}

TEST(Everything, FindsEachObjectOnce) {
  const auto model = tracker();
  const auto scene = sam3::test::make_everything_scene();
  sam3::EverythingOptions options;
  options.points_per_side = 16;  // the squares are 60 px wide: 16 x 16 clicks land in each (and keep the test quick)
  // A click on a square's edge picks the edge's blended colour, which the generated decoder
  // answers with a 1-pixel sliver: not an object of this scene.
  options.min_area = 200;
  const auto result = model->segment_everything(model->encode(scene.image), options);
  ASSERT_EQ(result.instances.size(), 3u) << "one mask per square; the background has a negative object score";
  int matched = 0;
  for (const auto& rect : {scene.red, scene.green, scene.blue}) {
    for (const auto& inst : result.instances) matched += iou_with_rect(inst.mask, rect) > 0.9;
  }
  EXPECT_EQ(matched, 3);
  for (const auto& inst : result.instances) EXPECT_NEAR(inst.score, 0.9f, 1e-5);
}

// A 20-pixel square between the cells of an 8 x 8 grid is missed on the whole image and found
// by the first crop layer, whose four crops each get their own 8 x 8 grid; the squares seen
// whole by several crops (and by the whole image) come back once.
TEST(Everything, CropLayersFindSmallObjectsAndEachObjectOnce) {
  const auto model = tracker();
  auto scene = sam3::test::make_everything_scene();
  const sam3::test::Rect small{436, 296, 456, 316};
  sam3::test::fill(scene.image, small, 255, 255, 0);
  const auto embedding = model->encode(scene.image);
  sam3::EverythingOptions options;
  options.points_per_side = 8;
  options.min_area = 200;  // edge slivers of blended colours (see FindsEachObjectOnce)
  const auto whole = model->segment_everything(embedding, options);
  ASSERT_EQ(whole.instances.size(), 3u) << "the grid misses the small square";
  for (const auto& inst : whole.instances) EXPECT_LT(iou_with_rect(inst.mask, small), 0.5);

  options.crop_layers = 1;
  const auto cropped = model->segment_everything(scene.image, embedding, options);
  ASSERT_EQ(cropped.instances.size(), 4u) << "each square once, the small one too";
  for (const auto& rect : {scene.red, scene.green, scene.blue, small}) {
    // The decoder leaves out the squares' 1-pixel edge of blended colour: a fifth of the small one.
    const double least = rect.x0 == small.x0 ? 0.75 : 0.9;
    int matches = 0;
    for (const auto& inst : cropped.instances) {
      EXPECT_EQ(inst.mask.width(), 512);
      EXPECT_EQ(inst.mask.height(), 384);
      matches += iou_with_rect(inst.mask, rect) > least;
    }
    EXPECT_EQ(matches, 1) << "square at " << rect.x0 << "," << rect.y0;
  }
  for (size_t i = 1; i < cropped.instances.size(); ++i) {
    EXPECT_GE(cropped.instances[i - 1].score, cropped.instances[i].score) << "best first";
  }
  const std::string msg = error_of([&] { model->segment_everything(embedding, options); });
  EXPECT_NE(msg.find("segment_everything(image, embedding, options)"), std::string::npos) << msg;
  options.crop_layers = sam3::kMaxCropLayers + 1;
  EXPECT_NE(error_of([&] { model->segment_everything(scene.image, embedding, options); }).find("crop_layers"), std::string::npos);
}

TEST(Everything, OptionsAreChecked) {
  const auto model = tracker();
  const auto embedding = model->encode(sam3::test::make_everything_scene().image);
  sam3::EverythingOptions o;
  o.points_per_side = 0;
  EXPECT_NE(error_of([&] { model->segment_everything(embedding, o); }).find("points_per_side"), std::string::npos);
  o = {};
  o.pred_iou_threshold = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(error_of([&] { model->segment_everything(embedding, o); }).find("pred_iou_threshold"), std::string::npos);
  o = {};
  o.pred_iou_threshold = 0.95f;  // above every candidate's predicted IoU
  o.points_per_side = 8;
  EXPECT_TRUE(model->segment_everything(embedding, o).instances.empty());
}

}  // namespace
