// Video outputs: each format's bytes read back as a labeling tool reads them (JSON, DAVIS
// palette PNGs, MOTS text and 16-bit PNGs, the overlay video decoded), nothing under a final
// name before finish(), a user's files never replaced, and a killed run resumed to the same
// files an uninterrupted run writes.
#include "sam3/video_outputs.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sam3/error.h"
#include "sam3/mask_encodings.h"
#include "sam3/video_sources.h"
#include "support/error_code.h"
#include "support/files.h"
#include "png_read.h"
#include "video_io/palette_png.h"
#include "video_io/video_encoder.h"
#include "video_test_support.h"

namespace {

namespace fs = std::filesystem;
using sam3::ErrorCode;
using sam3::VideoOutputFormat;
using sam3::test::code_of;
using sam3::test::read_file;
using sam3::test::TempDir;

constexpr int kW = 48, kH = 32;

sam3::VideoInfo scene_info() {
  sam3::VideoInfo info;
  info.name = "scene.mp4";
  info.width = kW;
  info.height = kH;
  info.fps = 10;
  info.frame_count = 12;
  return info;
}

sam3::TrackedObject rect_object(int id, int x0, int y0, int x1, int y1, float score, int prompt = 0) {
  sam3::TrackedObject o;
  o.id = id;
  o.prompt = prompt;
  o.score = score;
  o.box = {static_cast<float>(x0), static_cast<float>(y0), static_cast<float>(x1 - 1), static_cast<float>(y1 - 1)};
  std::vector<std::uint8_t> raster(kW * kH, 0);
  for (int y = y0; y < y1; ++y) {
    for (int x = x0; x < x1; ++x) raster[y * kW + x] = 1;
  }
  o.mask = sam3::Mask::from_raster(kW, kH, raster);
  return o;
}

// Frame f of the scene: object 1 moves right, object 2 (a "person", prompt 1) left, object 3
// enters at frame 9.
// `id_shift` renumbers them as a re-run tracker would.
std::pair<sam3::VideoFrame, sam3::VideoFrameResult> scene(int f, int id_shift = 0) {
  sam3::VideoFrame frame{sam3::test::scene_frame(kW, kH, f), f, f / 10.0};
  sam3::VideoFrameResult result{f, f / 10.0, {}};
  result.objects.push_back(rect_object(1 + id_shift, 2 + f, 4, 12 + f, 14, 0.91f));
  result.objects.push_back(rect_object(2 + id_shift, 34 - f, 16, 44 - f, 28, 0.8f, 1));
  if (f >= 9) result.objects.push_back(rect_object(7 + id_shift, 20, 0, 26, 3, 0.7f));
  return {frame, result};
}

sam3::VideoOutputOptions all_formats(const std::string& encoder = "auto") {
  sam3::VideoOutputOptions o;
  o.formats = {VideoOutputFormat::kJson, VideoOutputFormat::kDavis, VideoOutputFormat::kMots, VideoOutputFormat::kOverlay};
  o.labels = {"car", "person"};
  o.model_json = R"({"generation":"sam3.1-ailia"})";
  o.settings_json = R"({"every":1,"prompt":"car"})";
  o.checkpoint_every = 4;
  o.resume_window = 3;
  o.overlay_encoder = encoder;
  return o;
}

void write_frames(sam3::VideoOutputs& out, int from, int to, int id_shift = 0) {
  for (int f = from; f < to; ++f) {
    auto [frame, result] = scene(f, id_shift);
    out.write(frame, result);
  }
}

std::map<std::string, std::string> snapshot(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) files[fs::relative(e.path(), root).string()] = read_file(e.path());
  }
  return files;
}

