// Frame sources: real video files decoded with FFmpeg (pixels, timestamps, stride, rotation,
// errors), folders of images in natural order, frames pushed or pulled one by one.
#include "sam3/video_sources.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "sam3/error.h"
#include "sam3/export.h"
#include "support/error_code.h"
#include "support/files.h"
#include "video_test_support.h"

namespace {

namespace fs = std::filesystem;
using sam3::ErrorCode;
using sam3::test::code_of;
using sam3::test::TempDir;

std::vector<sam3::VideoFrame> read_all(sam3::FrameSource& source) {
  std::vector<sam3::VideoFrame> frames;
  for (int guard = 0; guard < 1000; ++guard) {
    auto f = source.next();
    if (!f) break;
    frames.push_back(std::move(*f));
  }
  return frames;
}

void expect_scene(const sam3::VideoFrame& f, int width, int height, int frame_number) {
  ASSERT_EQ(f.image.width, width);
  ASSERT_EQ(f.image.height, height);
  EXPECT_LT(sam3::test::mean_abs_diff(f.image, sam3::test::scene_frame(width, height, frame_number)), 3.0)
      << "frame " << frame_number << " decoded far from what was encoded";
}

TEST(VideoFileSource, DecodesEveryFrameWithItsPixelsAndTimestamps) {
  TempDir dir("sam3_video");
  const auto times = sam3::test::regular_times(20, 25.0);
  sam3::test::write_scene_video(dir / "clip.mp4", 96, 64, times, "mpeg4");
  auto source = sam3::open_video_file(dir / "clip.mp4");
  EXPECT_EQ(source->info().name, "clip.mp4");
  EXPECT_EQ(source->info().width, 96);
  EXPECT_EQ(source->info().height, 64);
  EXPECT_NEAR(source->info().fps, 25.0, 1e-6);
  EXPECT_EQ(source->info().frame_count, 20);
  const auto frames = read_all(*source);
  ASSERT_EQ(frames.size(), 20u);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(frames[i].index, i);
    EXPECT_NEAR(frames[i].time_s, times[i], 1e-6);
    expect_scene(frames[i], 96, 64, i);
  }
  EXPECT_FALSE(source->next()) << "the end stays the end";
}

TEST(VideoFileSource, KeepsIrregularTimestampsOfH264InMatroska) {
  if (sam3::video_io::find_video_encoder("h264").empty()) GTEST_SKIP() << "no H.264 encoder in this FFmpeg";
  TempDir dir("sam3_video");
  const std::vector<double> times = {0.0, 0.04, 0.1, 0.13, 0.5, 0.52, 0.6, 1.0};
  sam3::test::write_scene_video(dir / "vfr.mkv", 80, 48, times, sam3::video_io::find_video_encoder("h264"));
  auto source = sam3::open_video_file(dir / "vfr.mkv");
  const auto frames = read_all(*source);
  ASSERT_EQ(frames.size(), times.size());
  for (size_t i = 0; i < times.size(); ++i) {
    EXPECT_NEAR(frames[i].time_s, times[i], 1e-6) << "frame " << i;
    expect_scene(frames[i], 80, 48, static_cast<int>(i));
  }
}

TEST(VideoFileSource, StrideAndStartIndexCountFramesOfTheSource) {
  TempDir dir("sam3_video");
  sam3::test::write_scene_video(dir / "clip.mp4", 64, 48, sam3::test::regular_times(14, 10.0), "mpeg4");
  auto every3 = sam3::open_video_file(dir / "clip.mp4", {.every = 3});
  EXPECT_EQ(every3->info().frame_count, 5);  // 0 3 6 9 12
  auto frames = read_all(*every3);
  ASSERT_EQ(frames.size(), 5u);
  for (size_t k = 0; k < frames.size(); ++k) {
    EXPECT_EQ(frames[k].index, static_cast<std::int64_t>(3 * k));
    EXPECT_NEAR(frames[k].time_s, 0.3 * k, 1e-6);
    expect_scene(frames[k], 64, 48, static_cast<int>(3 * k));
  }
  auto resumed = sam3::open_video_file(dir / "clip.mp4", {.every = 3, .start_index = 7});
  EXPECT_EQ(resumed->info().frame_count, 2);  // 9 12
  frames = read_all(*resumed);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].index, 9);
  EXPECT_EQ(frames[1].index, 12);
  expect_scene(frames[1], 64, 48, 12);
  EXPECT_EQ(code_of([&] { sam3::open_video_file(dir / "clip.mp4", {.every = 0}); }), ErrorCode::kInvalidArgument);
}

