// A StopToken ends a running encode or decode inside its ONNX Runtime run (between nodes), not
// after it: the generated usls-slow model's encoder is a chain of 3000 heavy nodes (about a
// minute to encode on 2 cores), stopped a moment after it starts. The model stays usable.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <chrono>
#include <future>
#include <thread>

#include "sam3/error.h"
#include "support/error_code.h"
#include "sam3/model.h"
#include "support/segmenters.h"
#include "support/test_images.h"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::shared_ptr<sam3::Model> load(const char* folder) {
  sam3::ModelOptions o;
  o.intra_op_threads = 1;
  return sam3::Model::load(sam3::test::test_models_dir() / folder, o);
}

using sam3::test::code_of;

// Seconds from asking to stop until the encode gave up, with what it threw.
struct Stopped {
  double seconds_after_stop = 0;
  sam3::ErrorCode code = sam3::ErrorCode::kRuntime;
  bool finished = false;
};

Stopped encode_and_stop(const sam3::Model& model, const sam3::Image& image, const std::function<void()>& stop,
                        const sam3::StopToken& token) {
  auto running = std::async(std::launch::async, [&] {
    Stopped s;
    try {
      model.encode(image, {token});
      s.finished = true;
    } catch (const sam3::Error& e) {
      s.code = e.code();
    }
    return s;
  });
  std::this_thread::sleep_for(500ms);  // well inside the encoder's run
  const auto asked = Clock::now();
  stop();
  Stopped s = running.get();
  s.seconds_after_stop = std::chrono::duration<double>(Clock::now() - asked).count();
  std::printf("stopped %.3f s after the request\n", s.seconds_after_stop);
  return s;
}

TEST(RunStop, AStopSourceEndsAnEncodeInsideItsRun) {
  const auto model = load("usls-slow");
  const auto image = sam3::test::make_scene(false).image;
  const sam3::StopSource source;
  const Stopped s = encode_and_stop(
      *model, image, [&] { source.request_stop(); }, source.token());
  EXPECT_FALSE(s.finished) << "the encode ran to its end";
  EXPECT_EQ(s.code, sam3::ErrorCode::kCancelled);
  // Uncancelled this encode takes about a minute; a stop ends it within a node or two.
  EXPECT_LT(s.seconds_after_stop, 10.0);
  EXPECT_EQ(model->stats().stopped, 1);
  EXPECT_EQ(model->stats().image_encodes, 0);
}

TEST(RunStop, AFlagSetAsASignalHandlerWouldEndsAnEncode) {
  const auto model = load("usls-slow");
  const auto image = sam3::test::make_scene(false).image;
  static std::atomic<bool> flag{false};  // what a SIGTERM handler sets
  const Stopped s = encode_and_stop(
      *model, image, [] { flag = true; }, sam3::StopToken::following(&flag));
  EXPECT_EQ(s.code, sam3::ErrorCode::kCancelled);
  EXPECT_LT(s.seconds_after_stop, 10.0);
}

TEST(RunStop, AStoppedTokenFailsAtOnceAndTheModelStaysUsable) {
  const auto model = std::make_shared<const sam3::ImageSegmenter>(load("usls"));
  const auto scene = sam3::test::make_scene(false);
  const sam3::StopSource source;
  source.request_stop();
  EXPECT_EQ(code_of([&] { model->encode(scene.image, {source.token()}); }), sam3::ErrorCode::kCancelled);
  const auto embedding = model->encode(scene.image);
  sam3::SegmentOptions stopped;
  stopped.stop = source.token();
  EXPECT_EQ(code_of([&] { model->segment(embedding, {.text = "red", .boxes = {}}, stopped); }), sam3::ErrorCode::kCancelled);
  // The stopped call left nothing behind: the text cache holds no half result, the next call works.
  const auto result = model->segment(embedding, {.text = "red", .boxes = {}});
  EXPECT_FALSE(result.timings.text_cached);
  EXPECT_EQ(result.instances.size(), 2u);
  EXPECT_EQ(model->model().stats().stopped, 2);
}

TEST(RunStop, ATokenThatIsNeverStoppedChangesNothing) {
  const auto model = std::make_shared<const sam3::ImageSegmenter>(load("usls"));
  const auto scene = sam3::test::make_scene(false);
  const sam3::StopSource source;
  sam3::SegmentOptions options;
  options.stop = source.token();
  const auto with = model->segment(model->encode(scene.image, {source.token()}), {.text = "red", .boxes = {}}, options);
  const auto without = model->segment(model->encode(scene.image), {.text = "red", .boxes = {}});
  ASSERT_EQ(with.instances.size(), without.instances.size());
  for (size_t i = 0; i < with.instances.size(); ++i) {
    EXPECT_EQ(with.instances[i].score, without.instances[i].score);
    EXPECT_EQ(with.instances[i].mask, without.instances[i].mask);
  }
  EXPECT_EQ(model->model().stats().stopped, 0);
}

}  // namespace