TEST(VideoOutputs, TracksJsonHoldsEveryFrameWithCocoRleMasks) {
  TempDir dir("sam3_vout");
  {
    sam3::VideoOutputs out(dir.path(), scene_info(), all_formats());
    write_frames(out, 0, 12);
    out.finish();
  }
  const auto doc = nlohmann::json::parse(read_file(dir / "tracks.json"));
  EXPECT_EQ(doc["format"], "sam3-video-tracks");
  EXPECT_EQ(doc["video"]["width"], kW);
  EXPECT_EQ(doc["video"]["height"], kH);
  EXPECT_EQ(doc["video"]["fps"], 10.0);
  EXPECT_EQ(doc["video"]["frame_count"], 12);
  EXPECT_EQ(doc["labels"], nlohmann::json({"car", "person"}));
  EXPECT_EQ(doc["model"]["generation"], "sam3.1-ailia");
  EXPECT_EQ(doc["settings"]["prompt"], "car");
  ASSERT_EQ(doc["frames"].size(), 12u);
  for (int f = 0; f < 12; ++f) {
    const auto& jf = doc["frames"][f];
    const auto expected = scene(f).second;
    EXPECT_EQ(jf["index"], f);
    EXPECT_DOUBLE_EQ(jf["time_s"].get<double>(), f / 10.0);
    ASSERT_EQ(jf["objects"].size(), expected.objects.size()) << "frame " << f;
    for (size_t k = 0; k < expected.objects.size(); ++k) {
      const auto& jo = jf["objects"][k];
      const auto& eo = expected.objects[k];
      EXPECT_EQ(jo["id"], eo.id);
      EXPECT_EQ(jo["prompt"], eo.prompt);
      EXPECT_NEAR(jo["score"].get<double>(), eo.score, 1e-4);
      EXPECT_EQ(jo["box"], nlohmann::json({eo.box.x0, eo.box.y0, eo.box.x1, eo.box.y1}));
      EXPECT_EQ(jo["mask"]["size"], nlohmann::json({kH, kW}));
      const auto decoded = sam3::rle_decode(jo["mask"]["counts"].get<std::string>(), kH, kW);
      EXPECT_EQ(decoded, eo.mask) << "frame " << f << " object " << eo.id;
      EXPECT_EQ(jo["area"], (eo.box.x1 - eo.box.x0 + 1) * (eo.box.y1 - eo.box.y0 + 1));
    }
  }
  EXPECT_FALSE(fs::exists(dir / "sam3-video.partial")) << "the partial run is removed once finished";
}

TEST(VideoOutputs, DavisPngsAreIndexedWithDavisPaletteAndIds) {
  TempDir dir("sam3_vout");
  {
    sam3::VideoOutputs out(dir.path(), scene_info(), all_formats());
    write_frames(out, 0, 12);
    out.finish();
  }
  for (int f : {0, 5, 11}) {
    const auto png = sam3::test::read_raw_png(dir / "davis" / sam3::test::davis_name(f));
    ASSERT_EQ(png.color_type, PNG_COLOR_TYPE_PALETTE) << "frame " << f;
    ASSERT_EQ(png.bit_depth, 8);
    ASSERT_EQ(png.width, kW);
    ASSERT_EQ(png.palette.size(), 256u);
    EXPECT_EQ(png.palette[0], (std::array<std::uint8_t, 3>{0, 0, 0}));
    EXPECT_EQ(png.palette[1], (std::array<std::uint8_t, 3>{128, 0, 0}));
    EXPECT_EQ(png.palette[2], (std::array<std::uint8_t, 3>{0, 128, 0}));
    EXPECT_EQ(png.palette[7], (std::array<std::uint8_t, 3>{128, 128, 128}));
    EXPECT_EQ(png.palette[8], (std::array<std::uint8_t, 3>{64, 0, 0}));
    std::vector<std::uint16_t> expected(kW * kH, 0);
    for (const auto& o : scene(f).second.objects) {
      for (int i = 0; i < kW * kH; ++i) {
        if (o.mask.at(i % kW, i / kW)) expected[i] = static_cast<std::uint16_t>(o.id);
      }
    }
    EXPECT_EQ(png.pixels, expected) << "frame " << f;
  }
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir / "davis")) files += e.path().extension() == ".png";
  EXPECT_EQ(files, 12);
}

