// sam3's own BMP reader, the libtiff reader and the libpng/libjpeg writers, checked against
// OpenCV's imgcodecs (the codecs they replace in the core) and hand-made files of the BMP
// variants OpenCV cannot write.
#include <gtest/gtest.h>

#include <functional>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <random>

#include "core/codecs.h"
#include "sam3/error.h"
#include "support/error_code.h"
#include "sam3/image.h"

namespace {

cv::Mat random_bgr(int w, int h, int type = CV_8UC3) {
  cv::Mat m(h, w, type);
  cv::randu(m, 0, type == CV_16UC3 ? 65535 : 255);
  return m;
}

std::vector<std::uint8_t> encoded(const cv::Mat& m, const char* ext) {
  std::vector<std::uint8_t> buf;
  EXPECT_TRUE(cv::imencode(ext, m, buf));
  return buf;
}

// What OpenCV's decoder makes of the bytes, as RGB.
cv::Mat opencv_rgb(const std::vector<std::uint8_t>& bytes) {
  cv::Mat bgr = cv::imdecode(bytes, cv::IMREAD_COLOR), rgb;
  cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
  return rgb;
}

cv::Mat as_mat(const sam3::Image& im) { return cv::Mat(im.height, im.width, CV_8UC3, const_cast<std::uint8_t*>(im.rgb.data())); }

double max_difference(const cv::Mat& a, const cv::Mat& b) {
  double m = 0;
  cv::Mat diff;
  cv::absdiff(a, b, diff);
  cv::minMaxLoc(diff.reshape(1), nullptr, &m);
  return m;
}

using sam3::test::code_of;

// A BMP with a 40-byte info header: `bpp` bits, `compression`, an optional palette (BGRx),
// optional bit-field masks, and `pixels` as stored.
std::vector<std::uint8_t> bmp(int w, int h, int bpp, int compression, const std::vector<std::uint32_t>& palette,
                              const std::vector<std::uint32_t>& masks, const std::vector<std::uint8_t>& pixels) {
  std::vector<std::uint8_t> b(54, 0);
  const auto put32 = [&](size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
  };
  b[0] = 'B', b[1] = 'M';
  put32(14, 40), put32(18, static_cast<std::uint32_t>(w)), put32(22, static_cast<std::uint32_t>(h));
  b[26] = 1, b[28] = static_cast<std::uint8_t>(bpp);
  put32(30, static_cast<std::uint32_t>(compression));
  put32(46, static_cast<std::uint32_t>(palette.size()));
  for (auto m : masks) b.resize(b.size() + 4), put32(b.size() - 4, m);
  for (auto c : palette) b.resize(b.size() + 4), put32(b.size() - 4, c);
  put32(10, static_cast<std::uint32_t>(b.size()));
  b.insert(b.end(), pixels.begin(), pixels.end());
  put32(2, static_cast<std::uint32_t>(b.size()));
  return b;
}

std::array<std::uint8_t, 3> pixel(const sam3::Image& im, int x, int y) {
  const auto* p = &im.rgb[(static_cast<size_t>(y) * im.width + x) * 3];
  return {p[0], p[1], p[2]};
}

TEST(Codecs, BmpFromOpenCvDecodesToTheSamePixels) {
  for (auto [w, h] : {std::pair{37, 23}, std::pair{1, 1}, std::pair{64, 3}}) {
    const cv::Mat bgr = random_bgr(w, h);
    const auto bytes = encoded(bgr, ".bmp");
    const auto im = sam3::decode_image(bytes, "x.bmp");
    EXPECT_EQ(max_difference(as_mat(im), opencv_rgb(bytes)), 0) << w << "x" << h << " 24-bit";
    cv::Mat grey;
    cv::cvtColor(bgr, grey, cv::COLOR_BGR2GRAY);
    const auto grey_bytes = encoded(grey, ".bmp");  // 8-bit with a grey palette
    EXPECT_EQ(max_difference(as_mat(sam3::decode_image(grey_bytes, "g.bmp")), opencv_rgb(grey_bytes)), 0) << "8-bit";
  }
}

TEST(Codecs, BmpPalettesBitFieldsTopDownAndRle) {
  // 1-bit, 3 pixels wide, 2 rows stored bottom-up: row 0 in the file is the bottom row.
  const auto one_bit = sam3::decode_image(bmp(3, 2, 1, 0, {0x000000, 0xff8040}, {}, {0xa0, 0, 0, 0, 0x40, 0, 0, 0}), "1.bmp");
  EXPECT_EQ(pixel(one_bit, 0, 1), (std::array<std::uint8_t, 3>{0xff, 0x80, 0x40}));
  EXPECT_EQ(pixel(one_bit, 1, 1), (std::array<std::uint8_t, 3>{0, 0, 0}));
  EXPECT_EQ(pixel(one_bit, 2, 1), (std::array<std::uint8_t, 3>{0xff, 0x80, 0x40}));
  EXPECT_EQ(pixel(one_bit, 1, 0), (std::array<std::uint8_t, 3>{0xff, 0x80, 0x40}));
  // 16-bit 5-6-5 bit fields, top-down (negative height): pure red, then pure blue.
  const auto rgb565 = sam3::decode_image(bmp(2, -1, 16, 3, {}, {0xf800, 0x07e0, 0x001f}, {0x00, 0xf8, 0x1f, 0x00}), "565.bmp");
  EXPECT_EQ(pixel(rgb565, 0, 0), (std::array<std::uint8_t, 3>{255, 0, 0}));
  EXPECT_EQ(pixel(rgb565, 1, 0), (std::array<std::uint8_t, 3>{0, 0, 255}));
  // RLE8: a run of 3 x index 1, an absolute run (2, 1, 2 + pad), end of line, end of bitmap.
  const std::vector<std::uint8_t> rle = {3, 1, 0, 3, 2, 1, 2, 0, 0, 0, 2, 2, 0, 1};
  const auto rle8 = sam3::decode_image(bmp(6, 2, 8, 1, {0x000000, 0x00ff00, 0x0000ff}, {}, rle), "rle.bmp");
  const std::array<std::uint8_t, 3> green{0, 255, 0}, blue{0, 0, 255}, black{0, 0, 0};
  EXPECT_EQ(pixel(rle8, 0, 1), green);  // the first stored line is the bottom row
  EXPECT_EQ(pixel(rle8, 3, 1), blue);
  EXPECT_EQ(pixel(rle8, 4, 1), green);
  EXPECT_EQ(pixel(rle8, 5, 1), blue);
  EXPECT_EQ(pixel(rle8, 0, 0), blue);
  EXPECT_EQ(pixel(rle8, 2, 0), black);  // never written: palette entry 0
}

TEST(Codecs, DamagedOrExoticBmpIsAClearError) {
  auto truncated = bmp(40, 40, 24, 0, {}, {}, std::vector<std::uint8_t>(100, 7));
  EXPECT_EQ(code_of([&] { sam3::core::decode_bmp(truncated, "t.bmp", 1 << 20); }), sam3::ErrorCode::kImageCorrupt);
  EXPECT_EQ(code_of([] {
              sam3::core::decode_bmp(bmp(4, 4, 2, 0, {0, 0, 0, 0}, {}, std::vector<std::uint8_t>(16)), "2.bmp", 1 << 20);
            }),
            sam3::ErrorCode::kImageUnsupported);
  EXPECT_EQ(code_of([] {
              sam3::core::decode_bmp(bmp(4, 4, 8, 1, {0}, {}, {5, 0}), "cut.bmp", 1 << 20);
            }),
            sam3::ErrorCode::kImageCorrupt);  // RLE data ends before the image
  EXPECT_EQ(code_of([] { sam3::core::decode_bmp(bmp(5000, 5000, 24, 0, {}, {}, {}), "big.bmp", 1000); }), sam3::ErrorCode::kImageTooLarge);
}

TEST(Codecs, TiffEightAndSixteenBitsDecodeAsOpenCvDoes) {
  const cv::Mat bgr = random_bgr(31, 17);
  const auto bytes = encoded(bgr, ".tiff");
  EXPECT_EQ(max_difference(as_mat(sam3::decode_image(bytes, "x.tif")), opencv_rgb(bytes)), 0);
  const auto wide = encoded(random_bgr(9, 5, CV_16UC3), ".tiff");
  EXPECT_LE(max_difference(as_mat(sam3::decode_image(wide, "16.tif")), opencv_rgb(wide)), 1);
  auto cut = bytes;
  cut.resize(cut.size() / 2);
  EXPECT_EQ(code_of([&] { sam3::decode_image(cut, "cut.tif"); }), sam3::ErrorCode::kImageCorrupt);
}

TEST(Codecs, PngAndJpegWritersRoundTrip) {
  cv::Mat values(7, 300, CV_16UC1);
  cv::randu(values, 0, 65535);
  const std::string png16 = sam3::core::encode_png(values.data, values.cols, values.rows, 1, 16);
  const cv::Mat back = cv::imdecode(std::vector<std::uint8_t>(png16.begin(), png16.end()), cv::IMREAD_UNCHANGED);
  ASSERT_EQ(back.type(), CV_16UC1);
  EXPECT_EQ(cv::countNonZero(back != values), 0) << "16-bit PNG values changed";

  const cv::Mat bgr = random_bgr(20, 10);
  cv::Mat rgb;
  cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
  const std::string png = sam3::core::encode_png(rgb.data, 20, 10, 3, 8);
  EXPECT_EQ(max_difference(opencv_rgb({png.begin(), png.end()}), rgb), 0);

  cv::Mat smooth(64, 64, CV_8UC3, cv::Scalar(30, 120, 200));
  const std::string jpeg = sam3::core::encode_jpeg(smooth.data, 64, 64, 90);
  EXPECT_LE(max_difference(opencv_rgb({jpeg.begin(), jpeg.end()}), smooth), 3);
}

}  // namespace
