// `sam3 track` as a user runs it, on the generated SAM 3.1 bundle and the generated scene
// (video/synthetic_video.h: squares that move, enter, leave and cross): a folder of frames, and
// the same frames encoded as a real video file with FFmpeg, through every output format, and a
// run killed mid-way then resumed.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "sam3/export.h"
#include "sam3/files.h"
#include "sam3/mask_encodings.h"
#include "sam3/video_sources.h"
#include "support/files.h"
#include "support/run_command.h"
#include "support/server_process.h"
#include "video/synthetic_video.h"
#include "video_io/png_read.h"
#include "video_io/resume_ids.h"
#include "video_io/video_encoder.h"
#include "video_io/video_test_support.h"

namespace {

namespace fs = std::filesystem;
using sam3::test::kHeight;
using sam3::test::kWidth;
using sam3::test::quote;
using sam3::test::run_command;

const std::string kModels = (fs::path(SAM3_TEST_MODELS_DIR) / "sam3.1-video").string();
// A short hot-start window so that a 30-frame video has results to checkpoint well before its end.
const std::string kShortHotstart = " --hotstart-delay 5 --hotstart-unmatched 2 --hotstart-duplicate 2";
const std::string kAllFormats = " --format json,davis,mots,overlay";

// The scene as a video file (FFmpeg's encoder, 10 frames a second), made once for the suite,
// and one uninterrupted run of `sam3 track` on it in every format: the reference (full_run).
class TrackCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    suite_dir_ = new fs::path(fs::temp_directory_path() / ("sam3_track_cli_suite_" + std::to_string(::getpid())));
    fs::remove_all(*suite_dir_);
    fs::create_directories(*suite_dir_);
    sam3::video_io::VideoEncoder writer(*suite_dir_ / "clip.mp4", kWidth, kHeight, 10.0, sam3::video_io::find_video_encoder("auto"));
    for (int i = 0; i < sam3::test::kFrames; ++i) writer.add(sam3::test::frame_of(i).image, i / 10.0);
    writer.finish();
  }
  static void TearDownTestSuite() {
    fs::remove_all(*suite_dir_);
    delete suite_dir_;
    delete full_;
    full_ = nullptr;
  }
  void SetUp() override { dir_ = sam3::test::fresh_test_dir("sam3_track_cli"); }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string track_command(const fs::path& video, const fs::path& out, const std::string& args) {
    return std::string(SAM3_CLI_PATH) + " track " + quote(video.string()) + " --models " + quote(kModels) + " --out " +
           quote(out.string()) + " " + args;
  }
  static fs::path video() { return *suite_dir_ / "clip.mp4"; }
  // The reference run, made by the first test that needs it (ctest runs each test in a process of its own).
  static const sam3::test::CommandResult& full_run() {
    if (!full_) {
      full_ = new sam3::test::CommandResult(run_command(track_command(video(), full(), "--prompt car" + kShortHotstart + kAllFormats)));
    }
    return *full_;
  }
  static fs::path full() { return *suite_dir_ / "full"; }

  static inline fs::path* suite_dir_ = nullptr;
  static inline sam3::test::CommandResult* full_ = nullptr;
  fs::path dir_;
};

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(sam3::test::read_file(p)); }

// For every square of the scene visible at its centre on frame f: the id of the object whose
// mask covers that centre (0 if none). `objects` is tracks.json's list for the frame.
std::map<std::string, int> ids_at_centres(const nlohmann::json& objects, int f) {
  std::map<std::string, int> out;
  const auto image = sam3::test::frame_of(f).image;
  for (const auto& s : sam3::test::scene()) {
    const auto box = sam3::test::where(s, f);
    if (!box) continue;
    const int cx = std::clamp(((*box)[0] + (*box)[2]) / 2, 0, kWidth - 1);
    const int cy = std::clamp(((*box)[1] + (*box)[3]) / 2, 0, kHeight - 1);
    const size_t at = static_cast<size_t>(cy) * kWidth + cx;
    if (image.rgb[at * 3] != s.rgb[0] || image.rgb[at * 3 + 1] != s.rgb[1] || image.rgb[at * 3 + 2] != s.rgb[2]) continue;
    int found = 0;
    for (const auto& o : objects) {
      if (sam3::rle_decode(o["mask"]["counts"], kHeight, kWidth).at(cx, cy)) found = o["id"];
    }
    out[s.name] = found;
  }
  return out;
}

