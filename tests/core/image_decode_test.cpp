#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <opencv2/imgcodecs.hpp>

#include "sam3/error.h"
#include "support/files.h"
#include "support/error_code.h"
#include "sam3/export.h"
#include "sam3/image.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;

using sam3::test::code_of;

std::vector<std::uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

sam3::Image left_half_red(int w, int h) {
  sam3::Image im{w, h, std::vector<std::uint8_t>(static_cast<size_t>(w) * h * 3, 0)};
  sam3::test::fill(im, {0, 0, w / 2, h}, 255, 0, 0);
  return im;
}

TEST(ImageDecode, PngRoundTripIsRgb) {
  const auto im = left_half_red(6, 4);
  const auto png = bytes_of(sam3::encode_rgb_png(im));
  const auto back = sam3::decode_image(png, "x.png");
  EXPECT_EQ(back.width, 6);
  EXPECT_EQ(back.height, 4);
  EXPECT_EQ(back.rgb, im.rgb) << "channels must come back as R,G,B";
}

TEST(ImageDecode, ExifOrientationIsApplied) {
  // A 40x20 JPEG (left half red) with EXIF orientation 6 = rotate 90 degrees clockwise.
  const std::string jpeg = sam3::encode_rgb_jpeg(left_half_red(40, 20), 95);
  const std::string tiff("MM\0*\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01\0\x06\0\0\0\0\0\0", 26);
  const std::string payload = std::string("Exif\0\0", 6) + tiff;
  const std::string app1 = std::string("\xFF\xE1") + char((payload.size() + 2) >> 8) + char((payload.size() + 2) & 0xFF) + payload;
  const std::string rotated = jpeg.substr(0, 2) + app1 + jpeg.substr(2);
  const auto im = sam3::decode_image(bytes_of(rotated), "rotated.jpg");
  ASSERT_EQ(im.width, 20);
  ASSERT_EQ(im.height, 40);
  EXPECT_GT(im.rgb[(2 * 20 + 10) * 3], 200) << "the red half is now on top";
  EXPECT_LT(im.rgb[(37 * 20 + 10) * 3], 60);
}

TEST(ImageDecode, EveryExifOrientationIsApplied) {
  // 40x20 with a red block in the top-left quarter; where its centre lands for each value.
  sam3::Image im{40, 20, std::vector<std::uint8_t>(40 * 20 * 3, 0)};
  sam3::test::fill(im, {0, 0, 20, 10}, 255, 0, 0);
  const std::string jpeg = sam3::encode_rgb_jpeg(im, 95);
  const int expected[9][2] = {{}, {10, 5}, {30, 5}, {30, 15}, {10, 15}, {5, 10}, {15, 10}, {15, 30}, {5, 30}};
  for (int o = 1; o <= 8; ++o) {
    const std::string tiff = std::string("MM\0*\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01\0", 19) + char(o) + std::string("\0\0\0\0\0\0", 6);
    const std::string payload = std::string("Exif\0\0", 6) + tiff;
    const std::string app1 = std::string("\xFF\xE1") + char((payload.size() + 2) >> 8) + char((payload.size() + 2) & 0xFF) + payload;
    const auto out = sam3::decode_image(bytes_of(jpeg.substr(0, 2) + app1 + jpeg.substr(2)), "o.jpg");
    ASSERT_EQ(out.width, o >= 5 ? 20 : 40) << "orientation " << o;
    const auto [x, y] = std::pair{expected[o][0], expected[o][1]};
    EXPECT_GT(out.rgb[(static_cast<size_t>(y) * out.width + x) * 3], 200) << "orientation " << o;
  }
}

TEST(ImageDecode, DamagedDataIsAnErrorWithTheCodecsReason) {
  const std::string jpeg = sam3::encode_rgb_jpeg(left_half_red(256, 256));
  std::string damaged = jpeg;
  const size_t scan = damaged.find("\xFF\xDA");
  for (size_t k = scan + 200; k < scan + 260; ++k) {
    if (k % 7 == 0) damaged[k] = '\xFF';
  }
  try {
    sam3::decode_image(bytes_of(damaged), "damaged.jpg");
    FAIL() << "a damaged JPEG decoded silently";
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), sam3::ErrorCode::kImageCorrupt);
    EXPECT_NE(std::string(e.what()).find("Corrupt JPEG data"), std::string::npos) << e.what();
  }
}

