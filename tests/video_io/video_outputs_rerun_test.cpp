// Reruns that lose nothing and splice nothing (issue 42, round 5): a changed source is tracked
// again, a finish that failed is finished from the intact partial run, formats may be dropped
// on resume (what a format cannot hold is refused before any format writes the frame), what is
// written is what a caller is given back, frames without pixels when no output needs them, and
// one writer per folder in a process too.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sam3/error.h"
#include "sam3/log.h"
#include "sam3/video_outputs.h"
#include "support/error_code.h"
#include "support/files.h"
#include "video_test_support.h"

namespace {

namespace fs = std::filesystem;
using sam3::ErrorCode;
using sam3::VideoOutputFormat;
using sam3::test::code_of;
using sam3::test::read_file;
using sam3::test::TempDir;

constexpr int kW = 40, kH = 24;

sam3::VideoInfo info() {
  sam3::VideoInfo i;
  i.name = "frames";
  i.width = kW;
  i.height = kH;
  i.fps = 25;
  i.frame_count = 10;
  return i;
}

// Frame f: object (1 + shift) a 6x6 square moving right, on prompt 0.
std::pair<sam3::VideoFrame, sam3::VideoFrameResult> frame_of(int f, int shift = 0, int id = 1) {
  sam3::VideoFrame frame{sam3::test::scene_frame(kW, kH, f), f, f / 25.0};
  sam3::VideoFrameResult result{f, f / 25.0, {}};
  sam3::TrackedObject o;
  o.id = id + shift;
  o.score = 0.9f;
  o.mask = sam3::Mask::from_window(kW, kH, {2 + f, 4, 8 + f, 10}, std::vector<std::uint8_t>(6 * 6, 1));
  o.box = {2.0f + f, 4, 7.0f + f, 9};
  result.objects.push_back(o);
  return {frame, result};
}

sam3::VideoOutputOptions options(std::vector<VideoOutputFormat> formats = {VideoOutputFormat::kJson, VideoOutputFormat::kDavis}) {
  sam3::VideoOutputOptions o;
  o.formats = std::move(formats);
  o.labels = {"car"};
  o.source_json = R"({"kind":"folder","frames":10,"digest":"aaaa"})";
  o.checkpoint_every = 2;
  o.resume_window = 2;
  return o;
}

// Warnings logged while `body` runs.
std::string warnings_of(const std::function<void()>& body) {
  std::string text;
  sam3::set_log_sink([&](sam3::LogLevel, const std::string& m) { text += m + "\n"; });
  try {
    body();
  } catch (...) {
    sam3::set_log_sink(nullptr);
    throw;
  }
  sam3::set_log_sink(nullptr);
  return text;
}

// Issue 42 item 11: a frame folder replaced after a kill was spliced (frames 0-34 of the old
// video and 35-59 of the new one in one tracks.json).
TEST(VideoOutputsRerun, APartialRunOfAChangedSourceIsNotResumedButRedone) {
  TempDir dir("sam3_vrerun");
  {
    sam3::VideoOutputs out(dir.path(), info(), options());
    for (int f = 0; f < 5; ++f) out.write(frame_of(f).first, frame_of(f).second);
  }  // stopped: resumable
  auto changed = options();
  changed.source_json = R"({"kind":"folder","frames":10,"digest":"bbbb"})";  // a frame rewritten since
  std::string warned = warnings_of([&] {
    sam3::VideoOutputs out(dir.path(), info(), changed);
    EXPECT_EQ(out.resume_point().committed_frames, 0) << "the frames of the old folder are not kept";
  });
  EXPECT_NE(warned.find("the video changed since"), std::string::npos) << warned;
  EXPECT_EQ(warned.find("other settings"), std::string::npos) << "one true reason: " << warned;
}

// A new user's findings (session 16): a rerun refused for a user's tracks.json in the folder
// had already cleared the partial run of other settings, and a refused first run left sam3's
// lock, record and an empty partial folder in the user's folder.
TEST(VideoOutputsRerun, AUsersFileOfAnOutputsNameCostsNeitherThePartialRunNorTheFolder) {
  TempDir dir("sam3_vrerun");
  const fs::path user = dir / "user";
  fs::create_directories(user);
  std::ofstream(user / "tracks.json") << "mine\n";
  EXPECT_EQ(code_of([&] { sam3::VideoOutputs(user, info(), options()); }), ErrorCode::kIo);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(user)) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"tracks.json"}) << "the refused run left files of its own";
  EXPECT_EQ(read_file(user / "tracks.json"), "mine\n");

  const fs::path out = dir / "out";
  {
    sam3::VideoOutputs run(out, info(), options());
    for (int f = 0; f < 5; ++f) run.write(frame_of(f).first, frame_of(f).second);
  }  // stopped: a partial run
  std::ofstream(out / "tracks.json") << "mine\n";
  auto other = options();
  other.labels = {"bus"};  // other settings: a run that gets through starts over
  EXPECT_EQ(code_of([&] { sam3::VideoOutputs(out, info(), other); }), ErrorCode::kIo);
  fs::remove(out / "tracks.json");
  sam3::VideoOutputs again(out, info(), options());
  EXPECT_EQ(again.resume_point().committed_frames, 5) << "the partial run survived the refusal";
}