TEST(VideoFileSource, OddSizesArePaddedByTheEncoderAndDecodeBack) {
  TempDir dir("sam3_video");
  sam3::test::write_scene_video(dir / "odd.mp4", 47, 31, sam3::test::regular_times(3, 25.0), "mpeg4");
  auto source = sam3::open_video_file(dir / "odd.mp4");
  EXPECT_EQ(source->info().width, 48);
  EXPECT_EQ(source->info().height, 32);
  const auto frames = read_all(*source);
  ASSERT_EQ(frames.size(), 3u);
  // The 47x31 picture, then its last column and row repeated.
  const auto expected = sam3::test::scene_frame(47, 31, 2);
  sam3::Image padded{48, 32, std::vector<std::uint8_t>(48 * 32 * 3)};
  for (int y = 0; y < 32; ++y) {
    for (int x = 0; x < 48; ++x) {
      for (int c = 0; c < 3; ++c) padded.rgb[(y * 48 + x) * 3 + c] = expected.rgb[(std::min(y, 30) * 47 + std::min(x, 46)) * 3 + c];
    }
  }
  EXPECT_LT(sam3::test::mean_abs_diff(frames[2].image, padded), 3.0);
}

TEST(VideoFileSource, TurnsFramesAsTheDisplayMatrixSays) {
  TempDir dir("sam3_video");
  sam3::test::write_scene_video(dir / "phone.mp4", 96, 64, sam3::test::regular_times(3, 25.0), "mpeg4", 90);
  auto source = sam3::open_video_file(dir / "phone.mp4");
  EXPECT_EQ(source->info().width, 64);
  EXPECT_EQ(source->info().height, 96);
  const auto frames = read_all(*source);
  ASSERT_EQ(frames.size(), 3u);
  // Turned 90 degrees clockwise: source pixel (x, y) is displayed at (H-1-y, x).
  sam3::Image expected = sam3::test::scene_frame(96, 64, 2);
  sam3::Image turned;
  turned.width = 64;
  turned.height = 96;
  turned.rgb.resize(expected.rgb.size());
  for (int y = 0; y < 64; ++y) {
    for (int x = 0; x < 96; ++x) {
      for (int c = 0; c < 3; ++c) turned.rgb[((x * 64) + (63 - y)) * 3 + c] = expected.rgb[(y * 96 + x) * 3 + c];
    }
  }
  EXPECT_LT(sam3::test::mean_abs_diff(frames[2].image, turned), 3.0);
}

TEST(VideoFileSource, BadFilesAreTypedErrors) {
  TempDir dir("sam3_video");
  EXPECT_EQ(code_of([&] { sam3::open_video_file(dir / "missing.mp4"); }), ErrorCode::kImageUnreadable);
  EXPECT_EQ(code_of([&] { sam3::open_video_file(dir.path()); }), ErrorCode::kImageUnreadable);
  std::ofstream(dir / "notes.mp4") << "these are not the frames you are looking for\n";
  EXPECT_EQ(code_of([&] { sam3::open_video_file(dir / "notes.mp4"); }), ErrorCode::kImageUnsupported);
  {  // a WAV file: a container FFmpeg reads, without a video stream
    std::ofstream wav(dir / "sound.wav", std::ios::binary);
    const std::uint32_t rate = 8000, samples = 800;
    auto u32 = [&](std::uint32_t v) { wav.write(reinterpret_cast<const char*>(&v), 4); };
    auto u16 = [&](std::uint16_t v) { wav.write(reinterpret_cast<const char*>(&v), 2); };
    wav << "RIFF";
    u32(36 + samples * 2);
    wav << "WAVEfmt ";
    u32(16), u16(1), u16(1), u32(rate), u32(rate * 2), u16(2), u16(16);
    wav << "data";
    u32(samples * 2);
    for (std::uint32_t i = 0; i < samples; ++i) u16(static_cast<std::uint16_t>(i * 97));
  }
  try {
    sam3::open_video_file(dir / "sound.wav");
    ADD_FAILURE() << "a sound file opened as a video";
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kImageUnsupported);
    EXPECT_NE(std::string(e.what()).find("no video stream"), std::string::npos) << e.what();
  }
  // A video cut after its header: nothing decodable.
  sam3::test::write_scene_video(dir / "whole.mp4", 64, 48, sam3::test::regular_times(5, 25.0), "mpeg4");
  const std::string bytes = sam3::test::read_file(dir / "whole.mp4");
  std::ofstream(dir / "cut.mp4", std::ios::binary) << bytes.substr(0, 64);
  const auto cut = code_of([&] { sam3::open_video_file(dir / "cut.mp4"); });
  EXPECT_TRUE(cut == ErrorCode::kImageCorrupt || cut == ErrorCode::kImageUnsupported) << sam3::error_code_name(cut);
  EXPECT_EQ(code_of([&] { sam3::open_video_file(dir / "whole.mp4", {.max_pixels = 64 * 48 - 1}); }), ErrorCode::kImageTooLarge);
}

