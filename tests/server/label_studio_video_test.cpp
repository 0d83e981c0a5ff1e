// sam3 serve as Label Studio's ML backend on a video project (<Video> + <VideoRectangle>), spoken
// to as Label Studio speaks to its own SAM2 video backend: a box drawn on a keyframe comes back
// as that region's sequence through the next frames; the labels (or a typed text) track every
// instance as its own region. The video is the synthetic scene (video/synthetic_video.h) encoded
// by FFmpeg, served by a loopback stand-in for Label Studio (behind its token) and by another
// host (a URL the backend must fetch, under the same guards as task images).
#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/serve.h"
#include "support/server_process.h"
#include "support/stand_in.h"
#include "video/synthetic_video.h"
#include "video_io/video_encoder.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using sam3::test::kFrames;
using sam3::test::kHeight;
using sam3::test::kWidth;
using sam3::test::ServerProcess;
using sam3::test::StandIn;

const std::string kToken = "3f1c0ffee0123456789abcdef0123456789abcde";

// The labeling config of Label Studio's SAM2 video example, with predicted_values naming the
// generated bundle's concept.
const char* kConfig = R"(<View>
  <Labels name="videoLabels" toName="video" allowEmpty="true">
    <Label value="Car" predicted_values="car" background="#11A39E"/>
  </Labels>
  <Video name="video" value="$video" framerate="10.0"/>
  <VideoRectangle name="box" toName="video" smart="true"/>
</View>)";

class LabelStudioVideo : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("sam3_ls_video_" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    {
      sam3::video_io::VideoEncoder writer(*dir_ / "clip.mp4", kWidth, kHeight, 10.0, sam3::video_io::find_video_encoder("auto"));
      for (int i = 0; i < kFrames; ++i) writer.add(sam3::test::frame_of(i).image, i / 10.0);
      writer.finish();
    }
    std::ifstream in(*dir_ / "clip.mp4", std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    video_ = new std::string(bytes.str());
    ls_ = new StandIn;
    ls_->http().Get("/data/upload/1/clip.mp4", [](const httplib::Request& req, httplib::Response& res) {
      if (req.get_header_value("Authorization") != "Token " + kToken)
        res.status = 401;
      else
        res.set_content(*video_, "video/mp4");
    });
    other_ = new StandIn;
    other_->http().Get("/clip.mp4", [](const httplib::Request&, httplib::Response& res) { res.set_content(*video_, "video/mp4"); });
    other_->http().Get("/not-a-video.mp4",
                       [](const httplib::Request&, httplib::Response& res) { res.set_content(std::string(4096, 'x'), "video/mp4"); });
    for (auto* s : {ls_, other_}) s->start();
    // The server's temporary folder is the suite's own, so that what it leaves is seen (and
    // removed with the suite's folder).
    fs::create_directories(*dir_ / "server-tmp");
    if (const char* old = std::getenv("TMPDIR")) old_tmpdir_ = new std::string(old);
    ::setenv("TMPDIR", (*dir_ / "server-tmp").c_str(), 1);
    server_ = sam3::test::start_serve("sam3.1-video", {"--label-studio-url", ls_->url(), "--label-studio-api-key", kToken, "--fetch-host",
                                                       "127.0.0.1:" + std::to_string(other_->port()), "--threads", "1"});
    ASSERT_GT(server_->port(), 0) << server_->first_line();
  }
  static void TearDownTestSuite() {
    // Stopped as an operator stops it (a SIGKILL could come before a worker dropped its copy of the
    // last task's video, leaving /tmp/sam3-ls-video-* behind under load).
    EXPECT_EQ(server_->stop(SIGTERM), 0);
    expect_no_copies("after the server stopped");
    if (old_tmpdir_)
      ::setenv("TMPDIR", old_tmpdir_->c_str(), 1);
    else
      ::unsetenv("TMPDIR");
    delete old_tmpdir_;
    delete server_;
    delete ls_;
    delete other_;
    delete video_;
    fs::remove_all(*dir_);
    delete dir_;
  }

  static json predict(const json& tasks, const json& context, int expect = 200, ServerProcess* server = nullptr) {
    httplib::Client c("127.0.0.1", (server ? server : server_)->port());
    c.set_read_timeout(120, 0);
    const json body = {{"tasks", tasks},
                       {"model_version", "x"},
                       {"project", "1.1700000000"},
                       {"label_config", kConfig},
                       {"params", {{"login", nullptr}, {"password", nullptr}, {"context", context}}}};
    auto r = c.Post("/predict", body.dump(), "application/json");
    EXPECT_TRUE(r) << "no answer";
    if (!r) return {};
    // Answered: the task's video copy is already gone (a worker dropped it just after the answer,
    // and a server killed then left /tmp/sam3-ls-video-* behind).
    expect_no_copies("after an answer " + std::to_string(r->status));
    EXPECT_EQ(r->status, expect) << r->body;
    return json::parse(r->body, nullptr, false);
  }

  static void expect_no_copies(const std::string& when) {
    for (const auto& entry : fs::directory_iterator(*dir_ / "server-tmp")) ADD_FAILURE() << when << ": " << entry.path() << " is left";
  }

  static json task(const std::string& url) { return json::array({{{"id", 4}, {"data", {{"video", url}}}, {"project", 1}}}); }

  // A square's box on a (0-based) frame in Label Studio's percent.
  static json truth(const char* name, int frame) {
    for (const auto& s : sam3::test::scene()) {
      if (std::string(s.name) != name) continue;
      const auto r = *sam3::test::where(s, frame);
      return {{"x", 100.0 * r[0] / kWidth},
              {"y", 100.0 * r[1] / kHeight},
              {"width", 100.0 * (r[2] - r[0]) / kWidth},
              {"height", 100.0 * (r[3] - r[1]) / kHeight}};
    }
    return {};
  }

  // Interactive mode's context as the editor sends one drawn VideoRectangle labelled Car.
  static json drawn_region(const std::string& id, const json& keyframe) {
    return {{"result",
             json::array({{{"id", id},
                           {"from_name", "box"},
                           {"to_name", "video"},
                           {"type", "videorectangle"},
                           {"origin", "manual"},
                           {"value", {{"framesCount", kFrames}, {"duration", 3.0}, {"sequence", {keyframe}}, {"labels", {"Car"}}}}}})}};
  }

  // Within `tolerance` percent on each of x, y, width, height.
  static void expect_near(const json& item, const json& want, double tolerance, const std::string& what) {
    for (const char* k : {"x", "y", "width", "height"})
      EXPECT_NEAR(item[k].get<double>(), want[k].get<double>(), tolerance) << what << " " << k << ": " << item.dump();
  }

  static fs::path* dir_;
  static std::string* old_tmpdir_;
  static std::string* video_;
  static StandIn *ls_, *other_;
  static ServerProcess* server_;
};

