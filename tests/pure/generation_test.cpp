// The pure core's generation rules on synthetic file specs: the tensors each layout's sessions
// take, the decoder's feeds, and the refusals, without any runtime.
#include "pure/generation.h"

#include <gtest/gtest.h>

#include <cstring>

#include <cmath>

#include "pure/families.h"
#include "pure/families/policies.h"
#include "pure/text_plan.h"
#include "sam3/error.h"

namespace {

using sam3::pure::DType;
using sam3::pure::PartSpec;
using sam3::pure::Tensor;

constexpr int kF = 1, kU8 = 2, kI32 = 6, kI64 = 7, kB = 9;

PartSpec usls_image() {
  PartSpec p{"vision-encoder.onnx", {{"images", kF, {1, 3, 1008, 1008}}}, {}};
  for (const char* n : {"fpn_feat_0", "fpn_feat_1", "fpn_feat_2", "fpn_pos_2", "fpn_feat_3"})
    p.outputs.push_back({n, kF, {1, 256, 72, 72}});
  return p;
}
PartSpec usls_text() {
  return {"text-encoder.onnx",
          {{"input_ids", kI64, {1, 32}}, {"attention_mask", kI64, {1, 32}}},
          {{"text_features", kF, {1, 32, 256}}, {"text_mask", kB, {1, 32}}}};
}
PartSpec usls_decoder() {
  PartSpec p{"decoder.onnx",
             {{"input_boxes", kF, {1, -1, 4}},
              {"input_boxes_labels", kI64, {1, -1}},
              {"text_features", kF, {1, 32, 256}},
              {"text_mask", kB, {1, 32}}},
             {{"pred_masks", kF, {1, 200, 288, 288}},
              {"pred_boxes", kF, {1, 200, 4}},
              {"pred_logits", kF, {1, 200}},
              {"presence_logits", kF, {1, 1}}}};
  for (const char* n : {"fpn_feat_0", "fpn_feat_1", "fpn_feat_2", "fpn_pos_2"}) p.inputs.push_back({n, kF, {1, 256, 72, 72}});
  return p;
}
PartSpec samexporter_image() {
  return {"sam3_image_encoder.onnx",
          {{"image", kU8, {3, 1008, 1008}}},
          {{"backbone_fpn_0", kF, {1, 256, 288, 288}}, {"vision_pos_enc_2", kF, {1, 256, 72, 72}}}};
}
PartSpec samexporter_text() {
  return {"sam3_language_encoder.onnx",
          {{"tokens", kI32, {1, 32}}},
          {{"text_attention_mask", kB, {1, 32}}, {"text_memory", kF, {32, 1, 256}}, {"text_embeds", kF, {32, 1, 1024}}}};
}
PartSpec samexporter_decoder() {
  return {"sam3_decoder.onnx",
          {{"original_height", kI64, {}},
           {"original_width", kI64, {}},
           {"backbone_fpn_0", kF, {1, 256, 288, 288}},
           {"vision_pos_enc_2", kF, {1, 256, 72, 72}},
           {"language_mask", kB, {1, 32}},
           {"language_features", kF, {32, 1, 256}},
           {"box_coords", kF, {1, 1, 4}},
           {"box_labels", kI64, {1, 1}},
           {"box_masks", kB, {1, 1}}},
          {{"boxes", kF, {-1, 4}}, {"scores", kF, {-1}}, {"masks", kB, {-1, 1, -1, -1}}}};
}

template <typename T>
std::vector<T> values(const Tensor& t) {
  std::vector<T> v(t.bytes.size() / sizeof(T));
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

const Tensor& named(const std::vector<Tensor>& ts, const std::string& name) {
  for (const auto& t : ts)
    if (t.name == name) return t;
  throw std::runtime_error("no tensor " + name);
}

// Each layout's own text-mask rule: the usls exports take Hugging Face's attention mask, in
// which "!" (CLIP id 0) is a real token, and end-token padding; samexporter takes SAM3's ids.
TEST(Generation, UslsTextTakesHuggingFacesMaskWithTheExclamationMarkAndEndTokenPadding) {
  const auto g = sam3::pure::Generation::usls(usls_image(), usls_text(), usls_decoder(), nullptr);
  const auto tokenizer = sam3::ClipTokenizer::from_file(SAM3_TEST_CLIP_DIR "/tokenizer.json");
  const auto tokens = tokenizer.encode("stop !~");  // "!~" has no merge: a bare "!" and "~"
  ASSERT_EQ(tokens.length, 5) << "start, stop, !, ~, end";
  ASSERT_EQ(tokens.ids[2], 0) << "a bare \"!\" is CLIP id 0";
  EXPECT_EQ(tokens.mask[2], 0) << "SAM3's rule (the samexporter graphs compute the same) masks it";
  const auto in = g.text_inputs(tokens);
  ASSERT_EQ(in.size(), 2u);
  const auto mask = values<std::int64_t>(named(in, "attention_mask"));
  EXPECT_EQ(mask,
            (std::vector<std::int64_t>{1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  const auto ids = values<std::int64_t>(named(in, "input_ids"));
  EXPECT_EQ(ids[2], 0);
  EXPECT_EQ(ids[4], sam3::kEndOfText);
  EXPECT_EQ(ids[5], sam3::kEndOfText) << "padding is the end token, as Hugging Face's CLIP tokenizer pads";
  EXPECT_EQ(ids[31], sam3::kEndOfText);

  const auto s = sam3::pure::Generation::samexporter(samexporter_image(), samexporter_text(), samexporter_decoder());
  const auto tok = s.text_inputs(tokens);
  ASSERT_EQ(tok.size(), 1u);
  EXPECT_EQ(tok[0].type, DType::kInt32) << "the file's integer type";
  EXPECT_EQ(values<std::int32_t>(tok[0])[5], 0) << "SAM3's padding";
}

TEST(Generation, UslsTextOnlyIsOnePaddingBoxAndBoxesAreNormalizedCenters) {
  const auto g = sam3::pure::Generation::usls(usls_image(), usls_text(), usls_decoder(), nullptr);
  auto in = g.decoder_inputs({}, 200, 100);
  EXPECT_EQ(named(in, "input_boxes").shape, (std::vector<std::int64_t>{1, 1, 4}));
  EXPECT_EQ(values<std::int64_t>(named(in, "input_boxes_labels")), std::vector<std::int64_t>{-10});
  in = g.decoder_inputs({{{20, 10, 120, 90}, true}, {{0, 0, 200, 100}, false}}, 200, 100);
  EXPECT_EQ(values<float>(named(in, "input_boxes")), (std::vector<float>{0.35f, 0.5f, 0.5f, 0.8f, 0.5f, 0.5f, 1.f, 1.f}));
  EXPECT_EQ(values<std::int64_t>(named(in, "input_boxes_labels")), (std::vector<std::int64_t>{1, 0}));
  const auto feeds = g.text_feeds();
  EXPECT_EQ(feeds.at("text_features"), "text_features");
  EXPECT_EQ(g.image_feeds().size(), 4u);
  EXPECT_FALSE(g.keeps_image_output("fpn_feat_3"));
}

TEST(Generation, SamexporterPadsItsSlotsFeedsRenamedTextAndRefusesASecondBox) {
  const auto g = sam3::pure::Generation::samexporter(samexporter_image(), samexporter_text(), samexporter_decoder());
  EXPECT_EQ(g.name(), "samexporter");
  EXPECT_EQ(g.box_limit(), 1);
  const auto in = g.decoder_inputs({}, 640, 480);
  EXPECT_EQ(values<std::uint8_t>(named(in, "box_masks")), std::vector<std::uint8_t>{1}) << "the unused slot masked out";
  EXPECT_EQ(values<std::int64_t>(named(in, "box_labels")), std::vector<std::int64_t>{1});
  EXPECT_EQ(named(in, "original_height").shape, std::vector<std::int64_t>{}) << "a scalar, as the file declares";
  EXPECT_EQ(values<std::int64_t>(named(in, "original_width")), std::vector<std::int64_t>{640});
  const auto feeds = g.text_feeds();
  EXPECT_EQ(feeds.at("language_mask"), "text_attention_mask");
  EXPECT_EQ(feeds.at("language_features"), "text_memory");
  EXPECT_FALSE(feeds.contains("language_embeds")) << "this decoder does not take it";
  try {
    (void)g.decoder_inputs({{{0, 0, 10, 10}, true}, {{5, 5, 20, 20}, true}}, 640, 480);
    FAIL() << "two boxes accepted";
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), sam3::ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("at most 1 exemplar box per prompt"), std::string::npos) << e.what();
  }
}

TEST(Generation, AFileWithoutATensorIsRefusedNamingFileTensorAndWhatItHas) {
  auto text = usls_text();
  text.outputs.pop_back();
  try {
    (void)sam3::pure::Generation::usls(usls_image(), text, usls_decoder(), nullptr);
    FAIL() << "accepted";
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), sam3::ErrorCode::kModelMismatch);
    EXPECT_EQ(std::string(e.what()),
              "text-encoder.onnx: expected output 'text_mask' (bool of rank 2), found outputs: "
              "text_features; this file is not from the layout its name suggests");
  }
}

TEST(Generation, UslsImageIsNormalizedFloatAtTheFilesSize) {
  const auto g = sam3::pure::Generation::usls(usls_image(), usls_text(), usls_decoder(), nullptr);
  std::vector<float> planes(3 * 1008 * 1008, 255.f);
  const auto in = g.image_inputs(planes);
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0].shape, (std::vector<std::int64_t>{1, 3, 1008, 1008}));
  EXPECT_EQ(values<float>(in[0])[0], 1.f);
  std::vector<float> small(12);
  EXPECT_THROW((void)g.image_inputs(small), sam3::Error);
}