TEST(ImageDecode, BadInputsAreTypedErrors) {
  EXPECT_EQ(code_of([] { sam3::decode_image({}, "empty.png"); }), sam3::ErrorCode::kImageUnreadable);
  EXPECT_EQ(code_of([] { sam3::decode_image(bytes_of("hello world, not an image"), "a.txt"); }), sam3::ErrorCode::kImageUnsupported);
  EXPECT_EQ(code_of([] { sam3::decode_image(bytes_of("GIF89a\x01\0\x01\0"), "a.gif"); }), sam3::ErrorCode::kImageUnsupported);
  const std::string png = sam3::encode_rgb_png(left_half_red(64, 64));
  EXPECT_EQ(code_of([&] { sam3::decode_image(bytes_of(png.substr(0, 60)), "cut.png"); }), sam3::ErrorCode::kImageCorrupt);
  EXPECT_EQ(code_of([] { sam3::load_image("/nonexistent/photo.jpg"); }), sam3::ErrorCode::kImageUnreadable);
  EXPECT_EQ(code_of([] { sam3::load_image(fs::temp_directory_path()); }), sam3::ErrorCode::kImageUnreadable);
}

TEST(ImageDecode, PixelLimitIsCheckedFromTheHeaderFirst) {
  // A PNG header claiming 100000 x 100000 pixels, with no pixel data at all.
  std::string png = sam3::encode_rgb_png(left_half_red(8, 8));
  const char big[] = {0, 1, char(0x86), char(0xA0)};  // 100000 big-endian
  png.replace(16, 4, big, 4);
  png.replace(20, 4, big, 4);
  const auto crc = static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(png.data() + 12), 17));  // an intact IHDR
  for (int i = 0; i < 4; ++i) png[29 + i] = static_cast<char>(crc >> (24 - 8 * i));
  try {
    sam3::decode_image(bytes_of(png), "huge.png");
    FAIL();
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), sam3::ErrorCode::kImageTooLarge);
    EXPECT_NE(std::string(e.what()).find("huge.png"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("100000x100000"), std::string::npos) << e.what();
  }
  sam3::ImageLoadOptions small;
  small.max_pixels = 63;
  EXPECT_EQ(code_of([&] { sam3::decode_image(bytes_of(sam3::encode_rgb_png(left_half_red(8, 8))), "a.png", small); }),
            sam3::ErrorCode::kImageTooLarge);
  EXPECT_EQ(code_of([&] { sam3::decode_image(bytes_of(sam3::encode_rgb_jpeg(left_half_red(8, 8))), "a.jpg", small); }),
            sam3::ErrorCode::kImageTooLarge);
}

// A little-endian TIFF whose first IFD gives width and height and nothing else.
std::vector<std::uint8_t> tiff_header(std::uint32_t width, std::uint32_t height) {
  std::vector<std::uint8_t> b = {'I', 'I', 42, 0, 8, 0, 0, 0, 2, 0};
  const auto put = [&](std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  for (auto [tag, value] : {std::pair{256u, width}, std::pair{257u, height}}) put(tag, 2), put(4, 2), put(1, 4), put(value, 4);
  put(0, 4);  // no next IFD
  return b;
}

TEST(ImageDecode, TiffSizesAreReadFromTheHeaderBeforeDecoding) {
  // 32000 x 32000, and sizes whose product overflows 64 bits (found by image_decode_fuzz).
  for (auto [w, h] : {std::pair{32000u, 32000u}, std::pair{4294967295u, 4294929407u}}) {
    try {
      sam3::decode_image(tiff_header(w, h), "bomb.tif");
      FAIL() << "TIFF header size not checked";
    } catch (const sam3::Error& e) {
      EXPECT_EQ(e.code(), sam3::ErrorCode::kImageTooLarge) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::to_string(w) + "x" + std::to_string(h)), std::string::npos) << e.what();
    }
  }
  // An IFD offset of 2^32 - 1 (past the end) is not followed.
  auto far = tiff_header(10, 10);
  far[4] = far[5] = far[6] = far[7] = 0xFF;
  EXPECT_EQ(code_of([&] { sam3::decode_image(far, "far.tif"); }), sam3::ErrorCode::kImageCorrupt);
}

