// A new user's trial of video (session 18): a video file damaged in its middle renumbered every
// later frame (finding 1); a valid variable-rate Matroska file was called "cut short" from an
// estimated count (finding 9); a click past a video's declared end was found only after tracking
// it all (finding 11).
#include <gtest/gtest.h>

#include <fstream>

#include "sam3/error.h"
#include "sam3/log.h"
#include "sam3/video_sources.h"
#include "support/error_code.h"
#include "support/files.h"
#include "video_test_support.h"

namespace {

namespace fs = std::filesystem;
using sam3::test::TempDir;

struct Read {
  std::vector<sam3::VideoFrame> frames;
  std::string warned;
  sam3::VideoInfo info;
};

Read read_warning(const fs::path& path) {
  Read r;
  sam3::set_log_sink([&](sam3::LogLevel level, const std::string& m) {
    if (level == sam3::LogLevel::kWarning) r.warned += m + "\n";
  });
  try {
    auto source = sam3::open_video_file(path);
    r.info = source->info();
    for (int guard = 0; guard < 1000; ++guard) {
      auto f = source->next();
      if (!f) break;
      r.frames.push_back(std::move(*f));
    }
  } catch (const sam3::Error& e) {
    ADD_FAILURE() << e.what();
  }
  sam3::set_log_sink(nullptr);
  return r;
}

// Frames 20, 21 and 22 of an MPEG-4 Part 2 file lose their picture start code: the decoder
// refuses them ("header damaged"), as FFmpeg's own player does.
TEST(DamagedVideo, FramesAfterUndecodableOnesKeepTheirSourceIndexAndTheWarningSaysWhich) {
  TempDir dir("sam3_vdmg");
  constexpr int kFrames = 40;
  sam3::test::write_scene_video(dir / "clip.mp4", 96, 64, sam3::test::regular_times(kFrames, 25.0), "mpeg4");
  std::string bytes = sam3::test::read_file(dir / "clip.mp4");
  const std::string vop("\x00\x00\x01\xb6", 4);
  std::vector<size_t> starts;
  for (size_t at = bytes.find(vop); at != std::string::npos; at = bytes.find(vop, at + 4)) starts.push_back(at);
  ASSERT_EQ(starts.size(), static_cast<size_t>(kFrames)) << "one picture start code a frame";
  for (int k : {20, 21, 22}) bytes[starts[k] + 3] = '\x00';
  std::ofstream(dir / "damaged.mp4", std::ios::binary) << bytes;

  const auto r = read_warning(dir / "damaged.mp4");
  std::vector<std::int64_t> expected;
  for (int i = 0; i < kFrames; ++i) {
    if (i < 20 || i > 22) expected.push_back(i);
  }
  std::vector<std::int64_t> indices;
  for (const auto& f : r.frames) indices.push_back(f.index);
  EXPECT_EQ(indices, expected) << "the frames after the damage were renumbered";
  for (const auto& f : r.frames) {
    EXPECT_NEAR(f.time_s, f.index / 25.0, 1e-6) << "frame " << f.index << ": its index and its time disagree";
    // Its picture is that frame's (a frame predicted from a lost one is blurred until the next
    // keyframe, but nearer its own scene than the one 3 frames before, its old number).
    const double own = sam3::test::mean_abs_diff(f.image, sam3::test::scene_frame(96, 64, static_cast<int>(f.index)));
    if (f.index < 20) EXPECT_LT(own, 3.0) << "frame " << f.index;
    if (f.index > 22) {
      EXPECT_LT(own, sam3::test::mean_abs_diff(f.image, sam3::test::scene_frame(96, 64, static_cast<int>(f.index) - 3)))
          << "frame " << f.index << " holds another frame's picture";
    }
  }
  EXPECT_NE(r.warned.find("damaged.mp4: 3 frames could not be decoded (damaged); frames 20-22 are absent"), std::string::npos) << r.warned;
  EXPECT_EQ(r.warned.find("cut short"), std::string::npos) << "frames lost in the middle are not a file cut short:\n" << r.warned;
}

// MPEG-TS drops damaged packets itself (no decoding error for them, only a packet marked
// corrupt): the frames after the gap are numbered from their times (a constant rate).
TEST(DamagedVideo, AnMpegTsFileThatLostPacketsNumbersTheRestFromTheirTimes) {
  TempDir dir("sam3_vdmg");
  constexpr int kFrames = 60;
  sam3::test::write_scene_video(dir / "clip.ts", 96, 64, sam3::test::regular_times(kFrames, 25.0), "mpeg4");
  std::string bytes = sam3::test::read_file(dir / "clip.ts");
  for (size_t k = bytes.size() * 4 / 10; k < bytes.size() * 6 / 10; ++k) bytes[k] = static_cast<char>(bytes[k] ^ 0x5a);
  std::ofstream(dir / "damaged.ts", std::ios::binary) << bytes;
  const auto r = read_warning(dir / "damaged.ts");
  ASSERT_GE(r.frames.size(), 20u);
  ASSERT_LT(r.frames.size(), static_cast<size_t>(kFrames)) << "the damage lost no frame: the test damages too little";
  for (const auto& f : r.frames) {
    EXPECT_NEAR(f.time_s, f.index / 25.0, 1e-3) << "frame " << f.index << ": its index and its time disagree";
  }
  EXPECT_NE(r.warned.find("could not be decoded (damaged)"), std::string::npos) << r.warned;
}

TEST(DamagedVideo, AVariableRateMatroskaFileWithNoDeclaredCountIsNotCalledCutShort) {
  std::string encoder = sam3::video_io::find_video_encoder("h264");
  if (encoder.empty()) encoder = "mpeg4";
  TempDir dir("sam3_vdmg");
  // The trial's vfr.mkv: ten frames 0.1 s apart, then gaps of a second and more.
  std::vector<double> times;
  for (int i = 0; i < 10; ++i) times.push_back(0.1 * i);
  for (int i = 0; i < 6; ++i) times.push_back(4.0 + 1.1 * i);
  sam3::test::write_scene_video(dir / "vfr.mkv", 80, 48, times, encoder);
  const auto r = read_warning(dir / "vfr.mkv");
  ASSERT_EQ(r.frames.size(), times.size());
  for (size_t i = 0; i < times.size(); ++i) {
    EXPECT_EQ(r.frames[i].index, static_cast<std::int64_t>(i)) << "an intact file is numbered in order";
    EXPECT_NEAR(r.frames[i].time_s, times[i], 1e-6);
  }
  EXPECT_FALSE(r.info.frame_count_exact) << "Matroska declares no count: " << r.info.frame_count << " is an estimate";
  EXPECT_EQ(r.warned, "") << "a valid file warned";
  // The estimate is not a bound: a click past it is not refused before reading.
  EXPECT_NO_THROW(sam3::check_prompt_frames(dir / "vfr.mkv", r.info, 1, {r.info.frame_count + 5}));
}

TEST(DamagedVideo, AClickPastTheCountAContainerDeclaresIsRefusedBeforeReading) {
  TempDir dir("sam3_vdmg");
  sam3::test::write_scene_video(dir / "clip.mp4", 64, 48, sam3::test::regular_times(30, 10.0), "mpeg4");
  auto source = sam3::open_video_file(dir / "clip.mp4");
  EXPECT_TRUE(source->info().frame_count_exact);
  EXPECT_NO_THROW(sam3::check_prompt_frames(dir / "clip.mp4", source->info(), 1, {29}));
  std::string message;
  try {
    sam3::check_prompt_frames(dir / "clip.mp4", source->info(), 1, {0, 50});
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), sam3::ErrorCode::kInvalidArgument);
    message = e.what();
  }
  EXPECT_EQ(message, "object2 is on frame 50, but clip.mp4 has frames 0 to 29: give a frame the video has");
}

}  // namespace

namespace {

// The trial's empty.mp4 was "not a video FFmpeg can read (FFmpeg: moov atom not found)".
TEST(DamagedVideo, AnEmptyFileIsCalledEmpty) {
  TempDir dir("sam3_vdmg");
  std::ofstream(dir / "empty.mp4").close();
  try {
    sam3::open_video_file(dir / "empty.mp4");
    ADD_FAILURE() << "an empty file opened";
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), sam3::ErrorCode::kImageUnsupported);
    EXPECT_EQ(std::string(e.what()), (dir / "empty.mp4").string() + ": the file is empty (0 bytes); give a video file");
  }
}

}  // namespace