TEST(VideoOutputs, MotsTextAndPngDecodeBackToTheMasks) {
  TempDir dir("sam3_vout");
  {
    sam3::VideoOutputs out(dir.path(), scene_info(), all_formats());
    write_frames(out, 0, 12);
    out.finish();
  }
  std::ifstream text(dir / "mots.txt");
  std::string line;
  std::map<std::pair<int, int>, sam3::Mask> seen;  // (frame, MOTS id) -> mask
  while (std::getline(text, line)) {
    std::istringstream fields(line);
    int frame = -1, id = -1, class_id = -1, h = 0, w = 0;
    std::string rle, extra;
    ASSERT_TRUE(fields >> frame >> id >> class_id >> h >> w >> rle) << line;
    EXPECT_FALSE(fields >> extra) << "six fields: " << line;
    EXPECT_EQ(id / 1000, class_id) << "id = class_id * 1000 + object id";
    EXPECT_EQ(h, kH);
    EXPECT_EQ(w, kW);
    EXPECT_TRUE(seen.emplace(std::pair{frame, id}, sam3::rle_decode(rle, h, w)).second) << "a repeated line: " << line;
  }
  size_t expected_lines = 0;
  for (int f = 0; f < 12; ++f) {
    for (const auto& o : scene(f).second.objects) {
      ++expected_lines;
      const auto it = seen.find({f, 1000 * (1 + o.prompt) + o.id});
      ASSERT_NE(it, seen.end()) << "frame " << f << " object " << o.id;
      EXPECT_EQ(it->second, o.mask);
    }
    const auto png = sam3::test::read_raw_png(dir / "mots" / "instances" / sam3::test::mots_png_name(f));
    ASSERT_EQ(png.bit_depth, 16);
    ASSERT_EQ(png.color_type, PNG_COLOR_TYPE_GRAY);
    for (const auto& o : scene(f).second.objects) {
      for (int i = 0; i < kW * kH; ++i) {
        if (o.mask.at(i % kW, i / kW)) ASSERT_EQ(png.pixels[i], 1000 * (1 + o.prompt) + o.id) << "Datumaro: 1000 * (1 + label) + track id";
      }
    }
  }
  EXPECT_EQ(seen.size(), expected_lines);
  EXPECT_EQ(read_file(dir / "mots" / "instances" / "labels.txt"), "car\nperson\n");
}

void expect_overlay_video(const fs::path& file, int frames) {
  auto source = sam3::open_video_file(file);
  // The container's average rate is its frames over its duration: a last frame of 1 ms (a last
  // segment of one frame, as after an interrupted run) made it 11.2 for 9 frames at 10.
  EXPECT_NEAR(source->info().fps, 10.0, 0.05) << file.filename() << ": every frame lasts 0.1 s, the last one too";
  int n = 0;
  while (auto f = source->next()) {
    EXPECT_NEAR(f->time_s, n / 10.0, 1e-6) << "overlay frame " << n;
    ASSERT_EQ(f->image.width, kW);
    // Outside the objects the frame is the scene; inside object 1 it is tinted in id 1's colour
    // (60, 180, 75), half and half.
    const auto scene_image = sam3::test::scene_frame(kW, kH, n);
    const size_t outside = (30 * kW + 2) * 3, inside = (9 * kW + 6 + n) * 3;
    EXPECT_NEAR(f->image.rgb[outside], scene_image.rgb[outside], 12);
    EXPECT_NEAR(f->image.rgb[inside + 1], (scene_image.rgb[inside + 1] + 180) / 2, 24) << "object 1 tinted, frame " << n;
    ++n;
  }
  EXPECT_EQ(n, frames);
}

TEST(VideoOutputs, OverlayVideoJoinsItsSegmentsAtTheFramesTimes) {
  TempDir dir("sam3_vout");
  {
    sam3::VideoOutputs out(dir.path(), scene_info(), all_formats("mpeg4"));
    write_frames(out, 0, 12);  // checkpoints every 4 frames: three segments
    out.finish();
  }
  expect_overlay_video(dir / "overlay.mp4", 12);
}

TEST(VideoOutputs, OverlayInH264JoinsToo) {
  if (sam3::video_io::find_video_encoder("h264").empty()) GTEST_SKIP() << "no H.264 encoder in this FFmpeg";
  TempDir dir("sam3_vout");
  {
    sam3::VideoOutputs out(dir.path(), scene_info(), all_formats("h264"));
    write_frames(out, 0, 9);
    out.finish();
  }
  expect_overlay_video(dir / "overlay.mp4", 9);
}

