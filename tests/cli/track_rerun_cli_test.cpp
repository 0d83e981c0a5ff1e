// `sam3 track` and `sam3 label --video` run again after a change (issue 42, round 5): a replaced
// folder or video is tracked again and never spliced, a batch writes the formats it lacks, a
// usage error exits 2, and what can be refused before tracking is (a click past a folder's end,
// frames too large for the memory left).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "sam3/export.h"
#include "sam3/files.h"
#include "support/files.h"
#include "support/run_command.h"
#include "video/synthetic_video.h"
#include "video_io/video_encoder.h"

namespace {

namespace fs = std::filesystem;
using sam3::test::quote;
using sam3::test::run_command;

const std::string kModels = (fs::path(SAM3_TEST_MODELS_DIR) / "sam3.1-video").string();
// A short hot-start delay, frequent checkpoints, one thread (two runs compared byte for byte).
const std::string kShort = " --hotstart-delay 2 --hotstart-unmatched 1 --hotstart-duplicate 1 --checkpoint-every 2 --threads 1";

std::string track(const fs::path& video, const fs::path& out, const std::string& args) {
  return std::string(SAM3_CLI_PATH) + " track " + quote(video.string()) + " --models " + quote(kModels) + " --out " + quote(out.string()) +
         " " + args;
}

std::string label_videos(const fs::path& videos, const fs::path& out, const std::string& args) {
  return std::string(SAM3_CLI_PATH) + " label " + quote(videos.string()) + " --video --models " + quote(kModels) + " --out " +
         quote(out.string()) + " " + args;
}

// Frames first..first+count-1 of the generated scene as PNGs named f0.png, f1.png, ...
void write_frames(const fs::path& folder, int count, int first = 0) {
  for (int i = 0; i < count; ++i) {
    sam3::write_file_atomic(folder / ("f" + std::to_string(i) + ".png"), sam3::encode_rgb_png(sam3::test::frame_of(first + i).image));
  }
}

void write_video(const fs::path& path, int count, int first = 0) {
  fs::create_directories(path.parent_path());
  sam3::video_io::VideoEncoder writer(path, sam3::test::kWidth, sam3::test::kHeight, 10.0, sam3::video_io::find_video_encoder("auto"));
  for (int i = 0; i < count; ++i) writer.add(sam3::test::frame_of(first + i).image, i / 10.0);
  writer.finish();
}

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(sam3::test::read_file(p)); }

// Issue 42 item 11: a frame folder replaced after an interrupted run was spliced (the old
// video's first frames and the new one's last in one tracks.json, exit 0).
TEST(TrackRerunCli, AFolderChangedAfterAnInterruptedRunIsTrackedAgainNotSpliced) {
  const auto dir = sam3::test::fresh_test_dir("sam3_track_rerun");
  write_frames(dir / "clip", 12);
  // Frame 8 of another size stops the first run there, its frames before it checkpointed.
  sam3::Image small;
  small.width = small.height = 8;
  small.rgb.assign(8 * 8 * 3, 9);
  sam3::write_file_atomic(dir / "clip" / "f8.png", sam3::encode_rgb_png(small));
  const auto out = dir / "out";
  auto first = run_command(track(dir / "clip", out, "--prompt car --format json" + kShort));
  ASSERT_EQ(first.exit_code, 3) << first.err;
  ASSERT_TRUE(fs::exists(out / "sam3-video.partial")) << "the frames before f8.png are kept";
  // The folder is replaced by another video's frames (the scene from frame 10 on).
  fs::remove_all(dir / "clip");
  write_frames(dir / "clip", 12, 10);
  const auto again = run_command(track(dir / "clip", out, "--prompt car --format json" + kShort));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out.find("resumed"), std::string::npos) << again.out;
  EXPECT_NE(again.err.find("the video changed since"), std::string::npos) << again.err;
  // Every frame is the new folder's: the same as a run on it alone.
  const auto alone = run_command(track(dir / "clip", dir / "alone", "--prompt car --format json" + kShort));
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_EQ(read_json(out / "tracks.json")["frames"], read_json(dir / "alone" / "tracks.json")["frames"]);
}