// Every visible square is covered by an object, and each square keeps one id through the video.
void expect_stable_ids(const nlohmann::json& tracks, size_t squares) {
  std::map<std::string, std::set<int>> ids;
  for (const auto& frame : tracks["frames"]) {
    for (const auto& [name, id] : ids_at_centres(frame["objects"], frame["index"])) {
      EXPECT_NE(id, 0) << name << " not found on frame " << frame["index"];
      if (id) ids[name].insert(id);
    }
  }
  std::set<int> all;
  for (const auto& [name, set] : ids) {
    EXPECT_EQ(set.size(), 1u) << name << " changed id";
    all.insert(set.begin(), set.end());
  }
  EXPECT_EQ(all.size(), squares) << "one id per square";
}

TEST_F(TrackCli, AVideoFileInEveryFormatKeepsItsIdsAndTheFormatsAgree) {
  ASSERT_EQ(full_run().exit_code, 0) << full_run().err;
  EXPECT_NE(full_run().out.find("30 frames"), std::string::npos) << full_run().out;
  const auto tracks = read_json(full() / "tracks.json");
  EXPECT_EQ(tracks["video"]["name"], "clip.mp4");
  EXPECT_EQ(tracks["video"]["width"], kWidth);
  EXPECT_EQ(tracks["labels"], nlohmann::json::array({"car"}));
  EXPECT_EQ(tracks["settings"]["hotstart_delay"], 5);
  EXPECT_EQ(tracks["settings"]["prompts"]["texts"], nlohmann::json::array({"car"}));
  ASSERT_EQ(tracks["frames"].size(), static_cast<size_t>(sam3::test::kFrames));
  for (int f = 0; f < sam3::test::kFrames; ++f) {
    EXPECT_EQ(tracks["frames"][f]["index"], f);
    EXPECT_NEAR(tracks["frames"][f]["time_s"].get<double>(), f / 10.0, 1e-3) << "the video's presentation times";
  }
  expect_stable_ids(tracks, 4);

  // DAVIS PNG pixel = id, MOTS PNG pixel = 1000 * (1 + prompt) + id, MOTS text's RLE = the JSON's
  // RLE, all for the same objects on every frame.
  std::map<std::pair<int, int>, std::string> mots_rle;  // (frame, MOTS id) -> RLE, from mots.txt
  std::istringstream mots(sam3::test::read_file(full() / "mots.txt"));
  for (std::string line; std::getline(mots, line);) {
    std::istringstream in(line);
    int frame = 0, id = 0, cls = 0, h = 0, w = 0;
    std::string rle;
    ASSERT_TRUE(in >> frame >> id >> cls >> h >> w >> rle) << line;
    EXPECT_EQ(cls, 1) << "class 1 = the first prompt";
    EXPECT_EQ(h, kHeight);
    EXPECT_EQ(w, kWidth);
    mots_rle[{frame, id}] = rle;
  }
  size_t objects = 0;
  for (const auto& frame : tracks["frames"]) {
    const int f = frame["index"];
    const auto davis = sam3::test::read_raw_png(full() / "davis" / sam3::test::davis_name(f));
    const auto instances = sam3::test::read_raw_png(full() / "mots" / "instances" / sam3::test::mots_png_name(f));
    ASSERT_EQ(davis.pixels.size(), static_cast<size_t>(kWidth) * kHeight) << "frame " << f;
    ASSERT_EQ(instances.pixels.size(), davis.pixels.size()) << "frame " << f;
    std::vector<std::uint16_t> labels(davis.pixels.size(), 0);
    for (const auto& o : frame["objects"]) {
      const int id = o["id"];
      const auto mask = sam3::rle_decode(o["mask"]["counts"], kHeight, kWidth);
      for (size_t i = 0; i < labels.size(); ++i) {
        if (mask.at(static_cast<int>(i % kWidth), static_cast<int>(i / kWidth))) labels[i] = static_cast<std::uint16_t>(id);
      }
      const auto line = mots_rle.find({f, 1000 + id});
      ASSERT_NE(line, mots_rle.end()) << "frame " << f << " object " << id << " has no MOTS line";
      EXPECT_EQ(line->second, o["mask"]["counts"].get<std::string>()) << "frame " << f << " object " << id;
      ++objects;
    }
    for (size_t i = 0; i < labels.size(); ++i) {
      ASSERT_EQ(davis.pixels[i], labels[i]) << "DAVIS frame " << f << " pixel " << i;
      ASSERT_EQ(instances.pixels[i], labels[i] ? 1000 + labels[i] : 0) << "MOTS PNG frame " << f << " pixel " << i;
    }
  }
  EXPECT_EQ(mots_rle.size(), objects) << "one MOTS line per object and frame, no more";
  EXPECT_EQ(sam3::test::read_file(full() / "mots" / "instances" / "labels.txt"), "car\n");

  // The overlay is a video of every frame at its time, the size of the source.
  auto overlay = sam3::open_video_file(full() / "overlay.mp4");
  EXPECT_EQ(overlay->info().width, kWidth);
  int frames = 0;
  while (auto frame = overlay->next()) {
    EXPECT_NEAR(frame->time_s, frames / 10.0, 2e-3);
    ++frames;
  }
  EXPECT_EQ(frames, sam3::test::kFrames);
  EXPECT_FALSE(fs::exists(full() / "sam3-video.partial")) << "the partial run is gone once finished";
}