TEST(VideoOutputs, OverlayAsPngsWhenAskedOrWithoutEncoder) {
  TempDir dir("sam3_vout");
  {
    sam3::VideoOutputs out(dir.path(), scene_info(), all_formats("png"));
    write_frames(out, 0, 3);
    out.finish();
  }
  EXPECT_FALSE(fs::exists(dir / "overlay.mp4"));
  const auto png = sam3::load_image(dir / "overlay" / "00002.png");
  EXPECT_EQ(png.width, kW);
  const auto scene_image = sam3::test::scene_frame(kW, kH, 2);
  const std::uint8_t colour[3] = {60, 180, 75};  // id 1's
  for (int c = 0; c < 3; ++c) {
    const size_t at = (9 * kW + 8) * 3 + c;
    EXPECT_EQ(png.rgb[at], (scene_image.rgb[at] + colour[c]) / 2) << "object 1 tinted in its colour, channel " << c;
  }
}

TEST(VideoOutputs, NothingUnderAFinalNameBeforeFinish) {
  TempDir dir("sam3_vout");
  sam3::VideoOutputs out(dir.path(), scene_info(), all_formats());
  write_frames(out, 0, 6);
  for (const char* name : {"tracks.json", "davis", "mots.txt", "mots", "overlay.mp4", "overlay", "sam3-video.json"}) {
    EXPECT_FALSE(fs::exists(dir / name)) << name << " visible before finish()";
  }
  out.finish();
  for (const char* name : {"tracks.json", "davis", "mots.txt", "mots", "overlay.mp4"}) {
    EXPECT_TRUE(fs::exists(dir / name)) << name;
  }
}

TEST(VideoOutputs, AnInterruptedRunLeavesThePreviousOutputsAsTheyWere) {
  TempDir dir("sam3_vout");
  {
    sam3::VideoOutputs out(dir.path(), scene_info(), all_formats());
    write_frames(out, 0, 5);
    out.finish();
  }
  auto before = snapshot(dir.path());
  {
    auto options = all_formats();
    options.settings_json = R"({"every":1,"prompt":"truck"})";
    sam3::VideoOutputs out(dir.path(), scene_info(), options);
    write_frames(out, 0, 9);
  }  // no finish(): stopped
  auto after = snapshot(dir.path());
  for (auto it = after.begin(); it != after.end();) {  // the partial run and sam3's bookkeeping aside
    it = it->first.rfind("sam3-video.partial", 0) == 0 || it->first.rfind(".sam3", 0) == 0 ? after.erase(it) : std::next(it);
  }
  for (auto it = before.begin(); it != before.end();) {
    it = it->first.rfind(".sam3", 0) == 0 ? before.erase(it) : std::next(it);
  }
  EXPECT_EQ(after, before);
}

// A run that writes no frame (its tracker refused the first one, it was stopped at once) has
// nothing to resume: it leaves nothing, and a folder it created goes too.
TEST(VideoOutputs, ARunThatWroteNoFrameLeavesNothing) {
  TempDir dir("sam3_vout");
  { sam3::VideoOutputs out(dir / "new", scene_info(), all_formats()); }
  EXPECT_FALSE(fs::exists(dir / "new")) << "the folder the run created";

  std::ofstream(dir / "notes.txt") << "mine";
  { sam3::VideoOutputs out(dir.path(), scene_info(), all_formats()); }
  std::set<std::string> left;
  for (const auto& e : fs::directory_iterator(dir.path())) left.insert(e.path().filename().string());
  EXPECT_EQ(left, (std::set<std::string>{".sam3-lock", "notes.txt"})) << "beside the user's file, only the lock file";

  {
    sam3::VideoOutputs out(dir.path(), scene_info(), all_formats());
    write_frames(out, 0, 3);
  }  // stopped after three frames: resumable
  EXPECT_TRUE(fs::exists(dir / "sam3-video.partial")) << "a run that wrote frames keeps them";
}