// Issue 42 item 15: a tracks.json that could not be written at the end (a full disk) made the
// next run track everything again ("another video or other settings").
TEST(VideoOutputsRerun, AFinishThatFailsIsFinishedByTheNextRunWithoutTrackingAgain) {
  TempDir dir("sam3_vrerun");
  {
    sam3::VideoOutputs out(dir.path(), info(), options());
    for (int f = 0; f < 10; ++f) out.write(frame_of(f).first, frame_of(f).second);
    // The disk is "full" for files beyond what the partial run already holds: tracks.json
    // (larger than the record it is made from) cannot be written.
    const auto record = fs::file_size(dir / "sam3-video.partial" / "json" / "frames.jsonl");
    rlimit old{};
    ::getrlimit(RLIMIT_FSIZE, &old);
    rlimit small = old;
    small.rlim_cur = record;  // tracks.json holds the whole record and more
    auto previous = std::signal(SIGXFSZ, SIG_IGN);
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    const auto code = code_of([&] { out.finish(); });
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, previous);
    EXPECT_EQ(code, ErrorCode::kIo);
  }
  EXPECT_FALSE(fs::exists(dir / "tracks.json"));
  std::string warned = warnings_of([&] {
    sam3::VideoOutputs out(dir.path(), info(), options());
    const auto& from = out.resume_point();
    EXPECT_TRUE(from.complete) << "every frame was written: only the finish is left";
    EXPECT_EQ(from.committed_frames, 10);
    out.finish();
  });
  EXPECT_EQ(warned, "") << "nothing started over";
  const auto doc = nlohmann::json::parse(read_file(dir / "tracks.json"));
  EXPECT_EQ(doc["frames"].size(), 10u);
  for (int f = 0; f < 10; ++f) EXPECT_TRUE(fs::exists(dir / "davis" / sam3::test::davis_name(f))) << f;
  EXPECT_FALSE(fs::exists(dir / "sam3-video.partial"));
}

// A new user's trial (session 18, finding 15): with SIGXFSZ ignored (sam3 track now does, to
// say what failed), a checkpoint whose flush was cut by a file-size limit was recorded anyway,
// by the next checkpoint or the destructor's, with more bytes than the file held: the next run
// found the partial run "shorter than its checkpoint" and started over.
TEST(VideoOutputsRerun, AWriteCutShortByAFileSizeLimitLeavesTheLastGoodCheckpoint) {
  TempDir dir("sam3_vrerun");
  {
    auto o = options({VideoOutputFormat::kJson});
    sam3::VideoOutputs out(dir.path(), info(), o);
    for (int f = 0; f < 4; ++f) out.write(frame_of(f).first, frame_of(f).second);  // checkpoints at 2 and 4
    const auto record = fs::file_size(dir / "sam3-video.partial" / "json" / "frames.jsonl");
    rlimit old{};
    ::getrlimit(RLIMIT_FSIZE, &old);
    rlimit small = old;
    small.rlim_cur = record + record / 8;  // room for half a frame more
    auto previous = std::signal(SIGXFSZ, SIG_IGN);
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    const auto code = code_of([&] {
      for (int f = 4; f < 10; ++f) out.write(frame_of(f).first, frame_of(f).second);
    });
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, previous);
    EXPECT_EQ(code, ErrorCode::kIo);
  }  // the destructor must not record what the failed flush did not write
  std::string warned = warnings_of([&] {
    sam3::VideoOutputs out(dir.path(), info(), options({VideoOutputFormat::kJson}));
    EXPECT_EQ(out.resume_point().committed_frames, 4) << "the checkpoint before the failure";
  });
  EXPECT_EQ(warned, "") << "nothing started over";
}