TEST(Half, EveryFloat16RoundTripsAndRoundingIsToNearestEven) {
  for (unsigned h = 0; h < 65536; ++h) {
    const float f = sam3::pure::half_to_float(static_cast<std::uint16_t>(h));
    if (f != f) continue;  // NaN
    ASSERT_EQ(sam3::pure::float_to_half(f), h) << h;
  }
  EXPECT_EQ(sam3::pure::float_to_half(1.f + 1.f / 2048), 0x3C00) << "halfway: to the even neighbour";
  EXPECT_EQ(sam3::pure::float_to_half(1.f + 3.f / 2048), 0x3C02);
  EXPECT_EQ(sam3::pure::float_to_half(70000.f), 0x7C00) << "past the largest half: infinity";
}

}  // namespace

namespace {

// SAM 3.1 as ailia publishes it: the image through float16 as its driver computes it, the
// text as SAM3's ids into the grounding graph, boxes sequence-first and possibly none.
sam3::pure::PartSpecs sam31_ailia() {
  PartSpec image{"sam3.1_image_encoder.onnx", {{"image", kF, {1, 3, 1008, 1008}}}, {}};
  PartSpec decoder{
      "sam3.1_grounding.onnx",
      {{"text_tokens", kI64, {1, 32}}, {"box_coords", kF, {-1, 1, 4}}, {"box_labels", kI64, {-1, 1}}, {"box_mask", kB, {1, -1}}},
      {{"pred_masks", kF, {1, 200, 288, 288}},
       {"pred_boxes", kF, {1, 200, 4}},
       {"pred_logits", kF, {1, 200, 1}},
       {"presence_logit_dec", kF, {1, 1}}}};
  for (const char* n : {"fpn0", "fpn1", "fpn2", "pos0", "pos1", "pos2", "prop_fpn0", "prop_fpn1", "prop_fpn2", "prop_pos2"}) {
    image.outputs.push_back({n, kF, {1, 256, 72, 72}});
  }
  for (const char* n : {"fpn0", "fpn1", "fpn2", "pos2"}) decoder.inputs.push_back({n, kF, {1, 256, 72, 72}});
  return {{"image", image}, {"decoder", decoder}};
}

TEST(Sam31Ailia, ImageGoesThroughFloat16AsTheDriverComputesIt) {
  const auto g = sam3::pure::build_generation({sam3::pure::find_family("sam3.1-ailia")}, sam31_ailia());
  EXPECT_STREQ(g.layout(), "sam3.1-ailia");
  EXPECT_FALSE(g.has_text_encoder());
  std::vector<float> planes(3u * 1008 * 1008, 0.f);
  planes[0] = 128.f, planes[1] = 64.f, planes[2] = 255.f, planes[3] = 127.6f;  // 127.6: a resampled value, rounded first
  const auto t = g.image_inputs(planes);
  ASSERT_EQ(t.size(), 1u);
  const auto v = values<float>(t[0]);
  // numpy: ((x/255).astype(float16) - float16(0.5)) / float16(0.5), each step rounded to float16.
  EXPECT_EQ(v[0], 0.00390625f);    // 128/255 = 0.50196 -> 0.501953125; - 0.5; / 0.5
  EXPECT_EQ(v[1], -0.498046875f);  // 64/255 -> 0.2509765625; -0.2490234375 / 0.5
  EXPECT_EQ(v[2], 1.f);
  EXPECT_EQ(v[3], v[0]);
  EXPECT_EQ(v[4], -1.f);
  EXPECT_TRUE(g.keeps_image_output("fpn0") && g.keeps_image_output("pos2"));
  EXPECT_FALSE(g.keeps_image_output("prop_fpn0") || g.keeps_image_output("pos0"));
}

TEST(Sam31Ailia, TextIdsAndSequenceFirstBoxesFeedTheGroundingGraph) {
  const auto g = sam3::pure::build_generation({sam3::pure::find_family("sam3.1-ailia")}, sam31_ailia());
  sam3::TokenizedText tokens;
  tokens.ids.fill(0);
  tokens.ids[0] = 49406, tokens.ids[1] = 736, tokens.ids[2] = 49407;
  tokens.length = 3;
  const auto text = g.text_inputs(tokens);
  ASSERT_EQ(text.size(), 1u);
  EXPECT_EQ(text[0].name, "text_tokens");
  const auto ids = values<std::int64_t>(text[0]);
  EXPECT_EQ(ids[1], 736);
  EXPECT_EQ(ids[3], 0) << "padded with zeros";
  EXPECT_EQ(g.text_feeds().at("text_tokens"), "text_tokens");
  // No boxes: empty tensors, as the driver sends them to ONNX Runtime.
  auto none = g.decoder_inputs({}, 640, 480);
  EXPECT_EQ(named(none, "box_coords").shape, (std::vector<std::int64_t>{0, 1, 4}));
  EXPECT_EQ(named(none, "box_labels").shape, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(named(none, "box_mask").shape, (std::vector<std::int64_t>{1, 0}));
  auto two = g.decoder_inputs({{{0, 0, 320, 240}, true}, {{320, 240, 640, 480}, false}}, 640, 480);
  EXPECT_EQ(named(two, "box_coords").shape, (std::vector<std::int64_t>{2, 1, 4}));
  EXPECT_EQ(values<float>(named(two, "box_coords")), (std::vector<float>{0.25f, 0.25f, 0.5f, 0.5f, 0.75f, 0.75f, 0.5f, 0.5f}));
  EXPECT_EQ(values<std::int64_t>(named(two, "box_labels")), (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(values<std::uint8_t>(named(two, "box_mask")), (std::vector<std::uint8_t>{0, 0}));
}

TEST(Sam31Ailia, CxCyWhBoxesAndItsPresenceOutput) {
  const auto g = sam3::pure::build_generation({sam3::pure::find_family("sam3.1-ailia")}, sam31_ailia());
  // One query of 1 x 2 x 2 mask logits, all positive; box centred (0.5, 0.5), 0.5 x 0.5.
  std::vector<float> masks = {5, 5, 5, 5}, boxes = {0.5f, 0.5f, 0.5f, 0.5f}, logits = {4}, presence = {4};
  sam3::pure::TensorViews out = {{"pred_masks", {DType::kFloat, {1, 1, 2, 2}, masks.data(), 4}},
                                 {"pred_boxes", {DType::kFloat, {1, 1, 4}, boxes.data(), 4}},
                                 {"pred_logits", {DType::kFloat, {1, 1, 1}, logits.data(), 1}},
                                 {"presence_logit_dec", {DType::kFloat, {1, 1}, presence.data(), 1}}};
  const auto found = g.instances(out, 100, 80, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_FLOAT_EQ(found[0].box.x0, 25.f);
  EXPECT_FLOAT_EQ(found[0].box.y0, 20.f);
  EXPECT_FLOAT_EQ(found[0].box.x1, 75.f);
  EXPECT_FLOAT_EQ(found[0].box.y1, 60.f);
  const float s = 1.f / (1.f + std::exp(-4.f));
  EXPECT_FLOAT_EQ(found[0].score, s * s);
}

}  // namespace

namespace {

// The PyTorch EfficientSAM3's suppression: greedy by score, intersection over the smaller.
sam3::Instance square(int x0, int y0, int side, float score) {
  sam3::Instance inst;
  inst.score = score;
  std::vector<std::uint8_t> raster(400, 0);
  for (int y = y0; y < y0 + side; ++y)
    for (int x = x0; x < x0 + side; ++x) raster[static_cast<size_t>(y) * 20 + x] = 1;
  inst.mask = sam3::Mask::from_raster(20, 20, raster);
  inst.area = side * side;
  inst.box = {float(x0), float(y0), float(x0 + side), float(y0 + side)};
  return inst;
}

TEST(IomSuppression, ASmallPartInsideABetterWholeGoesANeighbourStays) {
  std::vector<const sam3::Instance*> all;
  const auto whole = square(0, 0, 10, 0.9f), part = square(2, 2, 3, 0.8f), half_over = square(5, 0, 10, 0.7f),
             apart = square(12, 12, 5, 0.95f);
  const auto dropped = sam3::pure::policy::iom_suppressed({&whole, &part, &half_over, &apart}, 0.5f, 0.f);
  // part: 9 of its 9 pixels inside whole; half_over: 50 of its 100 inside whole (not > 0.5).
  EXPECT_EQ(dropped, (std::vector<bool>{false, true, false, false}));
  // At 0.3 (within one prompt) the half-overlapping one goes too.
  EXPECT_EQ(sam3::pure::policy::iom_suppressed({&whole, &part, &half_over, &apart}, 0.3f, 0.f),
            (std::vector<bool>{false, true, true, false}));
}

// The text plan is the one order of runs both executors follow (ImageSegmenter natively, the
// browser module): per prompt the text encoder, (geometry,) the decoder fed from the embedding
// and the text's outputs; a family whose decoder reads the ids gets them as its own tensors.
using sam3::pure::TextRun;

std::vector<std::pair<TextRun::Session, std::size_t>> walk(sam3::pure::TextPlan& plan, std::vector<TextRun>* runs = nullptr) {
  std::vector<std::pair<TextRun::Session, std::size_t>> order;
  std::vector<float> masks(4 * 4, -10.f), boxes(4, 0.f), logits(1, -10.f), presence(1, -10.f);  // one query, nothing found
  sam3::pure::TensorViews decoded = {{"pred_masks", {sam3::pure::DType::kFloat, {1, 1, 4, 4}, masks.data(), masks.size()}},
                                     {"pred_boxes", {sam3::pure::DType::kFloat, {1, 1, 4}, boxes.data(), boxes.size()}},
                                     {"pred_logits", {sam3::pure::DType::kFloat, {1, 1}, logits.data(), logits.size()}},
                                     {"presence_logits", {sam3::pure::DType::kFloat, {1, 1}, presence.data(), presence.size()}},
                                     {"presence_logit_dec", {sam3::pure::DType::kFloat, {1, 1}, presence.data(), presence.size()}}};
  for (int guard = 0; guard < 100; ++guard) {
    TextRun* run = plan.next();
    if (!run) break;
    order.emplace_back(run->session, run->prompt);
    if (runs) runs->push_back(*run);
    plan.ran(run->session == TextRun::Session::kDecoder ? decoded : sam3::pure::TensorViews{});
  }
  return order;
}

TEST(TextPlan, EachPromptRunsItsTextThenTheDecoderFedFromTheEmbeddingAndTheText) {
  const auto g = sam3::pure::Generation::usls(usls_image(), usls_text(), usls_decoder(), nullptr);
  const auto tokenizer = sam3::ClipTokenizer::from_file(SAM3_TEST_CLIP_DIR "/tokenizer.json");
  sam3::pure::TextPlan plan(g, tokenizer, {{"red", {}}, {"blue", {}}}, {}, 640, 480);
  std::vector<TextRun> runs;
  using S = TextRun::Session;
  EXPECT_EQ(walk(plan, &runs), (std::vector<std::pair<S, std::size_t>>{{S::kText, 0}, {S::kDecoder, 0}, {S::kText, 1}, {S::kDecoder, 1}}));
  EXPECT_EQ(runs[0].text_key, "text:red");
  EXPECT_FALSE(runs[0].wants_outputs) << "no geometry run reads the text's outputs";
  EXPECT_EQ(runs[1].feeds.at("text_features").from, TextRun::Feed::From::kText);
  EXPECT_EQ(runs[1].feeds.at("fpn_feat_2").from, TextRun::Feed::From::kEmbedding);
  EXPECT_EQ(named(runs[1].tensors, "input_boxes").shape, (std::vector<std::int64_t>{1, 1, 4})) << "the padding box";
  EXPECT_EQ(runs[3].text_key, "text:blue");
  const auto results = plan.take_results();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].prompt.text, "blue");
}

TEST(TextPlan, ADecoderThatReadsTheIdsGetsThemAsItsTensorsAndNoTextRun) {
  const auto g = sam3::pure::build_generation({sam3::pure::find_family("sam3.1-ailia")}, sam31_ailia());
  const auto tokenizer = sam3::ClipTokenizer::from_file(SAM3_TEST_CLIP_DIR "/tokenizer.json");
  sam3::pure::TextPlan plan(g, tokenizer, {{"red", {}}}, {}, 640, 480);
  std::vector<TextRun> runs;
  ASSERT_EQ(walk(plan, &runs).size(), 1u);
  EXPECT_EQ(runs[0].session, TextRun::Session::kDecoder);
  EXPECT_EQ(named(runs[0].tensors, "text_tokens").shape, (std::vector<std::int64_t>{1, 32}));
  EXPECT_FALSE(runs[0].feeds.contains("text_tokens"));
}

TEST(TextPlan, EveryPromptIsCheckedBeforeAnythingRuns) {
  const auto g = sam3::pure::Generation::usls(usls_image(), usls_text(), usls_decoder(), nullptr);
  const auto tokenizer = sam3::ClipTokenizer::from_file(SAM3_TEST_CLIP_DIR "/tokenizer.json");
  try {
    sam3::pure::TextPlan plan(g, tokenizer, {{"red", {}}, {"", {{{0, 0, 900, 10}, true}}}}, {}, 640, 480);
    FAIL() << "a box outside the image in the second prompt must be refused";
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), sam3::ErrorCode::kInvalidArgument);
  }
}

}  // namespace
