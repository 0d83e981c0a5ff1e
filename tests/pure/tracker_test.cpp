// The interactive model's rules in the pure core (pure/tracker.h) on synthetic file specs and
// decoder outputs, without any runtime: the files' contract, prompt checks with the native
// messages, decoder runs and their tensors, candidate choice, "everything"'s grid, filters and NMS.
#include "pure/tracker.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "pure/tracker_names.h"
#include "sam3/error.h"

namespace {

using sam3::pure::DType;
using sam3::pure::PartSpec;
using sam3::pure::Tensor;
using sam3::pure::TensorView;
using sam3::pure::TensorViews;
using sam3::pure::Tracker;

constexpr int kF = 1, kI64 = 7, kF16 = 10;

PartSpec vision(int type = kF) {
  PartSpec p{"vision_encoder.onnx", {{"pixel_values", type, {1, 3, 1008, 1008}}}, {}};
  for (const char* n : {"image_embeddings.0", "image_embeddings.1", "image_embeddings.2"}) p.outputs.push_back({n, type, {1, 32, 72, 72}});
  return p;
}
PartSpec decoder(int type = kF) {
  PartSpec p{"prompt_encoder_mask_decoder.onnx",
             {{"input_points", type, {1, -1, -1, 2}}, {"input_labels", kI64, {1, -1, -1}}, {"input_boxes", type, {1, -1, 4}}},
             {{"iou_scores", type, {1, -1, 3}}, {"pred_masks", type, {1, -1, 3, 4, 4}}, {"object_score_logits", type, {1, -1, 1}}}};
  for (const char* n : {"image_embeddings.0", "image_embeddings.1", "image_embeddings.2"}) p.inputs.push_back({n, type, {1, 32, 72, 72}});
  return p;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const sam3::Error& e) {
    return e.what();
  }
  return "";
}