// Issue 42 item 16: DAVIS's limit (ids up to 255) was found mid-run and its advice ("write JSON
// or MOTS") started the run over. Now the frame is refused before any format writes it, and the
// same run without davis resumes there.
TEST(VideoOutputsRerun, AFormatsLimitStopsTheRunAndTheRunWithoutThatFormatResumes) {
  TempDir dir("sam3_vrerun");
  {
    sam3::VideoOutputs out(dir.path(), info(), options());
    for (int f = 0; f < 5; ++f) out.write(frame_of(f).first, frame_of(f).second);
    auto [frame, result] = frame_of(5, 0, 300);
    try {
      out.write(frame, result);
      ADD_FAILURE() << "id 300 written as DAVIS";
    } catch (const sam3::Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("without davis"), std::string::npos) << e.what();
    }
  }
  std::string warned = warnings_of([&] {
    sam3::VideoOutputs out(dir.path(), info(), options({VideoOutputFormat::kJson}));
    EXPECT_EQ(out.resume_point().committed_frames, 5) << "the advice works: the run resumes";
    for (int f = static_cast<int>(out.resume_point().restart_index); f < 10; ++f) {
      auto [frame, result] = frame_of(f, 0, f >= 5 ? 300 : 1);
      out.write(frame, result);
    }
    out.finish();
  });
  EXPECT_EQ(warned, "");
  EXPECT_FALSE(fs::exists(dir / "davis"));
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "tracks.json"))["frames"].size(), 10u);
  // Adding a format cannot resume (its earlier frames are missing): it starts over, saying so.
  {
    sam3::VideoOutputs out(dir / "b", info(), options({VideoOutputFormat::kJson}));
    out.write(frame_of(0).first, frame_of(0).second);
  }
  warned = warnings_of([&] {
    sam3::VideoOutputs out(dir / "b", info(), options({VideoOutputFormat::kJson, VideoOutputFormat::kMots}));
    EXPECT_EQ(out.resume_point().committed_frames, 0);
  });
  EXPECT_NE(warned.find("did not write mots"), std::string::npos) << warned;
}

// Issue 42 item 16: MOTS's 64 labels were found on the first frame of the 65th prompt.
TEST(VideoOutputsRerun, MoreLabelsThanMotsHoldsAreRefusedBeforeTheFolderIsTouched) {
  TempDir dir("sam3_vrerun");
  auto o = options({VideoOutputFormat::kMots});
  o.labels.assign(65, "thing");
  EXPECT_EQ(code_of([&] { sam3::VideoOutputs(dir / "out", info(), o); }), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(dir / "out"));
  o.labels.resize(64);
  EXPECT_NO_THROW(sam3::VideoOutputs(dir / "out", info(), o));
}

// Issue 42 item 13: Python's resumed track(out=...) yielded the re-run tracker's ids (not the
// written ones) and the frames of the re-run window a second time.
TEST(VideoOutputsRerun, WriteFrameGivesBackWhatTheFilesHold) {
  TempDir dir("sam3_vrerun");
  {
    sam3::VideoOutputs out(dir.path(), info(), options());
    for (int f = 0; f < 5; ++f) EXPECT_EQ(out.write_frame(frame_of(f).first, frame_of(f).second)->objects.at(0).id, 1);
  }
  sam3::VideoOutputs out(dir.path(), info(), options());
  ASSERT_EQ(out.resume_point().committed_frames, 5) << "stopped: what it wrote is checkpointed";
  ASSERT_EQ(out.resume_point().restart_index, 3) << "a window of 2 frames re-run";
  for (int f = static_cast<int>(out.resume_point().restart_index); f < 10; ++f) {
    auto [frame, result] = frame_of(f, 40);  // the re-run tracker calls the object 41
    const auto written = out.write_frame(frame, result);
    if (f <= 4) {
      EXPECT_FALSE(written) << "frame " << f << " was written (and given) by the first run";
    } else {
      ASSERT_TRUE(written) << f;
      EXPECT_EQ(written->objects.at(0).id, 1) << "frame " << f << ": the id the files hold";
    }
  }
}

// Issue 42 item 10: sam3 track held every frame's pixels for the hot-start delay whatever the
// formats; VideoOutputs needed them.
TEST(VideoOutputsRerun, FramesWithoutPixelsWhenNoFormatNeedsThem) {
  TempDir dir("sam3_vrerun");
  {
    sam3::VideoOutputs out(dir / "a", info(), options({VideoOutputFormat::kJson, VideoOutputFormat::kDavis, VideoOutputFormat::kMots}));
    EXPECT_FALSE(out.needs_pixels());
    for (int f = 0; f < 3; ++f) out.write(sam3::VideoFrame{{}, f, f / 25.0}, frame_of(f).second);
    out.finish();
  }
  EXPECT_TRUE(fs::exists(dir / "a" / "davis" / sam3::test::davis_name(2)));
  auto with_overlay = options({VideoOutputFormat::kJson, VideoOutputFormat::kOverlay});
  with_overlay.overlay_encoder = "png";
  sam3::VideoOutputs out(dir / "b", info(), with_overlay);
  EXPECT_TRUE(out.needs_pixels());
  EXPECT_EQ(code_of([&] { out.write(sam3::VideoFrame{{}, 0, 0.0}, frame_of(0).second); }), ErrorCode::kInvalidArgument);
}

