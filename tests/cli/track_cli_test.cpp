// `sam3 track` as a user runs it: a folder of generated frames (synthetic_video.h: moving,
// entering, leaving and crossing squares), the generated SAM 3.1 bundle, the JSON it writes.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "sam3/export.h"
#include "sam3/files.h"
#include "sam3/mask_encodings.h"
#include "support/files.h"
#include "support/run_command.h"
#include "video/synthetic_video.h"

namespace {

namespace fs = std::filesystem;
using sam3::test::quote;
using sam3::test::run_command;

class TrackCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = sam3::test::fresh_test_dir("sam3_track_cli");
    frames_ = dir_ / "clip";
    // Names that sort wrongly as text (frame10 before frame2): the order must be numeric.
    for (int i = 0; i < frames_count_; ++i) {
      sam3::write_file_atomic(frames_ / ("frame" + std::to_string(i) + ".png"), sam3::encode_rgb_png(sam3::test::frame_of(i).image));
    }
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string track(const std::string& args) {
    return std::string(SAM3_CLI_PATH) + " track " + quote(frames_.string()) + " --models " +
           quote((fs::path(SAM3_TEST_MODELS_DIR) / "sam3.1-video").string()) + " --out " + quote((dir_ / "out").string()) + " " + args;
  }
  fs::path dir_, frames_;
  int frames_count_ = 24;
};

TEST_F(TrackCli, EveryCarKeepsItsIdInTheJson) {
  const auto r = run_command(track("--prompt car --fps 10"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("24 frames"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(sam3::test::read_file(dir_ / "out" / "clip.json"));
  EXPECT_EQ(j["video"]["width"], sam3::test::kWidth);
  EXPECT_EQ(j["settings"]["hotstart_delay"], 15);
  ASSERT_EQ(j["frames"].size(), 24u);
  std::map<std::string, std::set<int>> ids;
  for (size_t f = 0; f < j["frames"].size(); ++f) {
    const auto& frame = j["frames"][f];
    EXPECT_EQ(frame["index"], f);
    EXPECT_DOUBLE_EQ(frame["time"].get<double>(), f / 10.0);
    const auto image = sam3::test::frame_of(static_cast<int>(f)).image;
    for (const auto& s : sam3::test::scene()) {
      const auto box = sam3::test::where(s, static_cast<int>(f));
      if (!box) continue;
      const int cx = std::clamp(((*box)[0] + (*box)[2]) / 2, 0, sam3::test::kWidth - 1);
      const int cy = std::clamp(((*box)[1] + (*box)[3]) / 2, 0, sam3::test::kHeight - 1);
      const size_t at = static_cast<size_t>(cy) * sam3::test::kWidth + cx;
      if (image.rgb[at * 3] != s.rgb[0] || image.rgb[at * 3 + 1] != s.rgb[1] || image.rgb[at * 3 + 2] != s.rgb[2]) continue;
      int found = 0;
      for (const auto& o : frame["objects"]) {
        const auto mask = sam3::rle_decode(o["mask"]["counts"], sam3::test::kHeight, sam3::test::kWidth);
        if (mask.data[at]) found = o["id"];
      }
      EXPECT_NE(found, 0) << s.name << " on frame " << f;
      if (found) ids[s.name].insert(found);
    }
  }
  std::set<int> all;
  for (const auto& [name, set] : ids) {
    EXPECT_EQ(set.size(), 1u) << name << " changed id";
    all.insert(set.begin(), set.end());
  }
  EXPECT_EQ(all.size(), 4u);
}

TEST_F(TrackCli, AClickedObjectOnItsFrame) {
  const auto green = sam3::test::scene()[1];
  const auto at = *sam3::test::where(green, 10);
  const auto r = run_command(track("--point " + std::to_string((at[0] + at[2]) / 2) + "," + std::to_string((at[1] + at[3]) / 2) +
                                   "@10 --hotstart-delay 2 --hotstart-unmatched 1 --hotstart-duplicate 1"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(sam3::test::read_file(dir_ / "out" / "clip.json"));
  ASSERT_EQ(j["frames"].size(), 24u);
  for (size_t f = 0; f < 24; ++f) EXPECT_EQ(j["frames"][f]["objects"].size(), f < 10 ? 0u : 1u) << "frame " << f;
}

TEST_F(TrackCli, BadInputExitsWithUsageErrors) {
  auto r = run_command(track("--point 10,10"));
  EXPECT_EQ(r.exit_code, 3) << "no frame given";
  EXPECT_NE(r.err.find("@FRAME"), std::string::npos) << r.err;
  r = run_command(track("--point 10,10@99"));
  EXPECT_EQ(r.exit_code, 3) << "a frame the video never reaches";
  EXPECT_NE(r.err.find("never reached"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "out" / "clip.json")) << "nothing half-written";
  r = run_command(std::string(SAM3_CLI_PATH) + " track " + quote((dir_ / "none").string()) + " --prompt car --out " +
                  quote((dir_ / "out").string()) + " --models " + quote((fs::path(SAM3_TEST_MODELS_DIR) / "sam3.1-video").string()));
  EXPECT_EQ(r.exit_code, 3) << r.err;
}

}  // namespace