fs::path* LabelStudioVideo::dir_ = nullptr;
std::string* LabelStudioVideo::old_tmpdir_ = nullptr;
std::string* LabelStudioVideo::video_ = nullptr;
StandIn* LabelStudioVideo::ls_ = nullptr;
StandIn* LabelStudioVideo::other_ = nullptr;
ServerProcess* LabelStudioVideo::server_ = nullptr;

TEST_F(LabelStudioVideo, ABoxOnAKeyframeComesBackAsItsSequenceThroughTheNextTenFrames) {
  // As the editor sends a smart VideoRectangle: red's box drawn on frame 3 (Label Studio counts from 1).
  json keyframe = truth("red", 2);
  keyframe.update({{"frame", 3}, {"enabled", true}, {"rotation", 0}, {"time", 0.3}});
  const json answer = predict(task("/data/upload/1/clip.mp4"), drawn_region("r3dB0x", keyframe));
  ASSERT_EQ(answer["results"].size(), 1u);
  const json& result = answer["results"][0]["result"];
  ASSERT_EQ(result.size(), 1u) << result.dump();
  const json& region = result[0];
  EXPECT_EQ(region["id"], "r3dB0x") << "the annotator's region, extended";
  EXPECT_EQ(region["type"], "videorectangle");
  EXPECT_EQ(region["from_name"], "box");
  EXPECT_EQ(region["to_name"], "video");
  EXPECT_EQ(region["value"]["labels"], json::array({"Car"}));
  EXPECT_EQ(region["value"]["framesCount"], kFrames);
  EXPECT_NEAR(region["value"]["duration"].get<double>(), 3.0, 0.2);
  const json& sequence = region["value"]["sequence"];
  ASSERT_EQ(sequence.size(), 11u) << "the keyframe, then frames 4 to 13: " << sequence.dump();
  EXPECT_EQ(sequence[0], keyframe) << "the annotator's keyframe stays as drawn";
  for (int k = 1; k <= 10; ++k) {
    const json& item = sequence[k];
    EXPECT_EQ(item["frame"], 3 + k);
    EXPECT_EQ(item["enabled"], true);
    EXPECT_EQ(item["rotation"], 0);
    // As Label Studio writes a keyframe's time (frame / the Video tag's framerate), without float
    // noise: frame 4 is "0.4", never 0.30000000000000004-like products of the stream's time base.
    const int frame = 3 + k;
    const std::string time = frame < 10 ? "0." + std::to_string(frame) : std::to_string(frame / 10) + "." + std::to_string(frame % 10);
    EXPECT_EQ(item["time"].dump(), time) << "frame " << frame;
    expect_near(item, truth("red", 2 + k), 3.0, "frame " + std::to_string(3 + k));
  }
}