// A second run with fewer formats (or the overlay as PNGs instead of a video) leaves only its
// own outputs: the first run's other formats are not kept beside them as if they were this run's.
TEST(VideoOutputs, ARunWithFewerFormatsLeavesNoneOfAnEarlierRunsOthers) {
  TempDir dir("sam3_vout");
  {
    sam3::VideoOutputs out(dir.path(), scene_info(), all_formats());
    write_frames(out, 0, 4);
    out.finish();
  }
  ASSERT_TRUE(fs::exists(dir / "davis"));
  ASSERT_TRUE(fs::exists(dir / "overlay.mp4"));
  std::ofstream(dir / "notes.txt") << "mine";
  {
    auto options = all_formats();
    options.formats = {sam3::VideoOutputFormat::kJson};
    sam3::VideoOutputs out(dir.path(), scene_info(), options);
    write_frames(out, 0, 4);
    out.finish();
  }
  std::set<std::string> left;
  for (const auto& e : fs::directory_iterator(dir.path())) left.insert(e.path().filename().string());
  EXPECT_EQ(left, (std::set<std::string>{".sam3-lock", ".sam3-outputs.json", "notes.txt", "sam3-video.json", "tracks.json"}));
}

TEST(VideoOutputs, NeverReplacesAFileSam3DidNotWrite) {
  TempDir dir("sam3_vout");
  std::ofstream(dir / "tracks.json") << "my own notes";
  EXPECT_EQ(code_of([&] { sam3::VideoOutputs(dir.path(), scene_info(), all_formats()); }), ErrorCode::kIo);
  EXPECT_EQ(read_file(dir / "tracks.json"), "my own notes");
}

// A run killed (no destructor, no finish) after `frames` frames, in a child process.
void killed_run(const fs::path& folder, int frames) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      auto* out = new sam3::VideoOutputs(folder, scene_info(), all_formats("mpeg4"));
      write_frames(*out, 0, frames);
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);  // as SIGKILL would: nothing flushed, nothing finished
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(VideoOutputs, AKilledRunResumesToTheFilesOfAnUninterruptedOne) {
  TempDir whole("sam3_vout_whole");
  {
    sam3::VideoOutputs out(whole.path(), scene_info(), all_formats("mpeg4"));
    write_frames(out, 0, 12);
    out.finish();
  }
  TempDir dir("sam3_vout");
  killed_run(dir.path(), 10);  // checkpoints after frames 3 and 7; frames 8 and 9 not committed
  EXPECT_FALSE(fs::exists(dir / "tracks.json"));
  {
    sam3::VideoOutputs out(dir.path(), scene_info(), all_formats("mpeg4"));
    const auto& from = out.resume_point();
    EXPECT_EQ(from.committed_frames, 8);
    EXPECT_EQ(from.last_committed_index, 7);
    EXPECT_EQ(from.restart_index, 5) << "a window of 3 frames re-run";
    ASSERT_TRUE(from.last_result);
    EXPECT_EQ(from.last_result->index, 7);
    EXPECT_EQ(from.last_result->objects.at(1).mask, scene(7).second.objects.at(1).mask);
    write_frames(out, static_cast<int>(from.restart_index), 12, 20);  // the re-run tracker numbers from 21
    out.finish();
  }
  const auto resumed = nlohmann::json::parse(read_file(dir / "tracks.json"));
  auto expected = nlohmann::json::parse(read_file(whole / "tracks.json"));
  // Objects 1 and 2 keep their ids; object 3 (7 in the first run) is new after the resume:
  // its id is the next after every id written (3).
  for (auto& frame : expected["frames"]) {
    for (auto& object : frame["objects"]) {
      if (object["id"] == 7) object["id"] = 3;
    }
  }
  EXPECT_EQ(resumed, expected);
  const auto a = snapshot(whole / "davis"), b = snapshot(dir / "davis");
  EXPECT_EQ(a.size(), b.size());
  for (const auto& [name, bytes] : a) {
    if (name <= "00008.png") EXPECT_EQ(b.at(name), bytes) << name;
  }
  EXPECT_EQ(snapshot(dir / "mots").size(), snapshot(whole / "mots").size());
  std::ifstream text(dir / "mots.txt");
  std::string line;
  int lines = 0;
  while (std::getline(text, line)) ++lines;
  EXPECT_EQ(lines, 12 * 2 + 3) << "each frame's objects once";
  expect_overlay_video(dir / "overlay.mp4", 12);
}