TEST_F(TrackCli, AKilledRunResumedKeepsTheIdsAndMasksOfAnUninterruptedOne) {
  ASSERT_EQ(full_run().exit_code, 0) << full_run().err;
  const fs::path out = dir_ / "out";
  const auto args = "--prompt car" + kShortHotstart + kAllFormats + " --checkpoint-every 2";
  {
    sam3::test::ServerProcess run(
        {SAM3_CLI_PATH, "track", video().string(), "--models", kModels, "--out", out.string(), "--prompt", "car", "--hotstart-delay", "5",
         "--hotstart-unmatched", "2", "--hotstart-duplicate", "2", "--format", "json,davis,mots,overlay", "--checkpoint-every", "2"},
        false);
    // Killed (no chance to clean up) once 18 frames are durable: the resume re-runs frames 2..17.
    const auto progress = out / "sam3-video.partial" / "progress.json";
    bool enough = false;
    for (int i = 0; i < 1200 && !enough; ++i) {  // at most 2 minutes
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      try {
        enough = fs::exists(progress) && read_json(progress).value("committed_frames", 0) >= 18;
      } catch (const std::exception&) {  // read while being replaced: try again
      }
    }
    ASSERT_TRUE(enough) << "the run never checkpointed 18 frames";
    ASSERT_EQ(run.stop(SIGKILL), -1) << "killed mid-run, not finished";
  }
  EXPECT_FALSE(fs::exists(out / "tracks.json")) << "nothing final from a killed run";
  EXPECT_TRUE(fs::exists(out / "sam3-video.partial"));

  const auto resumed = run_command(track_command(video(), out, args));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("resumed after frame"), std::string::npos) << resumed.out;
  // Frames the killed run had written stay as they were; the frames after them come from a
  // tracker restarted a window earlier, whose memory began on another frame: the same objects,
  // ids and scores, masks equal but for a few edge pixels (the re-run's memory is not the
  // uninterrupted run's; docs/video.md).
  const auto at = resumed.out.find("resumed after frame ");
  ASSERT_NE(at, std::string::npos) << resumed.out;
  const int last_written = std::stoi(resumed.out.substr(at + 20));
  EXPECT_GE(last_written, 17);
  EXPECT_LT(last_written, sam3::test::kFrames - 1);
  const auto got = read_json(out / "tracks.json"), want = read_json(full() / "tracks.json");
  EXPECT_EQ(got["settings"], want["settings"]);
  ASSERT_EQ(got["frames"].size(), want["frames"].size());
  size_t objects = 0;
  for (int f = 0; f < sam3::test::kFrames; ++f) {
    const auto &a = got["frames"][f], &b = want["frames"][f];
    if (f <= last_written) EXPECT_EQ(a, b) << "frame " << f << ", written before the kill";
    EXPECT_EQ(a["time_s"], b["time_s"]);
    ASSERT_EQ(a["objects"].size(), b["objects"].size()) << "frame " << f;
    for (size_t k = 0; k < a["objects"].size(); ++k) {
      const auto &x = a["objects"][k], &y = b["objects"][k];
      EXPECT_EQ(x["id"], y["id"]) << "frame " << f;
      EXPECT_EQ(x["score"], y["score"]) << "frame " << f;
      for (int c = 0; c < 4; ++c) EXPECT_NEAR(x["box"][c].get<double>(), y["box"][c].get<double>(), 1.0) << "frame " << f;
      EXPECT_GT(sam3::video_io::mask_iou(sam3::rle_decode(x["mask"]["counts"], kHeight, kWidth),
                                         sam3::rle_decode(y["mask"]["counts"], kHeight, kWidth)),
                0.9)
          << "frame " << f << " object " << x["id"];
    }
    objects += a["objects"].size();
    const auto davis = sam3::test::read_raw_png(out / "davis" / sam3::test::davis_name(f)).pixels;
    if (f <= last_written) EXPECT_EQ(davis, sam3::test::read_raw_png(full() / "davis" / sam3::test::davis_name(f)).pixels) << f;
  }
  std::istringstream mots(sam3::test::read_file(out / "mots.txt"));
  size_t lines = 0;
  for (std::string line; std::getline(mots, line);) ++lines;
  EXPECT_EQ(lines, objects) << "each MOTS line once: the re-run frames are not written twice";
  auto overlay = sam3::open_video_file(out / "overlay.mp4");
  int frames = 0;
  while (overlay->next()) ++frames;
  EXPECT_EQ(frames, sam3::test::kFrames) << "the overlay's segments joined, each frame once";
}