TEST_F(LabelStudioVideo, TheLabelsAsPromptsTrackEveryInstanceAsItsOwnLabelledRegion) {
  const json answer = predict(task("/data/upload/1/clip.mp4"), nullptr);
  ASSERT_EQ(answer["results"].size(), 1u);
  const json& result = answer["results"][0]["result"];
  // Frames 1 to 10: red and blue from the start (green enters on frame 9, too late to be confirmed
  // and shown within these frames is allowed either way).
  int red = 0, blue = 0;
  for (const auto& region : result) {
    EXPECT_EQ(region["type"], "videorectangle");
    EXPECT_EQ(region["value"]["labels"], json::array({"Car"}));
    const json& first = region["value"]["sequence"][0];
    if (first["frame"] != 1) continue;
    const bool is_red = std::abs(first["x"].get<double>() - truth("red", 0)["x"].get<double>()) < 3;
    (is_red ? red : blue)++;
    const json& sequence = region["value"]["sequence"];
    ASSERT_EQ(sequence.size(), 10u) << "one keyframe a frame, 1 to 10: " << sequence.dump();
    for (int f = 0; f < 10; ++f) {
      EXPECT_EQ(sequence[f]["frame"], f + 1);
      EXPECT_EQ(sequence[f]["enabled"], true);
      expect_near(sequence[f], truth(is_red ? "red" : "blue", f), 3.0, region["id"].get<std::string>());
    }
  }
  EXPECT_EQ(red, 1) << result.dump();
  EXPECT_EQ(blue, 1) << result.dump();
}

TEST_F(LabelStudioVideo, ATypedTextTracksItsInstancesUnderTheLabelItNames) {
  const json context = {
      {"result", json::array({{{"from_name", "prompt"}, {"to_name", "video"}, {"type", "textarea"}, {"value", {{"text", {"car"}}}}}})}};
  const json answer = predict(task("/data/upload/1/clip.mp4"), context);
  const json& result = answer["results"][0]["result"];
  ASSERT_GE(result.size(), 2u) << result.dump();
  for (const auto& region : result) EXPECT_EQ(region["value"]["labels"], json::array({"Car"})) << "\"car\" is Car's predicted value";
}

TEST_F(LabelStudioVideo, AVideoUrlOnAnAllowedHostIsFetchedAndOthersAreRefused) {
  json keyframe = truth("red", 0);
  keyframe.update({{"frame", 1}, {"enabled", true}, {"rotation", 0}, {"time", 0.0}});
  const json context = {{"result", json::array({{{"id", "a"},
                                                 {"type", "videorectangle"},
                                                 {"value", {{"framesCount", kFrames}, {"duration", 3.0}, {"sequence", {keyframe}}}}}})}};
  const json fetched = predict(task(other_->url() + "/clip.mp4"), context);
  ASSERT_EQ(fetched["results"][0]["result"].size(), 1u) << fetched.dump();
  EXPECT_EQ(fetched["results"][0]["result"][0]["value"]["sequence"].size(), 11u);
  for (const auto& seen : other_->seen()) EXPECT_EQ(seen.authorization, "") << "Label Studio's token went to " << seen.path;

  const json refused = predict(task("http://127.0.0.2:9/clip.mp4"), context, 403);
  EXPECT_EQ(refused["error"]["code"], "fetch_refused") << refused.dump();
  EXPECT_NE(refused.dump().find("--fetch-host"), std::string::npos) << refused.dump();
  const json broken = predict(task(other_->url() + "/not-a-video.mp4"), context, 400);
  EXPECT_EQ(broken["error"]["code"], "invalid_video") << broken.dump();
  // Named as the task names it, never by the server's private copy (it said "/tmp/sam3-ls-video-XXXXXX/video").
  const std::string message = broken["error"]["message"];
  EXPECT_NE(message.find(other_->url() + "/not-a-video.mp4"), std::string::npos) << message;
  EXPECT_EQ(message.find(fs::temp_directory_path().string()), std::string::npos) << message;
  EXPECT_EQ(message.find("sam3-ls-video"), std::string::npos) << message;
}