TEST(VideoOutputs, OtherSettingsStartOver) {
  TempDir dir("sam3_vout");
  killed_run(dir.path(), 6);
  auto options = all_formats("mpeg4");
  options.settings_json = R"({"every":2})";
  sam3::VideoOutputs out(dir.path(), scene_info(), options);
  EXPECT_EQ(out.resume_point().committed_frames, 0);
  EXPECT_EQ(out.resume_point().restart_index, 0);
}

TEST(VideoOutputs, APartialRunThatDisagreesWithItsCheckpointStartsOver) {
  TempDir dir("sam3_vout");
  killed_run(dir.path(), 6);                                                  // checkpoint after frame 3
  fs::resize_file(dir / "sam3-video.partial" / "json" / "frames.jsonl", 10);  // shorter than the checkpoint says
  {
    sam3::VideoOutputs out(dir.path(), scene_info(), all_formats("mpeg4"));
    EXPECT_EQ(out.resume_point().committed_frames, 0);
    EXPECT_EQ(out.resume_point().restart_index, 0);
    write_frames(out, 0, 12);
    out.finish();
  }
  const auto doc = nlohmann::json::parse(read_file(dir / "tracks.json"));
  ASSERT_EQ(doc["frames"].size(), 12u);
  EXPECT_EQ(doc["frames"][0]["objects"][0]["id"], 1);
  expect_overlay_video(dir / "overlay.mp4", 12);
}

TEST(VideoOutputs, ACheckpointOfAnotherShapeStartsOverInsteadOfThrowing) {
  // A version of another type, or a checkpoint that is not an object: value() and operator[]
  // threw nlohmann's type errors out of the constructor before.
  for (const std::string& checkpoint : {std::string(R"({"version": "2"})"), std::string("[1, 2]"), std::string("7")}) {
    TempDir dir("sam3_vout");
    killed_run(dir.path(), 6);
    const fs::path progress = dir / "sam3-video.partial" / "progress.json";
    ASSERT_TRUE(fs::exists(progress)) << "the killed run left no checkpoint";
    std::ofstream(progress, std::ios::trunc) << checkpoint;
    sam3::VideoOutputs out(dir.path(), scene_info(), all_formats("mpeg4"));
    EXPECT_EQ(out.resume_point().committed_frames, 0) << checkpoint;
  }
}

TEST(VideoOutputs, ResultsThatDoNotFitAreRefused) {
  TempDir dir("sam3_vout");
  auto options = all_formats("png");
  EXPECT_EQ(code_of([&] {
              auto bad = options;
              bad.model_json = "{not json";
              sam3::VideoOutputs(dir.path(), scene_info(), bad);
            }),
            ErrorCode::kInvalidArgument);
  sam3::VideoOutputs out(dir.path(), scene_info(), options);
  auto [frame, result] = scene(0);
  auto small = result;
  small.objects[0].mask = sam3::Mask(10, kH);
  EXPECT_EQ(code_of([&] { out.write(frame, small); }), ErrorCode::kInvalidArgument);
  auto unlabelled = result;
  unlabelled.objects[0].prompt = 2;  // two labels given
  EXPECT_EQ(code_of([&] { out.write(frame, unlabelled); }), ErrorCode::kInvalidArgument);
  out.write(frame, result);
  EXPECT_EQ(code_of([&] { out.write(frame, result); }), ErrorCode::kInvalidArgument) << "the same frame twice";
}