// Issue 42 item 12: a replaced b.mp4 was skipped as "already done", and a rerun asking for more
// formats (also through label --video) reported "already done" and never wrote them.
TEST(TrackRerunCli, ABatchRedoesAReplacedVideoAndOneWithoutTheFormatsAsked) {
  const auto dir = sam3::test::fresh_test_dir("sam3_track_rerun");
  write_video(dir / "videos" / "a.mp4", 5);
  write_video(dir / "videos" / "b.mp4", 5);
  const auto out = dir / "out";
  auto r = run_command(label_videos(dir / "videos", out, "--prompt car --format json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 tracked, 0 already done"), std::string::npos) << r.out;
  r = run_command(label_videos(dir / "videos", out, "--prompt car --format json"));
  EXPECT_NE(r.out.find("0 tracked, 2 already done"), std::string::npos) << "unchanged: " << r.out;

  write_video(dir / "videos" / "b.mp4", 6, 3);  // replaced by another clip
  r = run_command(label_videos(dir / "videos", out, "--prompt car --format json"));
  EXPECT_NE(r.out.find("1 tracked, 1 already done"), std::string::npos) << r.out;
  EXPECT_EQ(read_json(out / "b" / "tracks.json")["frames"].size(), 6u) << "the new b.mp4's frames";

  r = run_command(label_videos(dir / "videos", out, "--prompt car --format json,mots"));
  EXPECT_NE(r.out.find("2 tracked, 0 already done"), std::string::npos) << r.out;
  for (const char* stem : {"a", "b"}) EXPECT_TRUE(fs::exists(out / stem / "mots.txt")) << stem << ": the format asked is written";
  r = run_command(track(dir / "videos", out, "--prompt car --format mots"));
  EXPECT_NE(r.out.find("0 tracked, 2 already done"), std::string::npos) << "fewer formats: done: " << r.out;
}

// Issue 42 item 17: usage errors of track and label --video exited 3 where docs/video.md says 2.
TEST(TrackRerunCli, UsageErrorsExit2) {
  const auto dir = sam3::test::fresh_test_dir("sam3_track_rerun");
  write_video(dir / "videos" / "a.mp4", 2);
  const auto out = dir / "out";
  for (const std::string args : {"--prompt car --shard 3/2", "--prompt car --format bogus", "--point 1,2", "--box 1,2,3@0",
                                 "--prompt car --fps nan", "--prompt car --prompt car"}) {
    const auto r = run_command(track(dir / "videos", out, args));
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
  }
  // The last three: options of images, or none to track (a new user's finding: they exited 3).
  for (const std::string args :
       {"--prompt car --shard 3/2", "--prompt car --format bogus", "--prompt car --threshold 0.5", "--everything", "--shard 1/1"}) {
    const auto r = run_command(label_videos(dir / "videos", out, args));
    EXPECT_EQ(r.exit_code, 2) << "label --video " << args << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(out)) << "nothing written";
}