// A region whose keyframe the tracker finds nothing from (a box on the background, on the last
// frame, partly outside the frame) comes back as the annotator drew it: Label Studio replaces the
// region with the answer's, so an empty result would lose nothing of sam3's but tell nothing either.
TEST_F(LabelStudioVideo, ABoxTheTrackerFindsNothingFromComesBackAsDrawn) {
  json background = {{"frame", 3}, {"x", 50}, {"y", 5}, {"width", 10}, {"height", 10}, {"enabled", true}, {"rotation", 0}, {"time", 0.3}};
  json last = truth("red", kFrames - 1);
  last.update({{"frame", kFrames}, {"enabled", true}, {"rotation", 0}, {"time", 3.0}});
  json outside = {{"frame", 3}, {"x", 95}, {"y", 5}, {"width", 12.5}, {"height", 10}, {"enabled", true}, {"rotation", 0}, {"time", 0.3}};
  for (const auto& [name, keyframe] :
       {std::pair{"on the background", background}, {"on the last frame", last}, {"partly outside", outside}}) {
    const json answer = predict(task("/data/upload/1/clip.mp4"), drawn_region("drawn", keyframe));
    const json& result = answer["results"][0]["result"];
    ASSERT_EQ(result.size(), 1u) << "the region " << name << " was not answered: " << answer.dump();
    EXPECT_EQ(result[0]["id"], "drawn") << name;
    EXPECT_EQ(result[0]["value"]["labels"], json::array({"Car"})) << name;
    ASSERT_GE(result[0]["value"]["sequence"].size(), 1u) << name;
    EXPECT_EQ(result[0]["value"]["sequence"][0], keyframe) << name << ": its keyframe as drawn";
  }
}

// A keyframe past the video's end names the region and the video's true length (the count of the
// frames after the keyframe was given: "(it has 0)").
TEST_F(LabelStudioVideo, AKeyframePastTheEndIsRefusedWithTheVideosLength) {
  json on_red = truth("red", 0);
  on_red.update({{"frame", 1}, {"enabled", true}, {"rotation", 0}, {"time", 0.1}});
  for (const std::int64_t frame : {std::int64_t{kFrames} + 1, std::int64_t{1000000}}) {
    json past = on_red;
    past["frame"] = frame;
    const json alone = {{"result", json::array({{{"id", "a"}, {"type", "videorectangle"}, {"value", {{"sequence", {past}}}}}})}};
    const json refused = predict(task("/data/upload/1/clip.mp4"), alone, 400);
    EXPECT_EQ(refused["error"]["code"], "invalid_context") << refused.dump();
    const std::string message = refused["error"]["message"];
    EXPECT_NE(message.find("no frame " + std::to_string(frame) + " (it has " + std::to_string(kFrames) + ")"), std::string::npos)
        << message;
    EXPECT_NE(message.find("params.context.result[0]"), std::string::npos) << message;
    // Beside a region the video has: the one past the end is still named.
    const json beside = {{"result", json::array({{{"id", "a"}, {"type", "videorectangle"}, {"value", {{"sequence", {on_red}}}}},
                                                 {{"id", "b"}, {"type", "videorectangle"}, {"value", {{"sequence", {past}}}}}})}};
    const json named = predict(task("/data/upload/1/clip.mp4"), beside, 400);
    EXPECT_NE(named.dump().find("params.context.result[1]"), std::string::npos) << named.dump();
  }
}

