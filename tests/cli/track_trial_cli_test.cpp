// `sam3 track` after a new user's trial of video (session 18, /work/wt/vtrial-report.md): frames
// after damaged ones keep their index (finding 1), a finished result in --out is neither replaced
// by another video's nor tracked again (2, 12), a resume survives --models spelt otherwise or an
// ignored --fps and says which setting differs (3, 16), options before the video (10), a click
// past a video's declared end (11), objects never confirmed (8), a file-size limit (15), and the
// small things (16).
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

const fs::path kModels = fs::path(SAM3_TEST_MODELS_DIR) / "sam3.1-video";
const std::string kShort = " --hotstart-delay 2 --hotstart-unmatched 1 --hotstart-duplicate 1 --checkpoint-every 2 --threads 1";

std::string sam3_track(const std::string& args) { return std::string(SAM3_CLI_PATH) + " track " + args; }

std::string track(const fs::path& video, const fs::path& out, const std::string& args, const std::string& models = kModels.string()) {
  return sam3_track(quote(video.string()) + " --models " + quote(models) + " --out " + quote(out.string()) + " " + args);
}

void write_video(const fs::path& path, int count, const std::string& encoder = "auto", int first = 0) {
  fs::create_directories(path.parent_path());
  sam3::video_io::VideoEncoder writer(path, sam3::test::kWidth, sam3::test::kHeight, 10.0, sam3::video_io::find_video_encoder(encoder));
  for (int i = 0; i < count; ++i) writer.add(sam3::test::frame_of(first + i).image, i / 10.0);
  writer.finish();
}

void write_frames(const fs::path& folder, int count) {
  for (int i = 0; i < count; ++i) {
    sam3::write_file_atomic(folder / ("f" + std::to_string(i) + ".png"), sam3::encode_rgb_png(sam3::test::frame_of(i).image));
  }
}

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(sam3::test::read_file(p)); }

// Finding 1: 17 damaged packets in a video's middle renumbered every later frame (index 150 at
// 6.68 s), and DAVIS' and MOTS' file names with them.
TEST(TrackTrialCli, FramesAfterDamagedOnesKeepTheirIndexInEveryFormat) {
  const auto dir = sam3::test::fresh_test_dir("sam3_track_trial");
  write_video(dir / "clip.mp4", 12, "mpeg4");
  std::string bytes = sam3::test::read_file(dir / "clip.mp4");
  const std::string vop("\x00\x00\x01\xb6", 4);  // MPEG-4 Part 2's picture start code, one a frame
  std::vector<size_t> starts;
  for (size_t at = bytes.find(vop); at != std::string::npos; at = bytes.find(vop, at + 4)) starts.push_back(at);
  ASSERT_EQ(starts.size(), 12u);
  for (int k : {5, 6}) bytes[starts[k] + 3] = '\x00';
  sam3::write_file_atomic(dir / "damaged.mp4", bytes);
  const auto out = dir / "out";
  const auto r = run_command(track(dir / "damaged.mp4", out, "--prompt car --format json,davis,mots" + kShort));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("2 frames could not be decoded (damaged); frames 5-6 are absent"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("cut short"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("damaged.mp4: 10 frames -> "), std::string::npos) << r.out;
  const auto tracks = read_json(out / "tracks.json");
  std::vector<std::int64_t> indices;
  for (const auto& f : tracks["frames"]) {
    indices.push_back(f["index"].get<std::int64_t>());
    EXPECT_NEAR(f["time_s"].get<double>(), indices.back() / 10.0, 1e-3) << "index and time disagree";
  }
  EXPECT_EQ(indices, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 7, 8, 9, 10, 11}));
  EXPECT_EQ(tracks["video"]["frame_count"], 10) << "the frames read";
  EXPECT_TRUE(fs::exists(out / "davis" / "00011.png"));
  EXPECT_FALSE(fs::exists(out / "davis" / "00005.png"));
  EXPECT_TRUE(fs::exists(out / "mots" / "instances" / "frame_000011.png"));
  // A click on a frame that could not be decoded is not blamed on a stride.
  const auto click = run_command(track(dir / "damaged.mp4", dir / "click", "--point 30,30@5 --format json" + kShort));
  EXPECT_EQ(click.exit_code, 3) << click.err;
  EXPECT_NE(click.err.find("object1 is on frame 5, which the video lacks (the next frame is 7; a frame that could not be decoded"),
            std::string::npos)
      << click.err;
}

