// The pixel values every decoder gives, against OpenCV and Pillow: 16-bit samples keep their
// high byte (v >> 8), alpha is dropped with the stored colour kept (never composited on
// black), gamma chunks are not applied. Files OpenCV cannot write are made here byte by byte.
#include <gtest/gtest.h>
#include <png.h>
#include <tiffio.h>
#include <webp/encode.h>
#include <zlib.h>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "core/codecs.h"
#include "sam3/image.h"

namespace {

std::array<int, 3> pixel(const sam3::Image& im, int x, int y = 0) {
  const auto* p = &im.rgb[(static_cast<size_t>(y) * im.width + x) * 3];
  return {p[0], p[1], p[2]};
}

// A PNG of one row: `colour_type`, `depth`, the row's samples as stored (big-endian for 16
// bits), and optional PLTE, tRNS and gAMA chunks.
std::vector<std::uint8_t> png_row(int width, int depth, int colour_type, const std::vector<std::uint8_t>& row,
                                  const std::vector<std::uint8_t>& plte = {}, const std::vector<std::uint8_t>& trns = {},
                                  std::uint32_t gamma = 0) {
  std::vector<std::uint8_t> out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  const auto be32 = [](std::uint32_t v) {
    return std::vector<std::uint8_t>{std::uint8_t(v >> 24), std::uint8_t(v >> 16), std::uint8_t(v >> 8), std::uint8_t(v)};
  };
  const auto chunk = [&](const char* type, std::vector<std::uint8_t> data) {
    const auto length = be32(static_cast<std::uint32_t>(data.size()));
    out.insert(out.end(), length.begin(), length.end());
    data.insert(data.begin(), type, type + 4);
    out.insert(out.end(), data.begin(), data.end());
    const auto crc = be32(static_cast<std::uint32_t>(crc32(0, data.data(), static_cast<uInt>(data.size()))));
    out.insert(out.end(), crc.begin(), crc.end());
  };
  auto ihdr = be32(static_cast<std::uint32_t>(width));
  for (auto b : be32(1)) ihdr.push_back(b);
  for (int b : {depth, colour_type, 0, 0, 0}) ihdr.push_back(static_cast<std::uint8_t>(b));
  chunk("IHDR", ihdr);
  if (gamma) chunk("gAMA", be32(gamma));
  if (!plte.empty()) chunk("PLTE", plte);
  if (!trns.empty()) chunk("tRNS", trns);
  std::vector<std::uint8_t> raw = {0};  // filter type none
  raw.insert(raw.end(), row.begin(), row.end());
  std::vector<std::uint8_t> z(compressBound(static_cast<uLong>(raw.size())));
  uLongf zn = static_cast<uLongf>(z.size());
  EXPECT_EQ(compress(z.data(), &zn, raw.data(), static_cast<uLong>(raw.size())), Z_OK);
  z.resize(zn);
  chunk("IDAT", z);
  chunk("IEND", {});
  return out;
}

std::vector<std::uint8_t> be16s(const std::vector<std::uint16_t>& values) {
  std::vector<std::uint8_t> out;
  for (auto v : values) out.push_back(static_cast<std::uint8_t>(v >> 8)), out.push_back(static_cast<std::uint8_t>(v));
  return out;
}

// A little-endian, uncompressed TIFF of one row in one strip: `bits` per sample, `samples` per
// pixel, `photometric`, the row as stored, and the ExtraSamples kind of a last alpha sample.
std::vector<std::uint8_t> tiff_row(int width, int bits, int samples, int photometric, const std::vector<std::uint8_t>& row,
                                   int extra = -1) {
  std::vector<std::uint8_t> b = {'I', 'I', 42, 0, 0, 0, 0, 0};
  const auto put = [&](std::uint32_t v, int n) {
    for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  const auto data_at = static_cast<std::uint32_t>(b.size());
  b.insert(b.end(), row.begin(), row.end());
  if (b.size() % 2) b.push_back(0);
  const auto bits_at = static_cast<std::uint32_t>(b.size());
  for (int i = 0; i < samples; ++i) put(static_cast<std::uint32_t>(bits), 2);
  const auto ifd_at = static_cast<std::uint32_t>(b.size());
  for (int i = 0; i < 4; ++i) b[4 + i] = static_cast<std::uint8_t>(ifd_at >> (8 * i));
  struct Entry {
    std::uint16_t tag, type;
    std::uint32_t count, value;
  };
  std::vector<Entry> entries = {{256, 4, 1, static_cast<std::uint32_t>(width)},
                                {257, 4, 1, 1},
                                {258, 3, static_cast<std::uint32_t>(samples),
                                 samples <= 2 ? static_cast<std::uint32_t>(bits | (samples == 2 ? bits << 16 : 0)) : bits_at},
                                {259, 3, 1, 1},
                                {262, 3, 1, static_cast<std::uint32_t>(photometric)},
                                {273, 4, 1, data_at},
                                {277, 3, 1, static_cast<std::uint32_t>(samples)},
                                {278, 4, 1, 1},
                                {279, 4, 1, static_cast<std::uint32_t>(row.size())},
                                {284, 3, 1, 1}};
  if (extra >= 0) entries.push_back({338, 3, 1, static_cast<std::uint32_t>(extra)});
  put(static_cast<std::uint32_t>(entries.size()), 2);
  for (const auto& e : entries) put(e.tag, 2), put(e.type, 2), put(e.count, 4), put(e.value, 4);
  put(0, 4);
  return b;
}

std::vector<std::uint8_t> le16s(const std::vector<std::uint16_t>& values) {
  std::vector<std::uint8_t> out;
  for (auto v : values) out.push_back(static_cast<std::uint8_t>(v)), out.push_back(static_cast<std::uint8_t>(v >> 8));
  return out;
}

// What OpenCV reads into 8-bit colour, as RGB.
sam3::Image opencv_rgb(const std::vector<std::uint8_t>& bytes) {
  cv::Mat bgr = cv::imdecode(bytes, cv::IMREAD_COLOR), rgb;
  cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
  return {rgb.cols, rgb.rows, std::vector<std::uint8_t>(rgb.data, rgb.data + rgb.total() * 3)};
}

// Values whose high byte and rounded v / 257 differ (0xFF00: 255 and 254; 0xFE00: 254 and
// 253), and 50 % grey, which libpng's simplified reader brightened to 186 as linear light.
const std::vector<std::uint16_t> kSixteen = {0x8000, 0xFF00, 0xFE00, 0x7FFF, 0x0180, 0xFFFF};

TEST(PixelValues, SixteenBitPngKeepsTheHighByteAsOpenCvAndPillowDo) {
  std::vector<std::uint16_t> rgb;
  for (auto v : kSixteen) rgb.insert(rgb.end(), {v, static_cast<std::uint16_t>(v / 2), 0});
  const auto png = png_row(static_cast<int>(kSixteen.size()), 16, PNG_COLOR_TYPE_RGB, be16s(rgb));
  const auto im = sam3::decode_image(png, "16.png");
  for (size_t i = 0; i < kSixteen.size(); ++i) {
    EXPECT_EQ(pixel(im, static_cast<int>(i)), (std::array<int, 3>{kSixteen[i] >> 8, (kSixteen[i] / 2) >> 8, 0})) << i;
  }
  EXPECT_EQ(pixel(im, 0)[0], 128) << "50 % grey read as linear light";
  EXPECT_EQ(im.rgb, opencv_rgb(png).rgb);
  // Grey, and a gAMA chunk (not applied, as by OpenCV and Pillow).
  const auto grey = png_row(static_cast<int>(kSixteen.size()), 16, PNG_COLOR_TYPE_GRAY, be16s(kSixteen), {}, {}, 45455);
  const auto g = sam3::decode_image(grey, "g16.png");
  for (size_t i = 0; i < kSixteen.size(); ++i) EXPECT_EQ(pixel(g, static_cast<int>(i))[1], kSixteen[i] >> 8) << i;
  EXPECT_EQ(g.rgb, opencv_rgb(grey).rgb);
  // A random 16-bit image OpenCV wrote, against OpenCV's reading of it.
  cv::Mat wide(13, 29, CV_16UC3);
  cv::randu(wide, 0, 65535);
  std::vector<std::uint8_t> bytes;
  ASSERT_TRUE(cv::imencode(".png", wide, bytes));
  EXPECT_EQ(sam3::decode_image(bytes, "r16.png").rgb, opencv_rgb(bytes).rgb);
}

TEST(PixelValues, TransparentPixelsKeepTheirColourInEveryDecoder) {
  // PNG: RGBA 8 and 16 bits, grey with alpha, a palette with tRNS; alpha 0 and 128.
  const auto rgba8 = png_row(2, 8, PNG_COLOR_TYPE_RGBA, {200, 100, 50, 0, 10, 20, 30, 128});
  EXPECT_EQ(pixel(sam3::decode_image(rgba8, "a.png"), 0), (std::array<int, 3>{200, 100, 50}));
  EXPECT_EQ(pixel(sam3::decode_image(rgba8, "a.png"), 1), (std::array<int, 3>{10, 20, 30}));
  EXPECT_EQ(sam3::decode_image(rgba8, "a.png").rgb, opencv_rgb(rgba8).rgb);
  const auto rgba16 = png_row(1, 16, PNG_COLOR_TYPE_RGBA, be16s({0xC800, 0x6400, 0x3200, 0}));
  EXPECT_EQ(pixel(sam3::decode_image(rgba16, "a16.png"), 0), (std::array<int, 3>{200, 100, 50}));
  const auto grey_alpha = png_row(1, 8, PNG_COLOR_TYPE_GRAY_ALPHA, {90, 0});
  EXPECT_EQ(pixel(sam3::decode_image(grey_alpha, "ga.png"), 0), (std::array<int, 3>{90, 90, 90}));
  const auto palette = png_row(2, 8, PNG_COLOR_TYPE_PALETTE, {0, 1}, {200, 100, 50, 1, 2, 3}, {0, 255});
  EXPECT_EQ(pixel(sam3::decode_image(palette, "p.png"), 0), (std::array<int, 3>{200, 100, 50}));
  EXPECT_EQ(pixel(sam3::decode_image(palette, "p.png"), 1), (std::array<int, 3>{1, 2, 3}));

  // TIFF: unassociated alpha (libtiff's RGBA reader multiplied it in: black), 8 and 16 bits;
  // associated alpha is stored multiplied already and read as stored.
  const auto unassociated = tiff_row(2, 8, 4, PHOTOMETRIC_RGB, {200, 100, 50, 0, 10, 20, 30, 128}, EXTRASAMPLE_UNASSALPHA);
  EXPECT_EQ(pixel(sam3::decode_image(unassociated, "u.tif"), 0), (std::array<int, 3>{200, 100, 50}));
  EXPECT_EQ(pixel(sam3::decode_image(unassociated, "u.tif"), 1), (std::array<int, 3>{10, 20, 30}));
  const auto unassociated16 = tiff_row(1, 16, 4, PHOTOMETRIC_RGB, le16s({0xC800, 0x6400, 0x3200, 0}), EXTRASAMPLE_UNASSALPHA);
  EXPECT_EQ(pixel(sam3::decode_image(unassociated16, "u16.tif"), 0), (std::array<int, 3>{200, 100, 50}));
  const auto associated = tiff_row(1, 8, 4, PHOTOMETRIC_RGB, {5, 10, 15, 128}, EXTRASAMPLE_ASSOCALPHA);
  EXPECT_EQ(pixel(sam3::decode_image(associated, "a.tif"), 0), (std::array<int, 3>{5, 10, 15}));

  // WebP (libwebp's RGB output drops alpha), written losslessly with the colour under alpha 0 kept.
  WebPConfig config;
  ASSERT_TRUE(WebPConfigInit(&config));
  config.lossless = 1;
  config.exact = 1;
  WebPPicture picture;
  ASSERT_TRUE(WebPPictureInit(&picture));
  picture.use_argb = 1;
  picture.width = 2;
  picture.height = 1;
  const std::uint8_t rgba[] = {200, 100, 50, 0, 10, 20, 30, 128};
  ASSERT_TRUE(WebPPictureImportRGBA(&picture, rgba, 8));
  WebPMemoryWriter writer;
  WebPMemoryWriterInit(&writer);
  picture.writer = WebPMemoryWrite;
  picture.custom_ptr = &writer;
  ASSERT_TRUE(WebPEncode(&config, &picture));
  const std::vector<std::uint8_t> webp(writer.mem, writer.mem + writer.size);
  WebPPictureFree(&picture);
  WebPMemoryWriterClear(&writer);
  EXPECT_EQ(pixel(sam3::decode_image(webp, "a.webp"), 0), (std::array<int, 3>{200, 100, 50}));
  EXPECT_EQ(pixel(sam3::decode_image(webp, "a.webp"), 1), (std::array<int, 3>{10, 20, 30}));

  // BMP (sam3's own reader): a 32-bit pixel's fourth byte, alpha 0, leaves the colour alone.
  std::vector<std::uint8_t> bmp(54, 0);
  const auto put32 = [&](size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) bmp[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
  };
  bmp[0] = 'B', bmp[1] = 'M';
  put32(2, 58), put32(10, 54), put32(14, 40), put32(18, 1), put32(22, 1);
  bmp[26] = 1, bmp[28] = 32;
  bmp.insert(bmp.end(), {50, 100, 200, 0});  // B, G, R, A
  EXPECT_EQ(pixel(sam3::decode_image(bmp, "a.bmp"), 0), (std::array<int, 3>{200, 100, 50}));
}

TEST(PixelValues, SixteenBitTiffKeepsTheHighByteLikeSixteenBitPng) {
  std::vector<std::uint16_t> rgb;
  for (auto v : kSixteen) rgb.insert(rgb.end(), {v, v, v});
  const int n = static_cast<int>(kSixteen.size());
  const auto tif = sam3::decode_image(tiff_row(n, 16, 3, PHOTOMETRIC_RGB, le16s(rgb)), "16.tif");
  const auto grey = sam3::decode_image(tiff_row(n, 16, 1, PHOTOMETRIC_MINISBLACK, le16s(kSixteen)), "g16.tif");
  const auto png = sam3::decode_image(png_row(n, 16, PNG_COLOR_TYPE_RGB, be16s(rgb)), "16.png");
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(pixel(tif, i)[0], kSixteen[static_cast<size_t>(i)] >> 8) << i;
    EXPECT_EQ(pixel(grey, i)[0], kSixteen[static_cast<size_t>(i)] >> 8) << i;
  }
  EXPECT_EQ(tif.rgb, png.rgb) << "one image as TIFF and as PNG";
}

}  // namespace