// Issue 42 item 16: a click on a frame past the end of a folder was found after tracking it all.
TEST(TrackRerunCli, AClickPastAFoldersEndIsRefusedBeforeTracking) {
  const auto dir = sam3::test::fresh_test_dir("sam3_track_rerun");
  write_frames(dir / "clip", 6);
  const auto r = run_command(track(dir / "clip", dir / "out", "--point 10,10@6 --format json"));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("object1 is on frame 6, but clip has frames 0 to 5"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out")) << "nothing tracked, nothing written";
}

// A new user's finding (session 16): a mistyped --box or --point threw away the partial run an
// earlier command left (other prompts: the outputs start over) before the tracker refused the
// prompt on frame 0, though the docs promise a mistyped option never discards one.
TEST(TrackRerunCli, AMistypedBoxOrPointLeavesAPartialRunAsItWas) {
  const auto dir = sam3::test::fresh_test_dir("sam3_track_rerun");
  write_frames(dir / "clip", 12);
  sam3::Image small;  // frame 8 of another size stops the first run, its earlier frames kept
  small.width = small.height = 8;
  small.rgb.assign(8 * 8 * 3, 9);
  sam3::write_file_atomic(dir / "clip" / "f8.png", sam3::encode_rgb_png(small));
  const auto out = dir / "out";
  const auto first = run_command(track(dir / "clip", out, "--prompt car --format json" + kShort));
  ASSERT_EQ(first.exit_code, 3) << first.err;
  ASSERT_TRUE(fs::exists(out / "sam3-video.partial"));
  const auto listing = [&] {
    std::map<std::string, std::uintmax_t> files;
    for (const auto& e : fs::recursive_directory_iterator(out)) files[e.path().string()] = e.is_regular_file() ? e.file_size() : 0;
    return files;
  };
  const auto before = listing();
  const std::pair<const char*, const char*> mistakes[] = {
      {"--prompt car --box 1000,1000,1100,1100@0", "object1's box on frame 0 (1000, 1000, 1100, 1100) must satisfy 0 <= x0 < x1 <= "},
      {"--prompt car --box 40,30,20,10@0", "object1's box on frame 0 (40, 30, 20, 10) must satisfy 0 <= x0 < x1"},
      {"--prompt car --point 10,900@0", "object1's point 1 on frame 0 (10, 900) is outside the "},
      {"--prompt car --point 10,10@3 --every 2", "object1 is on frame 3, which a stride of 2 skips"},
  };
  for (const auto& [args, message] : mistakes) {
    const auto r = run_command(track(dir / "clip", out, std::string(args) + " --format json" + kShort));
    EXPECT_EQ(r.exit_code, 3) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(r.err.find("not resumed"), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(listing(), before) << args << ": the partial run was touched";
  }
}

// A new user's finding (session 16): without --models, sam3 track began to download the
// registry's default model (887 MB, an image model it cannot track with).
TEST(TrackRerunCli, WithoutModelsItSaysWhichBundleItNeedsAndDownloadsNothing) {
  const auto dir = sam3::test::fresh_test_dir("sam3_track_rerun");
  write_frames(dir / "clip", 2);
  const auto r = run_command("env -u SAM3_MODELS HOME=" + quote(dir.string()) + " " + std::string(SAM3_CLI_PATH) + " track " +
                             quote((dir / "clip").string()) + " --prompt car --offline --out " + quote((dir / "out").string()));
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("video tracking runs SAM 3.1's ONNX bundle"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("download"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

// Issue 42 item 10: a 729-byte GIF declaring 15000x15000 ended in std::bad_alloc at 8.4 GB,
// exit 1, "unexpected failure" naming no file. Here under a 4 GB address-space limit (as a
// Slurm job's memory limit would be).
TEST(TrackRerunCli, AGifDeclaringHugeFramesIsRefusedUpFrontByName) {
  const auto dir = sam3::test::fresh_test_dir("sam3_track_rerun");
  // GIF89a, a 15000x15000 logical screen, two colours, one 1x1 image of colour 0 (LZW: clear, 0, end).
  const unsigned char gif[] = {'G', 'I',  'F', '8', '9', 'a', 0x98, 0x3a, 0x98, 0x3a, 0x80, 0, 0, 0,    0,    0, 255, 255,
                               255, 0x2c, 0,   0,   0,   0,   1,    0,    1,    0,    0,    2, 2, 0x44, 0x01, 0, 0x3b};
  sam3::write_file_atomic(dir / "huge.gif", std::string(reinterpret_cast<const char*>(gif), sizeof gif));
  const auto r = run_command("ulimit -v 4000000; " + track(dir / "huge.gif", dir / "out", "--prompt car --format json"));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("huge.gif: tracking frames of 15000x15000 needs at least"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("scale the video down"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out")) << "refused before the outputs";
}

}  // namespace
