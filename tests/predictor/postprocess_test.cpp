#include "predictor/postprocess.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "predictor/mask_overlaps.h"
#include "support/test_images.h"

namespace {

TEST(Postprocess, UpsampleMatchesAlignCornersFalse) {
  const float src[] = {-1.f, 1.f};
  std::uint8_t dst[4];
  sam3::predictor::upsample_threshold(src, 1, 2, 1, 4, 0.f, dst);  // values -1, -0.5, 0.5, 1
  EXPECT_EQ(std::vector<std::uint8_t>(dst, dst + 4), (std::vector<std::uint8_t>{0, 0, 1, 1}));
  sam3::predictor::upsample_threshold(src, 1, 2, 1, 4, 0.6f, dst);
  EXPECT_EQ(std::vector<std::uint8_t>(dst, dst + 4), (std::vector<std::uint8_t>{0, 0, 0, 1}));
}

struct Heads {
  std::vector<float> logits, boxes, masks;
  sam3::predictor::RawHeads view(float presence) {
    return {static_cast<int>(logits.size()), 2, 2, logits.data(), boxes.data(), masks.data(), presence};
  }
};

Heads two_queries() {
  Heads h;
  h.logits = {3.f, -3.f};
  h.boxes = {0.f, 0.f, 0.5f, 0.5f, -0.1f, 0.5f, 1.2f, 1.f};
  h.masks = {5, -5, -5, -5, -5, -5, 5, 5};
  return h;
}

TEST(Postprocess, ScoreIsQueryTimesPresenceAboveThreshold) {
  auto h = two_queries();
  auto out = sam3::predictor::instances_from_raw_heads(h.view(10.f), 8, 4, {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(out[0].score, 1.f / (1.f + std::exp(-3.f)) / (1.f + std::exp(-10.f)), 1e-6);
  EXPECT_FLOAT_EQ(out[0].box.x1, 4.f);
  EXPECT_FLOAT_EQ(out[0].box.y1, 2.f);
  EXPECT_EQ(out[0].mask.width(), 8);
  EXPECT_EQ(out[0].mask.height(), 4);
  // Logit 5 at the top-left cell, -5 elsewhere, upsampled 2x2 -> 4x8: row 0 is positive in
  // columns 0..3 (3.75, 1.25 at columns 2, 3); row 1 mixes 3/4 of row 0 with 1/4 of -5, which
  // leaves column 3 at -0.31. So 4 + 3 pixels.
  EXPECT_EQ(out[0].area, 7);
  // A low presence removes everything although the query itself is confident.
  EXPECT_TRUE(sam3::predictor::instances_from_raw_heads(h.view(-3.f), 8, 4, {}).empty());
}

TEST(Postprocess, BoxesAreClampedToTheImage) {
  auto h = two_queries();
  sam3::SegmentOptions o;
  o.score_threshold = 0.0f;
  auto out = sam3::predictor::instances_from_raw_heads(h.view(10.f), 8, 4, o);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FLOAT_EQ(out[1].box.x0, 0.f);
  EXPECT_FLOAT_EQ(out[1].box.x1, 8.f);
  h.boxes = {0.75f, 0.5f, 0.25f, 0.f, 0.f, 0.f, 1.f, 1.f};  // x1 < x0, y1 < y0
  out = sam3::predictor::instances_from_raw_heads(h.view(10.f), 8, 4, o);
  ASSERT_EQ(out.size(), 2u);
  const auto& b = out[0].box.x1 - out[0].box.x0 == 4.f ? out[0].box : out[1].box;
  EXPECT_FLOAT_EQ(b.x0, 2.f) << "corners ordered";
  EXPECT_FLOAT_EQ(b.x1, 6.f);
  EXPECT_FLOAT_EQ(b.y0, 0.f);
  EXPECT_FLOAT_EQ(b.y1, 2.f);
}

sam3::Instance square(float score, int x0, int y0, int side, int w = 10, int h = 10) {
  sam3::Instance inst;
  inst.score = score;
  std::vector<std::uint8_t> raster(static_cast<size_t>(w) * h, 0);
  for (int y = y0; y < y0 + side; ++y)
    for (int x = x0; x < x0 + side; ++x) raster[static_cast<size_t>(y) * w + x] = 1;
  inst.mask = sam3::Mask::from_raster(w, h, raster);
  inst.area = side * side;
  inst.box = {float(x0), float(y0), float(x0 + side), float(y0 + side)};
  return inst;
}

TEST(Postprocess, FinalizeSortsFiltersAndSuppresses) {
  std::vector<sam3::Instance> v = {square(0.6f, 0, 0, 4), square(0.9f, 1, 1, 4), square(0.7f, 6, 6, 2)};
  sam3::SegmentOptions o;
  sam3::predictor::finalize_instances(v, o);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_FLOAT_EQ(v[0].score, 0.9f);
  EXPECT_FLOAT_EQ(v[2].score, 0.6f);

  o.nms_iou = 0.3f;  // the two overlapping squares have IoU 9/23
  sam3::predictor::finalize_instances(v, o);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_FLOAT_EQ(v[1].score, 0.7f);

  o = {};
  o.min_area = 5;
  sam3::predictor::finalize_instances(v, o);
  ASSERT_EQ(v.size(), 1u);
  o = {};
  std::vector<sam3::Instance> w = {square(0.6f, 0, 0, 4), square(0.9f, 5, 5, 4)};
  o.max_instances = 1;
  sam3::predictor::finalize_instances(w, o);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_FLOAT_EQ(w[0].score, 0.9f);
}

TEST(Postprocess, FinalDetectionsWithAFrozenBoxScaleAreCorrected) {
  auto inst = square(0.9f, 2, 2, 4);
  const std::vector<float> scores = {0.9f};
  const std::vector<float> wrong = {20.f, 20.f, 60.f, 60.f};  // scaled for a bigger image
  sam3::predictor::FinalDetections d;
  d.count = 1, d.mask_h = 10, d.mask_w = 10;
  const auto raster = inst.mask.to_raster();
  d.scores = scores.data(), d.boxes = wrong.data(), d.masks = raster.data();
  int corrected = 0;
  auto out = sam3::predictor::instances_from_final(d, 10, 10, {}, &corrected);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(corrected, 1);
  EXPECT_FLOAT_EQ(out[0].box.x0, 2.f) << "no export side given: the mask's bounds";
  EXPECT_FLOAT_EQ(out[0].box.x1, 6.f);
  const std::vector<float> right = {2.f, 2.f, 6.f, 6.f};
  d.boxes = right.data();
  sam3::predictor::instances_from_final(d, 10, 10, {}, &corrected);
  EXPECT_EQ(corrected, 0);
}

// A 1200x900 image whose object covers most of it: the box a decoder scaled at 1008 px still
// overlaps the mask by more than half (IoU 0.72), yet it is wrong; rescaled by (W/1008, H/1008)
// it is right, and that box (not the mask's pixel bounds) is kept.
TEST(Postprocess, AFrozenScaleBoxThatStillOverlapsItsMaskIsRescaled) {
  const int w = 1200, h = 900;
  std::vector<std::uint8_t> mask(static_cast<size_t>(w) * h, 0);
  for (int y = 45; y < 855; ++y)
    for (int x = 60; x < 1140; ++x) mask[static_cast<size_t>(y) * w + x] = 1;
  const std::vector<float> scores = {0.9f};
  const std::vector<float> frozen = {60.f * 1008 / w, 45.f * 1008 / h, 1140.f * 1008 / w, 855.f * 1008 / h};
  ASSERT_GT(sam3::predictor::box_iou(sam3::Box{frozen[0], frozen[1], frozen[2], std::min(frozen[3], 900.f)}, {60, 45, 1140, 855}), 0.5f)
      << "the case IoU alone lets through";
  sam3::predictor::FinalDetections d;
  d.count = 1, d.mask_h = h, d.mask_w = w;
  d.scores = scores.data(), d.boxes = frozen.data(), d.masks = mask.data();
  d.export_sides = {1008};
  int corrected = 0;
  const auto out = sam3::predictor::instances_from_final(d, w, h, {}, &corrected);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(corrected, 1);
  EXPECT_NEAR(out[0].box.x0, 60, 0.01);
  EXPECT_NEAR(out[0].box.y0, 45, 0.01);
  EXPECT_NEAR(out[0].box.x1, 1140, 0.01);
  EXPECT_NEAR(out[0].box.y1, 855, 0.01);
}

// osam's decoder: normalized boxes, sigmoid probabilities at the model's resolution.
TEST(Postprocess, ProbabilityMasksAreResizedBilinearlyAndCutAtTheMaskThreshold) {
  std::vector<float> probs(8 * 8, 0.f);
  for (int y = 2; y < 6; ++y)
    for (int x = 0; x < 4; ++x) probs[static_cast<size_t>(y) * 8 + x] = 0.9f;
  const std::vector<float> scores = {0.8f};
  const std::vector<float> boxes = {0.f, 0.25f, 0.5f, 0.75f};
  sam3::predictor::FinalDetections d;
  d.count = 1, d.mask_h = 8, d.mask_w = 8;
  d.scores = scores.data(), d.boxes = boxes.data(), d.probabilities = probs.data(), d.normalized_boxes = true;
  int corrected = 0;
  const auto out = sam3::predictor::instances_from_final(d, 80, 40, {}, &corrected);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(corrected, 0) << "the normalized box agrees with the mask";
  EXPECT_FLOAT_EQ(out[0].box.x1, 40.f);
  EXPECT_FLOAT_EQ(out[0].box.y0, 10.f);
  EXPECT_EQ(out[0].mask.width(), 80);
  EXPECT_GT(sam3::test::iou_with_rect(out[0].mask, {0, 10, 40, 30}), 0.9);
}

}  // namespace

namespace {

// Straightforward full-image bilinear + threshold, to check the region-restricted version.
std::vector<std::uint8_t> reference_upsample(const std::vector<float>& src, int sh, int sw, int dh, int dw, float cut) {
  std::vector<std::uint8_t> out(static_cast<size_t>(dh) * dw);
  for (int y = 0; y < dh; ++y) {
    const float fy = std::max((y + 0.5f) * sh / dh - 0.5f, 0.f);
    const int y0 = std::min(static_cast<int>(fy), sh - 1), y1 = std::min(y0 + 1, sh - 1);
    for (int x = 0; x < dw; ++x) {
      const float fx = std::max((x + 0.5f) * sw / dw - 0.5f, 0.f);
      const int x0 = std::min(static_cast<int>(fx), sw - 1), x1 = std::min(x0 + 1, sw - 1);
      const float lx = fx - x0, ly = fy - y0;
      const float top = src[y0 * sw + x0] + lx * (src[y0 * sw + x1] - src[y0 * sw + x0]);
      const float bottom = src[y1 * sw + x0] + lx * (src[y1 * sw + x1] - src[y1 * sw + x0]);
      out[static_cast<size_t>(y) * dw + x] = top + ly * (bottom - top) > cut;
    }
  }
  return out;
}

TEST(Postprocess, RegionRestrictedUpsamplingIsExact) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> noise(-4.f, -0.5f);
  for (int trial = 0; trial < 20; ++trial) {
    const int sh = 9 + trial % 5, sw = 11 + trial % 7, dh = 37 + trial * 3, dw = 23 + trial * 5;
    std::vector<float> src(static_cast<size_t>(sh) * sw);
    for (auto& v : src) v = noise(rng);
    for (int k = 0; k < 1 + trial % 3; ++k) src[rng() % src.size()] = 3.f;  // a few hot cells
    std::vector<std::uint8_t> got(static_cast<size_t>(dh) * dw, 7);
    sam3::predictor::upsample_threshold(src.data(), sh, sw, dh, dw, 0.f, got.data());
    EXPECT_EQ(got, reference_upsample(src, sh, sw, dh, dw, 0.f)) << "trial " << trial;
  }
  std::vector<float> cold(16, -1.f);
  std::vector<std::uint8_t> none(64, 9);
  sam3::predictor::upsample_threshold(cold.data(), 4, 4, 8, 8, 0.f, none.data());
  EXPECT_EQ(none, std::vector<std::uint8_t>(64, 0));
}

}  // namespace

namespace {

// geti-instant-learn's and EfficientSAM3's processor resizes the probabilities, SAM3's the
// logits: on a sharp edge they cut at different pixels, and no presence head means the query
// alone scores.
TEST(Postprocess, ProbabilitiesResizedOrLogitsAndNoPresenceHead) {
  const std::vector<float> logits = {4.f}, boxes = {0.f, 0.f, 1.f, 1.f}, masks = {-10.f, 2.f};
  sam3::predictor::RawHeads h{1, 1, 2, logits.data(), boxes.data(), masks.data(), 0.f};
  h.has_presence = false;
  auto out = sam3::predictor::instances_from_raw_heads(h, 4, 1, {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FLOAT_EQ(out[0].score, 1.f / (1.f + std::exp(-4.f)));
  // At x = 2: 0.25 x -10 + 0.75 x 2 = -1 as a logit; 0.25 x 0.00005 + 0.75 x 0.88 = 0.66 as a probability.
  EXPECT_EQ(out[0].mask.to_raster(), (std::vector<std::uint8_t>{0, 0, 0, 1}));
  h.resize_probabilities = true;
  out = sam3::predictor::instances_from_raw_heads(h, 4, 1, {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].mask.to_raster(), (std::vector<std::uint8_t>{0, 0, 1, 1}));
}

}  // namespace

namespace {

// The overlap rule on masks' bounds gives each shared pixel the owner a per-pixel vote gives:
// the highest priority, ties to the earlier mask (SAM 3.1's non-overlap constraint).
TEST(MaskOverlaps, TheSameOwnerAsAPerPixelVote) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    const int w = 30, h = 20, n = 1 + trial % 6;
    std::vector<std::vector<std::uint8_t>> rasters;
    std::vector<sam3::Mask> masks;
    std::vector<float> priority;
    for (int k = 0; k < n; ++k) {
      std::vector<std::uint8_t> r(static_cast<size_t>(w) * h, 0);
      const int x0 = static_cast<int>(rng() % 20), y0 = static_cast<int>(rng() % 12), side = 3 + static_cast<int>(rng() % 10);
      for (int y = y0; y < std::min(h, y0 + side); ++y)
        for (int x = x0; x < std::min(w, x0 + side); ++x) r[static_cast<size_t>(y) * w + x] = rng() % 5 != 0;
      masks.push_back(sam3::Mask::from_raster(w, h, r));
      rasters.push_back(std::move(r));
      priority.push_back(static_cast<float>(rng() % 3));  // ties on purpose
    }
    sam3::predictor::remove_overlaps(masks, priority);
    for (size_t p = 0; p < static_cast<size_t>(w) * h; ++p) {
      int owner = -1;
      for (int k = 0; k < n; ++k) {
        if (rasters[k][p] && (owner < 0 || priority[k] > priority[owner])) owner = k;
      }
      for (int k = 0; k < n; ++k) {
        EXPECT_EQ(masks[k].at(static_cast<int>(p % w), static_cast<int>(p / w)), k == owner) << "trial " << trial << " mask " << k;
      }
    }
  }
}

}  // namespace