std::vector<float> floats(const Tensor& t) {
  std::vector<float> v(t.bytes.size() / 4);
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

TEST(Tracker, TheFilesContractNamesTheMissingTensor) {
  PartSpec bad = decoder();
  bad.inputs.erase(bad.inputs.begin());  // no input_points
  const std::string e = error_of([&] { Tracker(vision(), bad); });
  EXPECT_NE(e.find("input_points"), std::string::npos) << e;
  EXPECT_NE(e.find("prompt_encoder_mask_decoder.onnx"), std::string::npos) << e;
  const Tracker half(vision(kF16), decoder(kF16));
  EXPECT_EQ(half.quirks().back(), "float16 inputs and outputs, converted at the edges");
}

TEST(Tracker, ObjectsAreGroupedByTheirInputsShapesAndScaledToTheModel) {
  const Tracker t(vision(), decoder());
  std::vector<sam3::InteractivePrompt> prompts(4);
  prompts[0].points = {{100, 50, true}};
  prompts[1].box = sam3::Box{10, 20, 110, 120};
  prompts[2].points = {{200, 100, true}};
  prompts[3].points = {{20, 30, true}, {40, 60, false}};
  prompts[3].box = sam3::Box{0, 0, 504, 252};
  const auto runs = t.object_runs(prompts, 504, 252);  // 2x and 4x to the 1008-pixel model
  ASSERT_EQ(runs.size(), 3u) << "the box with points alone; single clicks together; the box alone";
  EXPECT_EQ(runs[0].members, (std::vector<size_t>{3}));
  EXPECT_EQ(runs[0].batch.points, (std::vector<float>{40, 120, 80, 240}));
  EXPECT_EQ(runs[0].batch.labels, (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(runs[0].batch.boxes, (std::vector<float>{0, 0, 1008, 1008}));
  EXPECT_EQ(runs[1].members, (std::vector<size_t>{1})) << "boxes alone: zero points";
  EXPECT_EQ(runs[1].batch.points_per_object, 0);
  EXPECT_EQ(runs[1].batch.point_rows, 1);
  EXPECT_EQ(runs[2].members, (std::vector<size_t>{0, 2}));
  EXPECT_EQ(runs[2].batch.points, (std::vector<float>{200, 200, 400, 400}));

  const auto inputs = t.decoder_inputs(runs[2].batch);
  ASSERT_EQ(inputs.size(), 3u);
  EXPECT_EQ(inputs[0].name, "input_points");
  EXPECT_EQ(inputs[0].shape, (std::vector<std::int64_t>{1, 2, 1, 2}));
  EXPECT_EQ(floats(inputs[0]), (std::vector<float>{200, 200, 400, 400}));
  EXPECT_EQ(inputs[1].type, DType::kInt64);
  EXPECT_EQ(inputs[1].shape, (std::vector<std::int64_t>{1, 2, 1}));
  EXPECT_EQ(inputs[2].shape, (std::vector<std::int64_t>{1, 0, 4}));
}

TEST(Tracker, BadPromptsGiveTheNativeMessages) {
  const Tracker t(vision(), decoder());
  const auto refuse = [&](sam3::InteractivePrompt p) { return error_of([&] { t.object_runs({p}, 640, 480); }); };
  EXPECT_EQ(refuse({{{700, 20, true}}, std::nullopt}),
            "object 1, point 1 (700, 20) is outside the 640x480 image; x must be 0..640 and y 0..480 (pixels)");
  EXPECT_NE(refuse({{{10, 10, false}}, std::nullopt}).find("neither a positive point nor a box"), std::string::npos);
  EXPECT_NE(refuse({{}, sam3::Box{50, 50, 40, 90}}).find("must satisfy 0 <= x0 < x1 <= 640"), std::string::npos);
  EXPECT_NE(refuse({{{NAN, 10, true}}, std::nullopt}).find("is not a pair of numbers"), std::string::npos);
  EXPECT_EQ(error_of([&] { t.object_runs({}, 640, 480); }), "no object: give points and/or a box for at least one object");
  sam3::EverythingOptions o;
  o.points_per_side = 300;
  EXPECT_EQ(error_of([&] { t.everything_runs(o, 640, 480); }), "points_per_side must be 1 to 256");
}

// Decoder outputs for `objects` objects: 3 candidates of 4x4 logits each.
struct Outputs {
  std::vector<float> iou, masks, object;
  TensorViews views(int objects) const {
    TensorViews v;
    v["iou_scores"] = {DType::kFloat, {1, objects, 3}, iou.data(), iou.size()};
    v["pred_masks"] = {DType::kFloat, {1, objects, 3, 4, 4}, masks.data(), masks.size()};
    v["object_score_logits"] = {DType::kFloat, {1, objects, 1}, object.data(), object.size()};
    return v;
  }
};

TEST(Tracker, TheBestCandidateWinsAndMultimaskKeepsAllBestFirst) {
  const Tracker t(vision(), decoder());
  std::vector<sam3::InteractivePrompt> prompts(1);
  prompts[0].points = {{2, 2, true}};
  const auto runs = t.object_runs(prompts, 8, 8);
  Outputs o{{0.2f, 0.9f, 0.5f}, std::vector<float>(48, -5.f), {2.f}};
  for (int k = 0; k < 16; ++k) o.masks[16 + k] = k < 8 ? 5.f : -5.f;  // candidate 2: the top half
  const auto decoded = t.decoded(o.views(1), 1);
  std::vector<sam3::ObjectResult> results(1);
  t.object_results(decoded, runs[0], prompts, {}, 8, 8, results);
  ASSERT_EQ(results[0].masks.size(), 1u);
  EXPECT_FLOAT_EQ(results[0].masks[0].score, 0.9f);
  EXPECT_EQ(results[0].masks[0].area, 32) << "the top half of the 8x8 image";
  EXPECT_NEAR(results[0].object_score, 0.8808f, 1e-4);
  sam3::InteractiveOptions all;
  all.multimask = true;
  std::vector<sam3::ObjectResult> three(1);
  t.object_results(decoded, runs[0], prompts, all, 8, 8, three);
  ASSERT_EQ(three[0].masks.size(), 3u);
  EXPECT_FLOAT_EQ(three[0].masks[1].score, 0.5f);
  EXPECT_FLOAT_EQ(three[0].masks[2].score, 0.2f);
  EXPECT_NE(error_of([&] { t.decoded(o.views(1), 2); }).find("for 2 objects"), std::string::npos);
}

TEST(Tracker, EverythingKeepsConfidentPresentStableMasksOnce) {
  const Tracker t(vision(), decoder());
  sam3::EverythingOptions options;
  options.points_per_side = 2;
  const auto runs = t.everything_runs(options, 8, 8);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].points, (std::vector<float>{252, 252, 756, 252, 252, 756, 756, 756})) << "cell centres, model pixels";
  // Object 0: a confident, stable top half (twice: the NMS keeps one); object 1: not present.
  Outputs o{{0.95f, 0.94f, 0.1f, 0.99f, 0.99f, 0.99f}, std::vector<float>(96, -5.f), {3.f, -3.f}};
  for (int c = 0; c < 2; ++c) {
    for (int k = 0; k < 8; ++k) o.masks[c * 16 + k] = 5.f;
  }
  for (int c = 3; c < 6; ++c) {
    for (int k = 0; k < 16; ++k) o.masks[c * 16 + k] = 5.f;
  }
  const auto kept = t.everything_candidates(t.decoded(o.views(2), 2), options, 8, 8);
  EXPECT_EQ(kept.size(), 2u) << "two confident candidates of the present object; the absent object's dropped";
  const auto once = Tracker::deduplicate(kept, options.box_nms_threshold);
  ASSERT_EQ(once.size(), 1u);
  EXPECT_FLOAT_EQ(once[0].score, 0.95f);
  EXPECT_FLOAT_EQ(sam3::pure::stability_score({2.f, 0.5f, -2.f, -2.f}, 1.f), 0.5f) << "above +1: one; above -1: two";
}

// "Everything" answered differently between identical runs: the candidates of a run are pushed by
// parallel threads in any order, and candidates of equal score and box were kept by that order.
TEST(Tracker, EqualScoresAndBoxesKeepTheSameCandidateWhateverTheOrderFound) {
  const auto candidate = [](std::vector<std::uint32_t> runs) {
    sam3::pure::CompactInstance c;
    c.score = 0.9f;
    c.box = {0, 0, 2, 2};
    c.area = 3;
    c.mask = {4, 4, 0, 0, 2, 2, std::move(runs)};  // a 2x2 window: three of its four pixels, two ways
    return c;
  };
  const std::vector<sam3::pure::CompactInstance> found = {candidate({1, 3}), candidate({0, 3, 1})};
  const auto kept = Tracker::deduplicate(found, 0.7f);
  const auto kept_reversed = Tracker::deduplicate({found[1], found[0]}, 0.7f);
  ASSERT_EQ(kept.size(), 1u) << "one object: the box NMS keeps one";
  ASSERT_EQ(kept_reversed.size(), 1u);
  EXPECT_EQ(kept[0].mask.runs, kept_reversed[0].mask.runs) << "the candidate kept depended on the order the threads found them";
}

TEST(Tracker, FileNamesPickOneDtypeAndNameAMissingHalf) {
  const auto chosen = sam3::pure::choose_tracker_files(
      "m/", {"vision_encoder_fp16.onnx", "prompt_encoder_mask_decoder_fp16.onnx", "vision_encoder_q4.onnx"});
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->at("image"), "vision_encoder_fp16.onnx");
  EXPECT_FALSE(sam3::pure::choose_tracker_files("m/", {"decoder.onnx"}));
  EXPECT_NE(error_of([] { sam3::pure::choose_tracker_files("m/", {"vision_encoder.onnx"}); }).find("incomplete sam3-tracker"),
            std::string::npos);
}

}  // namespace