TEST(VideoOutputs, FormatLimitsOnIdsAreTypedErrors) {
  TempDir dir("sam3_vout");
  auto [frame, result] = scene(0);
  result.objects[1].id = 256;
  {
    sam3::VideoOutputOptions davis;
    davis.formats = {VideoOutputFormat::kDavis};
    sam3::VideoOutputs out(dir / "davis", scene_info(), davis);
    EXPECT_EQ(code_of([&] { out.write(frame, result); }), ErrorCode::kInvalidArgument);
  }
  result.objects[1].id = 1000;
  sam3::VideoOutputOptions mots;
  mots.formats = {VideoOutputFormat::kMots};
  sam3::VideoOutputs out(dir / "mots", scene_info(), mots);
  EXPECT_EQ(code_of([&] { out.write(frame, result); }), ErrorCode::kInvalidArgument);
}

// A stand-in tracker: the white square of the scene is object 1 (pixels brighter than 200).
sam3::VideoFrameResult square_result(const sam3::VideoFrame& frame) {
  sam3::VideoFrameResult r{frame.index, frame.time_s, {}};
  sam3::TrackedObject o;
  o.id = 1;
  o.score = 0.9f;
  std::vector<std::uint8_t> raster(frame.image.rgb.size() / 3, 0);
  o.box = {1e9f, 1e9f, -1, -1};
  for (int y = 0; y < frame.image.height; ++y) {
    for (int x = 0; x < frame.image.width; ++x) {
      const auto* p = &frame.image.rgb[(y * frame.image.width + x) * 3];
      if (p[0] > 200 && p[1] > 200 && p[2] > 200) {
        raster[y * frame.image.width + x] = 1;
        o.box = {std::min(o.box.x0, float(x)), std::min(o.box.y0, float(y)), std::max(o.box.x1, float(x)), std::max(o.box.y1, float(y))};
      }
    }
  }
  o.mask = sam3::Mask::from_raster(frame.image.width, frame.image.height, raster);
  r.objects.push_back(o);
  return r;
}

TEST(VideoOutputs, FromAVideoFileWithAStrideTheFilesNameTheSourceFrames) {
  TempDir dir("sam3_vout");
  sam3::test::write_scene_video(dir / "clip.mp4", 96, 64, sam3::test::regular_times(9, 10.0), "mpeg4");
  auto source = sam3::open_frame_source(dir / "clip.mp4", {.every = 3});
  auto options = all_formats("mpeg4");
  {
    sam3::VideoOutputs out(dir / "out", source->info(), options);
    while (auto frame = source->next()) out.write(*frame, square_result(*frame));
    out.finish();
  }
  const auto doc = nlohmann::json::parse(read_file(dir / "out" / "tracks.json"));
  ASSERT_EQ(doc["frames"].size(), 3u);
  EXPECT_EQ(doc["video"]["frame_count"], 3);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(doc["frames"][k]["index"], 3 * k);
    EXPECT_NEAR(doc["frames"][k]["time_s"].get<double>(), 0.3 * k, 1e-6);
    const auto& box = doc["frames"][k]["objects"][0]["box"];
    EXPECT_NEAR(box[0].get<double>(), sam3::test::square_x(96, 3 * k), 1.0) << "the square found where it was drawn";
    EXPECT_TRUE(fs::exists(dir / "out" / "davis" / sam3::test::davis_name(3 * k)));
    EXPECT_TRUE(fs::exists(dir / "out" / "mots" / "instances" / sam3::test::mots_png_name(3 * k)));
  }
  auto overlay = sam3::open_video_file(dir / "out" / "overlay.mp4");
  std::vector<double> times;
  while (auto f = overlay->next()) times.push_back(f->time_s);
  EXPECT_EQ(times.size(), 3u);
  for (size_t k = 0; k < times.size(); ++k) EXPECT_NEAR(times[k], 0.3 * k, 1e-6) << "the source frames' times";
}

TEST(VideoOutputFormat, NamesRoundTrip) {
  for (auto f : {VideoOutputFormat::kJson, VideoOutputFormat::kDavis, VideoOutputFormat::kMots, VideoOutputFormat::kOverlay}) {
    EXPECT_EQ(sam3::parse_video_output_format(sam3::video_output_format_name(f)), f);
  }
  EXPECT_EQ(code_of([] { sam3::parse_video_output_format("avi"); }), ErrorCode::kInvalidArgument);
}

}  // namespace