// --no-pack-new-objects: a bucket per start frame, as before packing (docs/video.md, "Buckets").
// On the generated bundle each slot follows its own colour, so packing green and yellow into
// red and blue's bucket changes neither which objects are shown nor their ids; the settings
// record which was run (a resume with the other starts over).
TEST_F(TrackCli, PackingNewObjectsOrNotGivesTheSameIdsAndIsRecorded) {
  ASSERT_EQ(full_run().exit_code, 0) << full_run().err;
  const auto r = run_command(track_command(video(), dir_ / "out", "--prompt car --no-pack-new-objects --format json" + kShortHotstart));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto packed = read_json(full() / "tracks.json"), separate = read_json(dir_ / "out" / "tracks.json");
  EXPECT_EQ(packed["settings"]["pack_new_objects"], true) << "SAM 3.1's default";
  EXPECT_EQ(separate["settings"]["pack_new_objects"], false);
  expect_stable_ids(separate, 4);
  ASSERT_EQ(separate["frames"].size(), packed["frames"].size());
  for (size_t f = 0; f < packed["frames"].size(); ++f) {
    const auto &a = packed["frames"][f]["objects"], &b = separate["frames"][f]["objects"];
    ASSERT_EQ(a.size(), b.size()) << "frame " << f;
    for (size_t k = 0; k < a.size(); ++k) {
      EXPECT_EQ(a[k]["id"], b[k]["id"]) << "frame " << f;
      EXPECT_GT(sam3::video_io::mask_iou(sam3::rle_decode(a[k]["mask"]["counts"], kHeight, kWidth),
                                         sam3::rle_decode(b[k]["mask"]["counts"], kHeight, kWidth)),
                0.9)
          << "frame " << f << " object " << a[k]["id"];
    }
  }
}

TEST_F(TrackCli, FpsOnAVideoFileIsNotSilentlyIgnored) {
  const auto r = run_command(track_command(video(), dir_ / "out", "--prompt car --fps 30 --format json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--fps is for a folder of frames"), std::string::npos) << r.err;
  const auto tracks = read_json(dir_ / "out" / "tracks.json");
  EXPECT_DOUBLE_EQ(tracks["frames"][3]["time_s"].get<double>(), 0.3) << "the file's own 10 frames a second";
}