// Findings 2 and 12: another video run into an --out holding a finished result replaced it
// silently; the same video and settings were tracked all over again.
TEST(TrackTrialCli, AFinishedResultIsSkippedWhenTheSameAndKeptWhenAnotherVideoComes) {
  const auto dir = sam3::test::fresh_test_dir("sam3_track_trial");
  write_video(dir / "a.mp4", 4);
  write_video(dir / "b.mp4", 4, "auto", 10);
  const auto out = dir / "out";
  auto r = run_command(track(dir / "a.mp4", out, "--prompt car --format json,davis" + kShort));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string first = sam3::test::read_file(out / "tracks.json");
  // The same again, and with --fps (ignored for a file, so not a setting), and fewer formats.
  for (const std::string more : {"--format json,davis", "--format json,davis --fps 30", "--format json"}) {
    r = run_command(track(dir / "a.mp4", out, "--prompt car " + more + kShort));
    EXPECT_EQ(r.exit_code, 0) << more << ": " << r.err;
    EXPECT_NE(r.out.find("a.mp4: already tracked with these settings and formats in "), std::string::npos) << more << ": " << r.out;
  }
  // Another video, other settings, other prompts: refused, the result kept.
  const std::pair<std::string, std::string> others[] = {
      {track(dir / "b.mp4", out, "--prompt car --format json" + kShort), "holds the finished results of a.mp4 (another video)"},
      {track(dir / "a.mp4", out, "--prompt car --format json --detection-threshold 0.5" + kShort),
       "holds the finished results of a.mp4 with other settings (detection_threshold was 0.4, now 0.5)"},
      {track(dir / "a.mp4", out, "--prompt person --format json" + kShort), "holds the finished results of a.mp4 with other prompts"},
  };
  for (const auto& [command, message] : others) {
    r = run_command(command);
    EXPECT_EQ(r.exit_code, 6) << command << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--overwrite to replace them"), std::string::npos) << r.err;
    EXPECT_EQ(sam3::test::read_file(out / "tracks.json"), first) << command;
    EXPECT_TRUE(fs::exists(out / "davis")) << command;
  }
  // Asked for: replaced.
  r = run_command(track(dir / "b.mp4", out, "--prompt car --format json --overwrite" + kShort));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_json(out / "tracks.json")["video"]["name"], "b.mp4");
  EXPECT_FALSE(fs::exists(out / "davis")) << "the folder does not mix two runs";
  // --restart tracks the same video again.
  r = run_command(track(dir / "b.mp4", out, "--prompt car --format json --restart" + kShort));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("b.mp4: 4 frames -> "), std::string::npos) << r.out;
}

// Findings 3 and 16: a resume was refused when --models was spelt otherwise ("models",
// "./models", "/abs/models/"), with a warning that did not say which setting differed.
TEST(TrackTrialCli, AResumeSurvivesTheModelFolderSpeltOtherwiseAndSaysWhichSettingDiffers) {
  const auto dir = sam3::test::fresh_test_dir("sam3_track_trial");
  write_frames(dir / "clip", 10);
  sam3::Image small;  // frame 7 of another size stops every run there, its earlier frames checkpointed
  small.width = small.height = 8;
  small.rgb.assign(8 * 8 * 3, 9);
  sam3::write_file_atomic(dir / "clip" / "f7.png", sam3::encode_rgb_png(small));
  const auto out = dir / "out";
  auto r = run_command(track(dir / "clip", out, "--prompt car --format json" + kShort));
  ASSERT_EQ(r.exit_code, 3) << r.err;
  ASSERT_TRUE(fs::exists(out / "sam3-video.partial"));
  const std::string relative = "cd " + quote(kModels.parent_path().string()) + " && ";
  for (const std::string models : {kModels.string() + "/", "./" + kModels.filename().string(), kModels.filename().string() + "/."}) {
    r = run_command(relative + track(dir / "clip", out, "--prompt car --format json" + kShort, models));
    EXPECT_EQ(r.exit_code, 3) << models << ": " << r.err;
    EXPECT_EQ(r.err.find("not resumed"), std::string::npos) << models << ": " << r.err;
  }
  r = run_command(track(dir / "clip", out, "--prompt car --format json --new-object-threshold 0.7" + kShort));
  EXPECT_NE(r.err.find("not resumed, it had other settings (new_object_threshold was 0.65, now 0.7); starting over"), std::string::npos)
      << r.err;
  const auto tracks = read_json(out / "sam3-video.partial" / "progress.json");
  EXPECT_EQ(tracks["settings"]["detection_threshold"].dump(), "0.4") << "a float setting as its shortest decimal";
  EXPECT_EQ(tracks["settings"]["model"]["directory"], fs::weakly_canonical(kModels).string());
}

