// The answer's mask formats (sam3/result_json.h): each decodes back to the mask it was written
// from (RLE with rle_decode, PNG with sam3's image decoder, polygons rasterised here), and an
// entry's text is the bytes a JSON tree of it dumps.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "sam3/base64.h"
#include "sam3/error.h"
#include "sam3/image.h"
#include "sam3/mask_encodings.h"
#include "sam3/result_json.h"

namespace {

using json = nlohmann::ordered_json;

// A 64 x 48 mask: a frame (a rectangle with a rectangular hole) and a separate square.
sam3::Mask frame_and_square() {
  const int w = 64, h = 48;
  std::vector<std::uint8_t> raster(static_cast<size_t>(w * h), 0);
  for (int y = 4; y < 36; ++y) {
    for (int x = 6; x < 40; ++x) {
      const bool hole = y >= 12 && y < 26 && x >= 14 && x < 30;
      raster[static_cast<size_t>(y * w + x)] = hole ? 0 : 1;
    }
  }
  for (int y = 30; y < 44; ++y) {
    for (int x = 48; x < 60; ++x) raster[static_cast<size_t>(y * w + x)] = 1;
  }
  return sam3::Mask::from_raster(w, h, raster);
}

// Where (x, y) lies against a closed ring given as a flat [x, y, ...] list: 1 inside, 0 on an
// edge, -1 outside (crossings of a ray to the right, the even-odd rule).
int side_of(const json& flat, double x, double y) {
  const size_t n = flat.size() / 2;
  bool inside = false;
  for (size_t i = 0, j = n - 1; i < n; j = i++) {
    const double xi = flat[2 * i], yi = flat[2 * i + 1], xj = flat[2 * j], yj = flat[2 * j + 1];
    const double cross = (xj - xi) * (y - yi) - (yj - yi) * (x - xi);
    if (cross == 0 && std::min(xi, xj) <= x && x <= std::max(xi, xj) && std::min(yi, yj) <= y && y <= std::max(yi, yj)) return 0;
    if ((yi > y) != (yj > y) && x < xi + (y - yi) * (xj - xi) / (yj - yi)) inside = !inside;
  }
  return inside ? 1 : -1;
}

// The rings' pixels: a pixel centre inside or on an outer ring and not strictly inside a hole
// (the rings run through the centres of the mask's boundary pixels).
sam3::Mask rasterise(const json& mask) {
  const int h = mask["size"][0], w = mask["size"][1];
  std::vector<std::uint8_t> raster(static_cast<size_t>(w * h), 0);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      bool in = false;
      for (const auto& ring : mask["polygons"]) in = in || side_of(ring, x, y) >= 0;
      for (const auto& ring : mask["holes"]) in = in && side_of(ring, x, y) < 1;
      raster[static_cast<size_t>(y * w + x)] = in ? 1 : 0;
    }
  }
  return sam3::Mask::from_raster(w, h, raster);
}

TEST(MaskJson, RleDecodesToTheMask) {
  const auto mask = frame_and_square();
  const json j = json::parse(sam3::mask_json(mask));
  EXPECT_EQ(j["size"], json({48, 64}));
  EXPECT_EQ(sam3::rle_decode(j["counts"], 48, 64), mask);
  EXPECT_EQ(j.size(), 2u) << j.dump();
}

TEST(MaskJson, PngDecodesToTheMask) {
  const auto mask = frame_and_square();
  const json j = json::parse(sam3::mask_json(mask, {sam3::MaskFormat::kPng}));
  EXPECT_EQ(j["size"], json({48, 64}));
  const auto bytes = sam3::base64_decode(j["png"].get<std::string>());
  ASSERT_TRUE(bytes);
  const auto image = sam3::decode_image({reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size()}, "mask.png");
  ASSERT_EQ(image.width, 64);
  ASSERT_EQ(image.height, 48);
  std::vector<std::uint8_t> raster(64 * 48);
  for (size_t i = 0; i < raster.size(); ++i) {
    const auto v = image.rgb[3 * i];
    ASSERT_TRUE(v == 0 || v == 255) << "pixel " << i << " is " << int(v);
    raster[i] = v == 255;
  }
  EXPECT_EQ(sam3::Mask::from_raster(64, 48, raster), mask);
}

TEST(MaskJson, PolygonsWithEveryBoundaryPixelRasteriseToTheMask) {
  const auto mask = frame_and_square();
  const json j = json::parse(sam3::mask_json(mask, {sam3::MaskFormat::kPolygon, 0.0}));
  EXPECT_EQ(j["size"], json({48, 64}));
  EXPECT_EQ(j["polygons"].size(), 2u) << "the frame and the square";
  EXPECT_EQ(j["holes"].size(), 1u) << "the frame's hole";
  EXPECT_EQ(rasterise(j), mask);
}

TEST(MaskJson, PolygonToleranceOutOfRangeIsRefused) {
  const auto mask = frame_and_square();
  for (const double t : {-1.0, 100.5, std::numeric_limits<double>::quiet_NaN()}) {
    try {
      sam3::mask_json(mask, {sam3::MaskFormat::kPolygon, t});
      ADD_FAILURE() << "tolerance " << t << " was taken";
    } catch (const sam3::Error& e) {
      EXPECT_EQ(e.code(), sam3::ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("between 0 and 100"), std::string::npos) << e.what();
    }
  }
}

TEST(MaskJson, FormatNamesRoundTrip) {
  for (const auto f : {sam3::MaskFormat::kRle, sam3::MaskFormat::kPng, sam3::MaskFormat::kPolygon}) {
    EXPECT_EQ(sam3::mask_format_named(sam3::mask_format_name(f)), f);
  }
  EXPECT_FALSE(sam3::mask_format_named("RLE"));
  EXPECT_FALSE(sam3::mask_format_named("polygons"));
}

TEST(MaskJson, EntriesAreTheBytesOfTheirTreeInEveryFormat) {
  sam3::PromptResult result;
  result.prompt = {"frame", {{{1.234f, 2.0f, 30.5f, 40.0f}, false}}};
  result.instances.push_back({0.987654f, {6, 4, 60, 44}, frame_and_square(), frame_and_square().area()});
  sam3::ObjectResult object;
  object.prompt.points = {{10.5f, 8.25f, true}};
  object.masks = result.instances;
  object.object_score = 0.5f;
  for (const auto f : {sam3::MaskFormat::kRle, sam3::MaskFormat::kPng, sam3::MaskFormat::kPolygon}) {
    for (const auto& text : {sam3::prompt_result_json(result, {f}), sam3::object_result_json(object, {f}),
                             sam3::everything_result_json(result.instances, {f})}) {
      const json j = json::parse(text);
      EXPECT_EQ(j.dump(), text);
      const auto& mask = j["instances"][0]["mask"];
      EXPECT_TRUE(mask.contains(f == sam3::MaskFormat::kRle ? "counts" : f == sam3::MaskFormat::kPng ? "png" : "polygons")) << text;
    }
  }
  const json entry = json::parse(sam3::prompt_result_json(result));
  EXPECT_EQ(entry["boxes"], json::parse(R"([[1.23, 2.0, 30.5, 40.0, "neg"]])"));
  EXPECT_EQ(entry["instances"][0]["score"], 0.9877);
  EXPECT_EQ(json::parse(sam3::object_result_json(object))["box"], nullptr);
}

}  // namespace