TEST_F(TrackCli, AFolderOfFramesInNaturalOrder) {
  // Names that sort wrongly as text (frame10 before frame2): the order must be numeric.
  const int count = 24;
  for (int i = 0; i < count; ++i) {
    sam3::write_file_atomic(dir_ / "clip" / ("frame" + std::to_string(i) + ".png"), sam3::encode_rgb_png(sam3::test::frame_of(i).image));
  }
  const auto r = run_command(track_command(dir_ / "clip", dir_ / "out", "--prompt car --fps 10"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("24 frames"), std::string::npos) << r.out;
  const auto tracks = read_json(dir_ / "out" / "tracks.json");
  EXPECT_EQ(tracks["settings"]["hotstart_delay"], 15) << "SAM 3.1's default";
  ASSERT_EQ(tracks["frames"].size(), 24u);
  for (int f = 0; f < count; ++f) EXPECT_DOUBLE_EQ(tracks["frames"][f]["time_s"].get<double>(), f / 10.0);
  expect_stable_ids(tracks, 4);
  EXPECT_TRUE(fs::exists(dir_ / "out" / "davis" / sam3::test::davis_name(23))) << "json,davis by default";
  EXPECT_FALSE(fs::exists(dir_ / "out" / "mots.txt"));
}

TEST_F(TrackCli, AClickedObjectOnItsFrameWithAStride) {
  const auto green = sam3::test::scene()[1];
  const auto at = *sam3::test::where(green, 10);
  const auto r = run_command(track_command(
      video(), dir_ / "out",
      "--every 2 --point " + std::to_string((at[0] + at[2]) / 2) + "," + std::to_string((at[1] + at[3]) / 2) + "@10" + kShortHotstart));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto tracks = read_json(dir_ / "out" / "tracks.json");
  EXPECT_EQ(tracks["labels"], nlohmann::json::array({"object1"}));
  ASSERT_EQ(tracks["frames"].size(), 15u);
  for (size_t k = 0; k < 15; ++k) {
    const auto& frame = tracks["frames"][k];
    EXPECT_EQ(frame["index"], 2 * k) << "source indices, before the stride";
    EXPECT_EQ(frame["objects"].size(), 2 * k < 10 ? 0u : 1u) << "frame " << 2 * k;
    if (2 * k >= 10) EXPECT_EQ(ids_at_centres(frame["objects"], 2 * k)["green"], 1) << "frame " << 2 * k;
  }
}

TEST_F(TrackCli, AFolderOfVideosInShardsOneSubFolderEach) {
  fs::create_directories(dir_ / "videos");
  for (const char* name : {"a.mp4", "b2.mp4", "b10.mkv"}) fs::copy_file(video(), dir_ / "videos" / name, fs::copy_options::none);
  sam3::write_file_atomic(dir_ / "videos" / "broken.mp4", std::string(4096, 'x'));
  const auto out = dir_ / "out";
  std::set<std::string> tracked;
  int failures = 0;
  for (int k = 1; k <= 2; ++k) {
    const auto r = run_command(track_command(dir_ / "videos", out, "--prompt car --every 3 --shard " + std::to_string(k) + "/2"));
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.find(": 10 frames -> ") != std::string::npos) EXPECT_TRUE(tracked.insert(line.substr(0, line.find(':'))).second) << line;
    }
    if (r.err.find("broken.mp4: ") != std::string::npos) {
      ++failures;
      EXPECT_EQ(r.exit_code, 1) << "a failed video fails the shard, after the others";
    } else {
      EXPECT_EQ(r.exit_code, 0) << r.err;
    }
  }
  EXPECT_EQ(tracked, (std::set<std::string>{"a.mp4", "b2.mp4", "b10.mkv"})) << "each video in exactly one shard";
  EXPECT_EQ(failures, 1);
  for (const char* stem : {"a", "b2", "b10"}) {
    const auto tracks = read_json(out / stem / "tracks.json");
    EXPECT_EQ(tracks["frames"].size(), 10u) << stem;
    EXPECT_EQ(tracks["frames"][1]["index"], 3) << "source indices";
  }
  const auto again = run_command(track_command(dir_ / "videos", out, "--prompt car --every 3"));
  EXPECT_NE(again.out.find("0 tracked, 3 already done, 1 failed"), std::string::npos) << again.out;
  EXPECT_NE(run_command(track_command(dir_ / "videos", out, "--prompt car --shard 3/2")).exit_code, 0);
}