// Finding 10: "--prompt car VIDEO" took the video for a second prompt ("video is required").
// Finding 11: a click past a video file's declared end was found after tracking it all.
TEST(TrackTrialCli, OptionsBeforeTheVideoAndAClickPastItsDeclaredEnd) {
  const auto dir = sam3::test::fresh_test_dir("sam3_track_trial");
  write_video(dir / "a.mp4", 3);
  auto r = run_command(sam3_track("--models " + quote(kModels.string()) + " --prompt car " + quote((dir / "a.mp4").string()) + " --out " +
                                  quote((dir / "out").string()) + " --format json" + kShort));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "out" / "tracks.json"));
  r = run_command(track(dir / "a.mp4", dir / "past", "--point 10,10@50 --format json" + kShort));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("object1 is on frame 50, but a.mp4 has frames 0 to 2"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "past")) << "refused before anything was written";
}

// Finding 8: videos of 1 or 2 frames gave no object and no word why.
TEST(TrackTrialCli, ObjectsNeverConfirmedAreCounted) {
  const auto dir = sam3::test::fresh_test_dir("sam3_track_trial");
  write_video(dir / "one.mp4", 1);
  auto r = run_command(track(dir / "one.mp4", dir / "out", "--prompt car --format json" + kShort));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("one.mp4: 1 frame -> "), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("found on the last frames were never confirmed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--confirmation 0 keeps them"), std::string::npos) << r.err;
  EXPECT_TRUE(read_json(dir / "out" / "tracks.json")["frames"][0]["objects"].empty());
  r = run_command(track(dir / "one.mp4", dir / "kept", "--prompt car --format json --confirmation 0" + kShort));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("never confirmed"), std::string::npos) << r.err;
  EXPECT_FALSE(read_json(dir / "kept" / "tracks.json")["frames"][0]["objects"].empty());
}

// Finding 15: under `ulimit -f` sam3 track died of SIGXFSZ without a word (exit 153).
TEST(TrackTrialCli, AFileSizeLimitIsAnErrorNotASignal) {
  const auto dir = sam3::test::fresh_test_dir("sam3_track_trial");
  write_video(dir / "a.mp4", 8);
  const auto r = run_command("(ulimit -f 1 && exec " + track(dir / "a.mp4", dir / "out", "--prompt car --format json,mots" + kShort) + ")");
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_NE(r.err.find("sam3: error: "), std::string::npos) << r.err;
  const auto again = run_command(track(dir / "a.mp4", dir / "out", "--prompt car --format json,mots" + kShort));
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.err.find("cannot resume"), std::string::npos) << again.err;
}

// Finding 16's small things.
TEST(TrackTrialCli, UsageMessagesInSamsOwnWords) {
  const auto dir = sam3::test::fresh_test_dir("sam3_track_trial");
  write_video(dir / "a.mp4", 2);
  auto r = run_command(track(dir / "a.mp4", dir / "out", "--prompt car --every 0"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("sam3: error: --every must be from 1 to 1000000, got 0"), std::string::npos) << r.err;
  r = run_command(track(dir / "a.mp4", dir / "out", "--prompt car --format 'json, davis'" + kShort));
  EXPECT_EQ(r.exit_code, 0) << "spaces around a format: " << r.err;
  EXPECT_TRUE(fs::exists(dir / "out" / "davis"));
  r = run_command(sam3_track("--help"));
  EXPECT_EQ(r.out.find("{false}"), std::string::npos) << r.out;
  // A folder of videos: a failed video is named once.
  sam3::write_file_atomic(dir / "videos" / "text.mp4", "not a video\n");
  r = run_command(track(dir / "videos", dir / "many", "--prompt car --format json" + kShort));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find((dir / "videos" / "text.mp4").string() + ": not a video"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("text.mp4: " + (dir / "videos" / "text.mp4").string()), std::string::npos) << r.err;
}

}  // namespace