TEST(VideoFileSource, APlaylistNeverMakesFfmpegConnectAnywhere) {
  TempDir dir("sam3_video");
  // A loopback listener the playlist points at: no connection may arrive. (FFmpeg 5.1 limits
  // a local file's playlist to local protocols by itself; sam3 pins "file" whatever the version.)
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t length = sizeof address;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  const std::string url = "http://127.0.0.1:" + std::to_string(ntohs(address.sin_port)) + "/segment.ts";
  std::ofstream(dir / "list.m3u8") << "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n" << url << "\n#EXT-X-ENDLIST\n";
  EXPECT_THROW(sam3::open_video_file(dir / "list.m3u8"), sam3::Error);
  pollfd waiting{listener, POLLIN, 0};
  EXPECT_EQ(::poll(&waiting, 1, 200), 0) << "FFmpeg connected to " << url;
  ::close(listener);
}

TEST(NaturalOrder, NumbersCompareAsNumbers) {
  EXPECT_TRUE(sam3::natural_less("frame2.png", "frame10.png"));
  EXPECT_FALSE(sam3::natural_less("frame10.png", "frame2.png"));
  EXPECT_TRUE(sam3::natural_less("frame9", "frame10"));
  EXPECT_TRUE(sam3::natural_less("a", "a1"));
  EXPECT_TRUE(sam3::natural_less("clip1_frame20", "clip2_frame3"));
  EXPECT_TRUE(sam3::natural_less("x99999999999999999999999", "x100000000000000000000000")) << "no overflow";
  EXPECT_NE(sam3::natural_less("a01", "a1"), sam3::natural_less("a1", "a01")) << "a total order";
  EXPECT_FALSE(sam3::natural_less("same", "same"));
}

void write_png(const fs::path& path, const sam3::Image& image) { sam3::write_file_atomic(path, sam3::encode_rgb_png(image)); }

TEST(ImageFolderSource, YieldsImagesInNaturalOrderAtTheGivenRate) {
  TempDir dir("sam3_video");
  for (int i : {10, 2, 1, 0}) write_png(dir / ("frame" + std::to_string(i) + ".png"), sam3::test::scene_frame(48, 32, i));
  std::ofstream(dir / "notes.txt") << "not a frame";
  fs::create_directories(dir / "sub");
  auto source = sam3::open_image_folder(dir.path(), {.fps = 10});
  EXPECT_EQ(source->info().width, 48);
  EXPECT_EQ(source->info().height, 32);
  EXPECT_EQ(source->info().fps, 10.0);
  EXPECT_EQ(source->info().frame_count, 4);
  const auto frames = read_all(*source);
  ASSERT_EQ(frames.size(), 4u);
  const int expected_scene[] = {0, 1, 2, 10};
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(frames[k].index, k);
    EXPECT_DOUBLE_EQ(frames[k].time_s, k / 10.0);
    EXPECT_EQ(frames[k].image.rgb, sam3::test::scene_frame(48, 32, expected_scene[k]).rgb) << "frame " << k;
  }
  auto every2 = sam3::open_image_folder(dir.path(), {.every = 2});
  EXPECT_EQ(every2->info().fps, 25.0) << "FFmpeg's image2 default rate";
  const auto kept = read_all(*every2);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[1].index, 2);
  EXPECT_DOUBLE_EQ(kept[1].time_s, 2 / 25.0);
  EXPECT_EQ(kept[1].image.rgb, sam3::test::scene_frame(48, 32, 2).rgb);
  auto opened = sam3::open_frame_source(dir.path());
  EXPECT_EQ(opened->info().frame_count, 4) << "the factory opens a folder as a folder";
}