// A <Video> project without the <VideoRectangle> sam3 answers in: the message says what to add
// (it said "the label config has no <Image> tag").
TEST_F(LabelStudioVideo, AVideoConfigWithoutAVideoRectangleSaysWhatToAdd) {
  const std::string config = R"(<View>
  <Labels name="videoLabels" toName="video"><Label value="Car"/></Labels>
  <Video name="video" value="$video" framerate="10.0"/>
</View>)";
  httplib::Client c("127.0.0.1", server_->port());
  for (const auto& [path, body] : {std::pair<std::string, json>{"/setup", {{"project", "1.1700000000"}, {"schema", config}}},
                                   {"/predict", {{"tasks", task("/data/upload/1/clip.mp4")}, {"label_config", config}}}}) {
    auto r = c.Post(path, body.dump(), "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << path << ": " << r->body;
    const json error = json::parse(r->body, nullptr, false)["error"];
    EXPECT_EQ(error["code"], "unsupported_label_config") << path;
    const std::string message = error["message"];
    EXPECT_EQ(message.find("no <Image>"), std::string::npos) << path << ": " << message;
    EXPECT_NE(message.find("<VideoRectangle name=\"box\" toName=\"video\"/>"), std::string::npos) << path << ": " << message;
  }
}

TEST_F(LabelStudioVideo, ConnectingAVideoProjectIsAccepted) {
  // Label Studio's /setup when the backend is added to the project (it sends the project's config).
  httplib::Client c("127.0.0.1", server_->port());
  const json body = {{"project", "1.1700000000"}, {"schema", kConfig},        {"hostname", ls_->url()},
                     {"access_token", kToken},    {"model_version", nullptr}, {"extra_params", json::object()}};
  auto r = c.Post("/setup", body.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_TRUE(json::parse(r->body, nullptr, false).contains("model_version")) << r->body;
}

// As Label Studio's editor reads a sequence (VideoRegion: closestKeypoint, isInLifespan): in frame
// order, a disabled keyframe the region's last frame until the next keyframe. The annotator drew
// red on frame 1 and said on frame 5 that it leaves: sam3 fills frames 2 to 4 and stops (it
// tracked through frame 5 and on, answering [1, 5(disabled), 2, 3, 4, 5, 6, ...]).
TEST_F(LabelStudioVideo, ADisabledKeyframeStopsTheTrackingThereAndTheAnswerIsInFrameOrder) {
  json drawn = truth("red", 0), left = truth("red", 4);
  drawn.update({{"frame", 1}, {"enabled", true}, {"rotation", 0}, {"time", 0.1}});
  left.update({{"frame", 5}, {"enabled", false}, {"rotation", 0}, {"time", 0.5}});
  json context = drawn_region("r", drawn);
  context["result"][0]["value"]["sequence"].push_back(left);
  const json answer = predict(task("/data/upload/1/clip.mp4"), context);
  const json& sequence = answer["results"][0]["result"][0]["value"]["sequence"];
  ASSERT_EQ(sequence.size(), 5u) << sequence.dump();
  for (int k = 0; k < 5; ++k) EXPECT_EQ(sequence[k]["frame"], k + 1) << sequence.dump();
  EXPECT_EQ(sequence[0], drawn);
  EXPECT_EQ(sequence[4], left) << "the annotator's disabled keyframe stays as sent";
  for (int k = 1; k < 4; ++k) {
    EXPECT_EQ(sequence[k]["enabled"], true);
    expect_near(sequence[k], truth("red", k), 3.0, "frame " + std::to_string(k + 1));
  }
}

// Keyframes sent out of order (or two on one frame) come back in frame order, one a frame (they
// came back as sent with the tracked frames appended: [8, 3, 9, 10, ...]).
TEST_F(LabelStudioVideo, KeyframesComeBackInFrameOrderOneAFrame) {
  json late = truth("red", 7), early = truth("red", 2), again = truth("red", 2);
  late.update({{"frame", 8}, {"enabled", true}, {"rotation", 0}, {"time", 0.8}});
  early.update({{"frame", 3}, {"enabled", true}, {"rotation", 0}, {"time", 0.3}});
  again.update({{"frame", 3}, {"enabled", true}, {"rotation", 0}, {"time", 0.3}, {"x", 1.0}});
  json context = drawn_region("r", late);
  context["result"][0]["value"]["sequence"].push_back(early);
  context["result"][0]["value"]["sequence"].push_back(again);
  const json answer = predict(task("/data/upload/1/clip.mp4"), context);
  const json& sequence = answer["results"][0]["result"][0]["value"]["sequence"];
  ASSERT_EQ(sequence.size(), 12u) << "3, 8, then 9 to 18: " << sequence.dump();
  EXPECT_EQ(sequence[0], early) << "the first sent for frame 3, the one the editor draws";
  EXPECT_EQ(sequence[1], late);
  for (size_t k = 0; k < sequence.size(); ++k) EXPECT_EQ(sequence[k]["frame"], k == 0 ? 3 : 7 + static_cast<int>(k)) << sequence.dump();
}

// A tracked object that leaves: the keyframe of the last frame it is on is disabled, so that the
// editor shows it there and not after (a disabled keyframe on the next frame showed the last box
// one frame too long). Blue is on frames 1 to 12 (from 1).
TEST_F(LabelStudioVideo, AnObjectThatLeavesEndsOnItsLastFrame) {
  json keyframe = truth("blue", 8);
  keyframe.update({{"frame", 9}, {"enabled", true}, {"rotation", 0}, {"time", 0.9}});
  const json answer = predict(task("/data/upload/1/clip.mp4"), drawn_region("b", keyframe));
  const json& sequence = answer["results"][0]["result"][0]["value"]["sequence"];
  ASSERT_EQ(sequence.size(), 4u) << "9, then 10 to 12: " << sequence.dump();
  EXPECT_EQ(sequence[3]["frame"], 12);
  EXPECT_EQ(sequence[3]["enabled"], false) << sequence.dump();
  EXPECT_EQ(sequence[2]["enabled"], true) << sequence.dump();
  expect_near(sequence[3], truth("blue", 11), 3.0, "frame 12");
}

// A bad value names its keyframe (it said "sequence.x"); a rotated box is refused (Label Studio's
// SAM2 backend tracks it as if upright, unsaid), naming it and saying what to do.
TEST_F(LabelStudioVideo, ABadOrRotatedKeyframeIsRefusedNamingIt) {
  json keyframe = truth("red", 0);
  keyframe.update({{"frame", 1}, {"enabled", true}, {"rotation", 0}, {"time", 0.1}, {"x", "left"}});
  json other = keyframe;
  other["frame"] = 2;
  json context = drawn_region("r", other);
  context["result"][0]["value"]["sequence"].push_back(keyframe);  // sent second, on the earlier frame
  context["result"][0]["value"]["sequence"][0]["enabled"] = false;
  json refused = predict(task("/data/upload/1/clip.mp4"), context, 400);
  EXPECT_NE(refused.dump().find("params.context.result[0].value.sequence[1].x must be a number"), std::string::npos) << refused.dump();
  keyframe["x"] = truth("red", 0)["x"];
  for (const json& rotation : {json(45), json(-90.5), json("45")}) {
    keyframe["rotation"] = rotation;
    refused = predict(task("/data/upload/1/clip.mp4"), drawn_region("r", keyframe), 400);
    EXPECT_EQ(refused["error"]["code"], "invalid_context");
    const std::string message = refused["error"]["message"];
    EXPECT_NE(message.find("params.context.result[0].value.sequence[0].rotation is " + rotation.dump()), std::string::npos) << message;
    EXPECT_NE(message.find("without rotating it"), std::string::npos) << message;
  }
  keyframe["rotation"] = 360;
  EXPECT_EQ(predict(task("/data/upload/1/clip.mp4"), drawn_region("r", keyframe))["results"][0]["result"][0]["value"]["sequence"].size(),
            11u);
}

TEST_F(LabelStudioVideo, ARegionWithoutKeyframesIsRefusedNamingIt) {
  const json context = {{"result", json::array({{{"id", "a"}, {"type", "videorectangle"}, {"value", {{"sequence", json::array()}}}}})}};
  const json refused = predict(task("/data/upload/1/clip.mp4"), context, 400);
  EXPECT_NE(refused.dump().find("params.context.result[0].value.sequence"), std::string::npos) << refused.dump();
}

TEST_F(LabelStudioVideo, AVideoProjectOnAServerWithoutTheVideoBundleSaysWhatItNeeds) {
  ServerProcess* image_only = sam3::test::start_serve("usls", {"--threads", "1"});
  ASSERT_GT(image_only->port(), 0);
  const json refused = predict(task("/data/upload/1/clip.mp4"), nullptr, 400, image_only);
  EXPECT_EQ(refused["error"]["code"], "no_video_model") << refused.dump();
  EXPECT_EQ(image_only->stop(SIGTERM), 0);
  delete image_only;
}

}  // namespace