TEST(ImageDecode, BigTiffAndWebpWithoutAnImageChunkAreUnsupported) {
  // Bytes OpenCV has no decoder for must never reach it (its fallbacks write temporary files).
  const std::vector<std::uint8_t> bigtiff = {'I', 'I', 43, 0, 8, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(code_of([&] { sam3::decode_image(bigtiff, "big.tif"); }), sam3::ErrorCode::kImageUnsupported);
  EXPECT_EQ(code_of([] { sam3::decode_image(bytes_of(std::string("RIFF\x1a\0\0\0WEBPVP\0IIx", 17)), "odd.webp"); }),
            sam3::ErrorCode::kImageUnsupported);
  // "II*" and a fourth byte other than 0 is no TIFF (found by image_decode_fuzz: it reached
  // OpenCV's DICOM fallback, which aborts the process on some inputs).
  EXPECT_EQ(code_of([] { sam3::decode_image(bytes_of(std::string("II*\x0e\0\0\0\0\x80\xff\xd8\xff", 12)), "x.tif"); }),
            sam3::ErrorCode::kImageUnsupported);
}

TEST(ImageDecode, AJpegWhoseSizeOnlyTheCodecFindsIsCheckedBeforeAllocating) {
  // Found by image_decode_fuzz: a frame header of 65497 x 65496 behind a malformed segment
  // (the header walk gives up there); the decoder once allocated 12.8 GB for it.
  const auto bytes = sam3::read_image_file(fs::path(SAM3_TEST_DATA_DIR) / "fuzz" / "jpeg-65497x65496-hidden-sof.jpg");
  EXPECT_EQ(code_of([&] { sam3::decode_image(bytes, "hidden.jpg"); }), sam3::ErrorCode::kImageTooLarge);
}

TEST(ImageDecode, WebpDecodesWithLibwebpAndBadWebpNeverReachesOtherReaders) {
  const sam3::Image im = left_half_red(32, 16);
  cv::Mat bgr(16, 32, CV_8UC3);
  for (int i = 0; i < 32 * 16; ++i)
    bgr.data[i * 3] = im.rgb[i * 3 + 2], bgr.data[i * 3 + 1] = im.rgb[i * 3 + 1], bgr.data[i * 3 + 2] = im.rgb[i * 3];
  std::vector<std::uint8_t> webp;
  ASSERT_TRUE(cv::imencode(".webp", bgr, webp, {cv::IMWRITE_WEBP_QUALITY, 101}));  // lossless
  const auto back = sam3::decode_image(webp, "x.webp");
  EXPECT_EQ(back.width, 32);
  EXPECT_EQ(back.rgb, im.rgb);
  // Found by image_decode_fuzz: this once went on to OpenCV's DICOM reader, which aborted.
  const auto bad = sam3::read_image_file(fs::path(SAM3_TEST_DATA_DIR) / "fuzz" / "webp-vp8l-reaching-dicom-reader.webp");
  EXPECT_EQ(code_of([&] { sam3::decode_image(bad, "bad.webp"); }), sam3::ErrorCode::kImageCorrupt);
}

TEST(ImageDecode, ARepeatedTiffSizeTagDoesNotHideTheSize) {
  // Found by image_decode_fuzz: a later, malformed ImageWidth entry once hid 15008 x 65535.
  const auto bytes = sam3::read_image_file(fs::path(SAM3_TEST_DATA_DIR) / "fuzz" / "tiff-15008x65535-repeated-width-tag.tif");
  sam3::ImageLoadOptions limit;
  limit.max_pixels = 4'000'000;
  try {
    sam3::decode_image(bytes, "repeated.tif", limit);
    FAIL();
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), sam3::ErrorCode::kImageTooLarge);
    EXPECT_NE(std::string(e.what()).find("15008x65535"), std::string::npos) << e.what();
  }
}

TEST(ImageDecode, TruncatedFilesAreCorruptNotSilentlyGrey) {
  const std::string jpeg = sam3::encode_rgb_jpeg(left_half_red(256, 256));
  const std::string png = sam3::encode_rgb_png(left_half_red(256, 256));
  for (const auto& [name, cut] :
       {std::pair{"half.jpg", jpeg.substr(0, jpeg.size() / 2)}, std::pair{"half.png", png.substr(0, png.size() / 2)}}) {
    try {
      sam3::decode_image(bytes_of(cut), name);
      FAIL() << name << " decoded";
    } catch (const sam3::Error& e) {
      EXPECT_EQ(e.code(), sam3::ErrorCode::kImageCorrupt) << e.what();
      EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    }
  }
  // Bytes after the end-of-image marker (common from some cameras) are not truncation.
  EXPECT_EQ(sam3::decode_image(bytes_of(jpeg + "trailing bytes"), "tail.jpg").width, 256);
}