// `sam3 label --video` is `sam3 track FOLDER` reached from sam3 label (the same job and shards):
// a Slurm array of label jobs splits a folder of videos, and sam3 track finds them finished.
TEST_F(TrackCli, SamLabelVideoShardsAFolderOfVideosAsSamTrackDoes) {
  fs::create_directories(dir_ / "videos");
  {
    sam3::video_io::VideoEncoder writer(dir_ / "videos" / "a.mp4", kWidth, kHeight, 10.0, sam3::video_io::find_video_encoder("auto"));
    for (int i = 0; i < 6; ++i) writer.add(sam3::test::frame_of(i).image, i / 10.0);
    writer.finish();
  }
  fs::copy_file(dir_ / "videos" / "a.mp4", dir_ / "videos" / "b.mp4");
  const auto out = dir_ / "out";
  const auto label = [&](const std::string& args) {
    return run_command(std::string(SAM3_CLI_PATH) + " label " + quote((dir_ / "videos").string()) + " --models " + quote(kModels) +
                       " --out " + quote(out.string()) + " " + args);
  };
  std::set<std::string> labelled;
  for (int k = 1; k <= 2; ++k) {
    const auto r = label("--video --prompt car --format json,mots --shard " + std::to_string(k) + "/2");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.find(": 6 frames -> ") != std::string::npos) EXPECT_TRUE(labelled.insert(line.substr(0, line.find(':'))).second) << line;
    }
  }
  EXPECT_EQ(labelled, (std::set<std::string>{"a.mp4", "b.mp4"})) << "each video in exactly one shard";
  for (const char* stem : {"a", "b"}) {
    EXPECT_EQ(read_json(out / stem / "tracks.json")["frames"].size(), 6u) << stem;
    EXPECT_TRUE(fs::exists(out / stem / "mots.txt")) << stem;
  }
  const auto track = run_command(track_command(dir_ / "videos", out, "--prompt car --format json,mots"));
  EXPECT_NE(track.out.find("0 tracked, 2 already done"), std::string::npos) << "the same settings: " << track.out;

  // A folder of videos given without --video: it said "0 images" and wrote an empty coco.json.
  const auto as_images = run_command(std::string(SAM3_CLI_PATH) + " label " + quote((dir_ / "videos").string()) +
                                     " --prompt car --models " + quote(kModels) + " --out " + quote((dir_ / "as-images").string()));
  EXPECT_EQ(as_images.exit_code, 3) << as_images.err;
  EXPECT_NE(as_images.err.find("add --video to track them"), std::string::npos) << as_images.err;
  EXPECT_FALSE(fs::exists(dir_ / "as-images"));
  // Usage errors, exit 2 as sam3 track's (docs/video.md; they exited 3).
  auto r = label("--video --prompt car --threshold 0.3");
  EXPECT_EQ(r.exit_code, 2) << "an option for images";
  EXPECT_NE(r.err.find("--threshold"), std::string::npos) << r.err;
  r = label("--video");
  EXPECT_EQ(r.exit_code, 2) << "no text";
  EXPECT_NE(r.err.find("--prompt"), std::string::npos) << r.err;
  fs::create_directories(dir_ / "empty");
  r = run_command(std::string(SAM3_CLI_PATH) + " label " + quote((dir_ / "empty").string()) + " --video --prompt car --models " +
                  quote(kModels) + " --out " + quote(out.string()));
  EXPECT_EQ(r.exit_code, 3) << "no video in the folder";
  EXPECT_NE(r.err.find("not a folder holding video files"), std::string::npos) << r.err;
}

TEST_F(TrackCli, BadInputExitsWithUsageErrors) {
  const auto out = dir_ / "out";
  auto r = run_command(track_command(video(), out, "--point 10,10"));
  EXPECT_EQ(r.exit_code, 2) << "no frame given: a usage error";
  EXPECT_NE(r.err.find("@FRAME"), std::string::npos) << r.err;
  r = run_command(track_command(video(), out, "--prompt car --format json,gif"));
  EXPECT_EQ(r.exit_code, 2) << "an unknown format: a usage error";
  EXPECT_NE(r.err.find("gif"), std::string::npos) << r.err;
  r = run_command(track_command(video(), out, "--point 10,10@99"));
  EXPECT_EQ(r.exit_code, 3) << "a frame the video never reaches";
  // An MP4 declares its frame count: refused before tracking (session 18; it was found at the end).
  EXPECT_NE(r.err.find("object1 is on frame 99, but clip.mp4 has frames 0 to 29"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out)) << "nothing written";
  r = run_command(track_command(dir_ / "none.mp4", out, "--prompt car"));
  EXPECT_EQ(r.exit_code, 3) << "no such video";
  EXPECT_NE(r.err.find("none.mp4"), std::string::npos) << r.err;
  sam3::write_file_atomic(dir_ / "noise.mp4", std::string(4096, 'x'));
  r = run_command(track_command(dir_ / "noise.mp4", out, "--prompt car"));
  EXPECT_EQ(r.exit_code, 3) << "not a video";
  EXPECT_NE(r.err.find("noise.mp4"), std::string::npos) << r.err;
}

}  // namespace
