// sam3-bench-video: the video tracker's cost per frame by stage as the number of objects grows,
// and its memory as the video grows (after --short frames and after --long frames of one run:
// flat when the memory banks are bounded). Frames are generated: squares of distinct colours
// drifting on grey, one object each for the generated SAM 3.1 bundle (tools/make_video_models.py,
// whose detector finds the colours of its palette), or whatever a real bundle makes of them.
// No reference runs beside it: ailia's Python driver needs onnxruntime for Python (docs/video.md).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "sam3/model.h"
#include "sam3/video_tracker.h"

namespace {

// The palette's colours (channels 0, 128, 255), without the background's grey.
std::vector<std::array<std::uint8_t, 3>> palette() {
  std::vector<std::array<std::uint8_t, 3>> out;
  const std::uint8_t levels[] = {0, 128, 255};
  for (auto r : levels)
    for (auto g : levels)
      for (auto b : levels)
        if (!(r == 128 && g == 128 && b == 128)) out.push_back({r, g, b});
  return out;
}

// `objects` squares in a grid, each drifting in a small circle, so that every frame differs.
sam3::VideoFrame frame_of(std::int64_t index, int objects, int width, int height) {
  sam3::VideoFrame f;
  f.index = index;
  f.time_s = index / 25.0;
  f.image = {width, height, std::vector<std::uint8_t>(static_cast<size_t>(width) * height * 3, 128)};
  const auto colours = palette();
  const int columns = 6, side = width / (columns * 2);
  for (int k = 0; k < objects; ++k) {
    const int cx = (k % columns) * 2 * side + side / 2 + static_cast<int>(side / 3 * std::cos(index * 0.2 + k));
    const int cy = (k / columns) * 2 * side + side / 2 + static_cast<int>(side / 3 * std::sin(index * 0.2 + k));
    for (int y = std::max(0, cy); y < std::min(height, cy + side); ++y)
      for (int x = std::max(0, cx); x < std::min(width, cx + side); ++x)
        for (int c = 0; c < 3; ++c) f.image.rgb[(static_cast<size_t>(y) * width + x) * 3 + c] = colours[k % colours.size()][c];
  }
  return f;
}

double resident_mb() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

struct Row {
  int objects = 0;
  std::int64_t frames = 0;
  sam3::VideoTrackerStats stats;
  double wall_ms = 0, rss_mb = 0;
};

Row track(const std::shared_ptr<const sam3::Model>& model, int objects, std::int64_t frames, int width, int height,
          std::int64_t measure_at = -1, double* rss_at = nullptr, const sam3::VideoTrackerOptions& options = {}) {
  sam3::VideoTracker tracker(model, sam3::VideoPrompts{{"thing"}, {}}, options);
  const auto t0 = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < frames; ++i) {
    tracker.push(frame_of(i, objects, width, height));
    if (i + 1 == measure_at && rss_at) *rss_at = resident_mb();
  }
  tracker.finish();
  Row r{objects, frames, tracker.stats(), std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
        resident_mb()};
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sam3-bench-video: the video tracker's time per frame by stage and its memory over a video"};
  std::string models;
  std::vector<int> objects = {1, 4, 16, 24};
  std::int64_t frames = 30, short_run = 50, long_run = 500;
  int width = 640, height = 480, threads = 0;
  app.add_option("--models", models, "A SAM 3.1 bundle (ailia's files; build/test-models/sam3.1-video is generated)")->required();
  app.add_option("--objects", objects, "Object counts to time (the generated palette has 26 colours)")->delimiter(',');
  app.add_option("--frames", frames, "Frames per timing run");
  app.add_option("--short", short_run, "Memory: frames of the first reading");
  app.add_option("--long", long_run, "Memory: frames of the second reading (same run)");
  app.add_option("--size", width, "Frame width (height = 3/4 of it)");
  app.add_option("--threads", threads, "ONNX Runtime intra-op threads (0: one per core)");
  bool rules_off_too = false;
  app.add_flag("--rules-off-too", rules_off_too,
               "Also time each count with reconditioning and the area-shrinkage rule off (the reference for their cost)");
  CLI11_PARSE(app, argc, argv);
  height = width * 3 / 4;

  sam3::ModelOptions options;
  options.intra_op_threads = threads;
  const auto model = sam3::Model::load(models, options);
  char cpu[256] = "unknown CPU";
  if (std::ifstream info("/proc/cpuinfo"); info) {
    for (std::string line; std::getline(info, line);) {
      if (line.rfind("model name", 0) == 0) {
        std::snprintf(cpu, sizeof cpu, "%s", line.substr(line.find(':') + 2).c_str());
        break;
      }
    }
  }
  std::printf("sam3-bench-video: %s, %dx%d frames, %ld cores, %s\n\n", models.c_str(), width, height, sysconf(_SC_NPROCESSORS_ONLN), cpu);
  std::printf("| objects | rules | frames | ms/frame | encode | detect | track | memory | new objects | output | live | buckets | bank MB | reconditioned | shrunk |\n");
  std::printf("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  sam3::VideoTrackerOptions off;
  off.recondition_every = 0;
  off.shrinkage_min_ratio = 0;
  for (int n : objects) {
    for (bool rules : {true, false}) {
      if (!rules && !rules_off_too) continue;
      const auto r = track(model, n, frames, width, height, -1, nullptr, rules ? sam3::VideoTrackerOptions{} : off);
      const double f = static_cast<double>(r.stats.frames);
      std::printf("| %d | %s | %lld | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %d | %d | %.2f | %lld | %lld |\n", n, rules ? "3.1" : "off",
                  static_cast<long long>(r.frames), r.wall_ms / f, r.stats.encode_ms / f, r.stats.detect_ms / f,
                  r.stats.track_ms / f, r.stats.memory_ms / f, r.stats.new_objects_ms / f, r.stats.output_ms / f,
                  r.stats.live_objects, r.stats.buckets, r.stats.memory_bank_bytes / double(1 << 20),
                  static_cast<long long>(r.stats.reconditioned), static_cast<long long>(r.stats.shrunk));
      std::fflush(stdout);
    }
  }
  double rss_short = 0;
  const int n = objects.empty() ? 4 : objects.front() < 4 && objects.size() > 1 ? objects[1] : objects.front();
  const auto r = track(model, n, long_run, width, height, short_run, &rss_short);
  std::printf("\nmemory over one run of %d objects: resident %.1f MB after %lld frames, %.1f MB after %lld (%+.1f%%); "
              "memory banks %.2f MB at the end\n",
              n, rss_short, static_cast<long long>(short_run), r.rss_mb, static_cast<long long>(long_run),
              rss_short > 0 ? 100.0 * (r.rss_mb - rss_short) / rss_short : 0.0, r.stats.memory_bank_bytes / double(1 << 20));
  return 0;
}