TEST(ImageDecode, AnimatedWebpIsUnsupportedNotCorrupt) {
  std::string webp = std::string("RIFF") + std::string("\x16\0\0\0", 4) + "WEBPVP8X" + std::string("\x0A\0\0\0", 4) +
                     std::string("\x02\0\0\0", 4) + std::string("\x0F\0\0\x0F\0\0", 6);
  try {
    sam3::decode_image(bytes_of(webp), "anim.webp");
    FAIL();
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), sam3::ErrorCode::kImageUnsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("animated WebP"), std::string::npos) << e.what();
  }
}

TEST(ImageDecode, GarbageAfterASignatureIsCorruptNotTooLarge) {
  // Sizes were read from whatever bytes followed a signature: 0x41414141 a side made these
  // "too large" (image_too_large), where the file is damaged (image_corrupt).
  const std::string junk(120, 'A');
  const std::vector<std::pair<const char*, std::string>> files = {
      {"junk.png", "\x89PNG\r\n\x1a\n" + junk},
      {"junk.jpg", std::string("\xFF\xD8\xFF\xC0\xFF\xFF", 6) + junk},                    // a frame header of garbage
      {"junk.webp", std::string("RIFF\x80\0\0\0WEBPVP8 ", 16) + junk},                    // no VP8 start code
      {"junk-lossless.webp", std::string("RIFF\x80\0\0\0WEBPVP8L", 16) + junk},           // no VP8L signature
      {"junk.bmp", std::string("BM\x20\0\0\0\0\0\0\0\x36\0\0\0\x28\0\0\0", 18) + junk}};  // no BMP depth
  for (const auto& [name, bytes] : files) {
    try {
      sam3::decode_image(bytes_of(bytes), name);
      FAIL() << name << " decoded";
    } catch (const sam3::Error& e) {
      EXPECT_EQ(e.code(), sam3::ErrorCode::kImageCorrupt) << name << ": " << e.what();
    }
  }
  try {
    sam3::decode_image(bytes_of(files[0].second), "junk.png");
  } catch (const sam3::Error& e) {
    EXPECT_NE(std::string(e.what()).find("IHDR"), std::string::npos) << e.what();
  }
  // A damaged IHDR (its CRC no longer matches) gives no size either.
  std::string png = sam3::encode_rgb_png(left_half_red(8, 8));
  png[16] = '\x7f';
  EXPECT_EQ(code_of([&] { sam3::decode_image(bytes_of(png), "bad-ihdr.png"); }), sam3::ErrorCode::kImageCorrupt);
}

TEST(ImageDecode, AnOs2BitmapIsReadWithItsSixteenBitSize) {
  // The 12-byte core header holds 16-bit width and height: read as 32-bit, a 100 x 100 image
  // was 6553700 x 1572865 pixels, "too large".
  const int w = 100, h = 100, stride = (w * 3 + 3) / 4 * 4;
  std::string bmp = "BM";
  const auto put = [&](std::uint32_t v, int n) {
    for (int i = 0; i < n; ++i) bmp.push_back(static_cast<char>(v >> (8 * i)));
  };
  put(26 + stride * h, 4), put(0, 4), put(26, 4);           // file size, reserved, pixel data offset
  put(12, 4), put(w, 2), put(h, 2), put(1, 2), put(24, 2);  // core header: size, width, height, planes, bits
  bmp.append(static_cast<size_t>(stride) * h, '\x40');
  const auto im = sam3::decode_image(bytes_of(bmp), "os2.bmp");
  EXPECT_EQ(im.width, w);
  EXPECT_EQ(im.height, h);
  EXPECT_EQ(im.rgb[0], 0x40);
}

TEST(ImageRead, OnlyRegularFilesWithinTheSizeCap) {
  EXPECT_EQ(code_of([] { sam3::read_image_file("/dev/zero"); }), sam3::ErrorCode::kImageUnreadable);
  const auto p = sam3::test::fresh_test_dir("sam3_cap") / "cap.png";
  sam3::write_file_atomic(p, sam3::encode_rgb_png(left_half_red(64, 64)));
  sam3::ImageLoadOptions tiny;
  tiny.max_file_bytes = 100;
  EXPECT_EQ(code_of([&] { sam3::read_image_file(p, tiny); }), sam3::ErrorCode::kImageTooLarge);
  tiny.max_file_bytes = static_cast<std::int64_t>(fs::file_size(p));
  EXPECT_EQ(sam3::read_image_file(p, tiny).size(), fs::file_size(p)) << "a file of exactly the cap is fine";
}

}  // namespace