TEST(ImageFolderSource, AFrameOfAnotherSizeIsRefusedByName) {
  TempDir dir("sam3_video");
  write_png(dir / "f1.png", sam3::test::scene_frame(48, 32, 0));
  write_png(dir / "f2.png", sam3::test::scene_frame(48, 32, 1));
  write_png(dir / "f3.png", sam3::test::scene_frame(50, 32, 2));
  auto source = sam3::open_image_folder(dir.path());
  ASSERT_TRUE(source->next());
  ASSERT_TRUE(source->next());
  try {
    source->next();
    ADD_FAILURE() << "a frame of another size was accepted";
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("f3.png"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("50x32"), std::string::npos) << e.what();
  }
}

TEST(ImageFolderSource, MissingOrEmptyFoldersAreTypedErrors) {
  TempDir dir("sam3_video");
  EXPECT_EQ(code_of([&] { sam3::open_image_folder(dir / "nope"); }), ErrorCode::kImageUnreadable);
  std::ofstream(dir / "readme.txt") << "no frames";
  EXPECT_EQ(code_of([&] { sam3::open_image_folder(dir.path()); }), ErrorCode::kInvalidArgument);
}

TEST(ListVideoFiles, VideosOfAFolderInNaturalOrder) {
  TempDir dir("sam3_video");
  for (const char* name : {"clip10.mp4", "clip2.MOV", "clip1.mkv", "notes.txt", "frame.png"}) std::ofstream(dir / name) << "x";
  fs::create_directories(dir / "sub.mp4");
  const auto videos = sam3::list_video_files(dir.path());
  ASSERT_EQ(videos.size(), 3u);
  EXPECT_EQ(videos[0].filename(), "clip1.mkv");
  EXPECT_EQ(videos[1].filename(), "clip2.MOV");
  EXPECT_EQ(videos[2].filename(), "clip10.mp4");
  EXPECT_EQ(code_of([&] { sam3::list_video_files(dir / "nope"); }), ErrorCode::kImageUnreadable);
}

sam3::VideoInfo small_info() {
  sam3::VideoInfo info;
  info.name = "pushed";
  info.width = 8;
  info.height = 4;
  info.fps = 5;
  return info;
}

TEST(PushFrameSource, FramesPushedByOneThreadArePulledByAnother) {
  sam3::PushFrameSource source(small_info(), 2);
  std::thread producer([&] {
    for (int i = 0; i < 10; ++i) source.push(sam3::test::scene_frame(8, 4, i), i == 3 ? std::optional(9.5) : std::nullopt);
    source.close();
  });
  std::vector<sam3::VideoFrame> frames = read_all(source);
  producer.join();
  ASSERT_EQ(frames.size(), 10u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(frames[i].index, i);
    EXPECT_DOUBLE_EQ(frames[i].time_s, i == 3 ? 9.5 : i / 5.0);
    EXPECT_EQ(frames[i].image.rgb, sam3::test::scene_frame(8, 4, i).rgb);
  }
  EXPECT_EQ(code_of([&] { source.push(sam3::test::scene_frame(8, 4, 0)); }), ErrorCode::kInvalidArgument) << "a push after close";
}

TEST(PushFrameSource, AFrameOfAnotherSizeIsRefused) {
  sam3::PushFrameSource source(small_info());
  EXPECT_EQ(code_of([&] { source.push(sam3::test::scene_frame(9, 4, 0)); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([] { sam3::PushFrameSource(sam3::VideoInfo{}); }), ErrorCode::kInvalidArgument);
}

TEST(CallbackFrameSource, PullsUntilTheFunctionSaysEnd) {
  int made = 0;
  sam3::CallbackFrameSource source(small_info(), [&]() -> std::optional<sam3::Image> {
    if (made == 3) return std::nullopt;
    return sam3::test::scene_frame(8, 4, made++);
  });
  const auto frames = read_all(source);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_DOUBLE_EQ(frames[2].time_s, 0.4);
  EXPECT_FALSE(source.next());
  int bad = 0;
  sam3::CallbackFrameSource wrong(small_info(), [&]() -> std::optional<sam3::Image> { return sam3::test::scene_frame(8, 5, bad++); });
  EXPECT_EQ(code_of([&] { wrong.next(); }), ErrorCode::kInvalidArgument);
}

}  // namespace