// Issue 42 item 17: a second track(out=O) in one process named the caller's own pid as the writer.
TEST(VideoOutputsRerun, ASecondWriterOfOneProcessIsToldItIsThisProcess) {
  TempDir dir("sam3_vrerun");
  sam3::VideoOutputs first(dir.path(), info(), options());
  try {
    sam3::VideoOutputs second(dir / "." / "", info(), options());
    ADD_FAILURE() << "two writers of one folder";
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("this process"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("pid " + std::to_string(::getpid())), std::string::npos) << e.what();
  }
}

// Issue 42 item 17: a NaN frame rate reached tracks.json's writer (as null).
TEST(VideoOutputsRerun, ANanFrameRateIsRefused) {
  TempDir dir("sam3_vrerun");
  auto i = info();
  i.fps = std::nan("");
  EXPECT_EQ(code_of([&] { sam3::VideoOutputs(dir / "out", i, options()); }), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(dir / "out"));
}

// Issue 42 item 12: a batch skipped a replaced video, and a rerun asking for more formats.
TEST(VideoOutputsRerun, FinishedOnlyForTheSameSourceSettingsAndFormats) {
  TempDir dir("sam3_vrerun");
  {
    sam3::VideoOutputs out(dir.path(), info(), options());
    for (int f = 0; f < 3; ++f) out.write(frame_of(f).first, frame_of(f).second);
    out.finish();
  }
  EXPECT_TRUE(sam3::VideoOutputs::finished(dir.path(), options()));
  EXPECT_TRUE(sam3::VideoOutputs::finished(dir.path(), options({VideoOutputFormat::kDavis}))) << "fewer formats: done";
  EXPECT_FALSE(sam3::VideoOutputs::finished(dir.path(), options({VideoOutputFormat::kJson, VideoOutputFormat::kMots})));
  auto replaced = options();
  replaced.source_json = R"({"kind":"file","size":1,"mtime_ns":2,"head":"cccc"})";
  EXPECT_FALSE(sam3::VideoOutputs::finished(dir.path(), replaced));
  auto other = options();
  other.settings_json = R"({"prompt":"truck"})";
  EXPECT_FALSE(sam3::VideoOutputs::finished(dir.path(), other));
  fs::remove_all(dir / "davis");
  EXPECT_FALSE(sam3::VideoOutputs::finished(dir.path(), options())) << "a format's files removed since";
}

// A new user's trial (session 18, finding 2): another video's run into a folder holding a
// finished result replaced it silently. replaced_results says what would be lost, naming it.
TEST(VideoOutputsRerun, ReplacedResultsNameTheFinishedRunAnotherWouldReplace) {
  TempDir dir("sam3_vrerun");
  auto settings = options();
  settings.settings_json = R"({"detection_threshold":0.4,"model":{"directory":"/m"}})";
  EXPECT_EQ(sam3::VideoOutputs::replaced_results(dir.path(), "frames", settings), "") << "nothing there";
  {
    sam3::VideoOutputs out(dir.path(), info(), settings);
    for (int f = 0; f < 3; ++f) out.write(frame_of(f).first, frame_of(f).second);
    out.finish();
  }
  const std::string folder = dir.path().string();
  EXPECT_EQ(sam3::VideoOutputs::replaced_results(dir.path(), "frames", settings), "") << "the same run";
  auto fewer = settings;
  fewer.formats = {VideoOutputFormat::kJson, VideoOutputFormat::kMots};
  EXPECT_EQ(sam3::VideoOutputs::replaced_results(dir.path(), "frames", fewer), "") << "other formats lose nothing";
  auto changed = settings;
  changed.source_json = R"({"kind":"folder","frames":11,"digest":"bbbb"})";
  EXPECT_EQ(sam3::VideoOutputs::replaced_results(dir.path(), "frames", changed),
            folder + " holds the finished results of frames as it was before it changed");
  EXPECT_EQ(sam3::VideoOutputs::replaced_results(dir.path(), "clip.mp4", changed),
            folder + " holds the finished results of frames (another video)");
  auto labels = settings;
  labels.labels = {"truck"};
  EXPECT_EQ(sam3::VideoOutputs::replaced_results(dir.path(), "frames", labels),
            folder + R"( holds the finished results of frames with other prompts (the list of labels was ["car"], now ["truck"]))");
  auto other = settings;
  other.settings_json = R"({"detection_threshold":0.5,"model":{"directory":"/m"}})";
  EXPECT_EQ(sam3::VideoOutputs::replaced_results(dir.path(), "frames", other),
            folder + " holds the finished results of frames with other settings (detection_threshold was 0.4, now 0.5)");
  other.settings_json = R"({"detection_threshold":0.4,"model":{"directory":"/models"}})";
  EXPECT_EQ(sam3::VideoOutputs::replaced_results(dir.path(), "frames", other),
            folder + R"( holds the finished results of frames with other settings (model.directory was "/m", now "/models"))");
}

}  // namespace
