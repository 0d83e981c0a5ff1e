// sam3-bench-video: the video tracker's cost per frame by stage as the number of objects grows,
// and its peak memory as the video grows (after --short frames and after --long frames of one
// run: flat when the memory banks are bounded). Frames are generated (video_bench_scene.h):
// squares of distinct colours drifting on grey, one object each for the generated SAM 3.1
// bundle (tools/make_video_models.py, whose detector finds the colours of its palette), or
// whatever a real bundle makes of them. --write-frames saves those frames as PNG folders and
// --input times the tracker on such folders: scripts/bench_video_driver.sh runs ailia's Python
// driver on the same folders and prints both side by side (docs/video.md).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sam3/error.h"
#include "sam3/export.h"
#include "sam3/model.h"
#include "sam3/video_sources.h"
#include "sam3/video_tracker.h"
#include "video_bench_scene.h"

namespace {

namespace fs = std::filesystem;

// The process's peak resident memory (VmHWM) in MB, and its reset (Linux: "5" to clear_refs), so
// that each run's peak is its own.
double status_mb(const char* field) {
  std::ifstream status("/proc/self/status");
  const std::string key = field;
  for (std::string line; std::getline(status, line);)
    if (line.rfind(key, 0) == 0) return std::stod(line.substr(key.size())) / 1024.0;
  return 0;
}
double peak_resident_mb() { return status_mb("VmHWM:"); }
double resident_mb() { return status_mb("VmRSS:"); }  // now, not the peak: what a long run keeps

bool reset_peak_resident() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

std::string cpu_model() {
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

fs::path frames_folder(const fs::path& root, int objects) { return root / ("objects-" + std::to_string(objects)); }

struct Row {
  int objects = 0;
  bool rules = true;
  sam3::VideoTrackerStats stats;
  double wall_ms = 0, peak_mb = 0;
};

// The squares a count is drawn with and the prompts that find them: the generated detector finds
// every palette colour for any word, so beyond kSquaresPerPrompt objects each square is found by
// several prompts ("car", "truck", ...), each of its own objects (64 = 2 prompts x 32 squares).
constexpr int kSquaresPerPrompt = 32;
int prompts_for(int objects) { return std::max(1, (objects + kSquaresPerPrompt - 1) / kSquaresPerPrompt); }
int squares_for(int objects) { return objects / prompts_for(objects); }
std::vector<std::string> texts_for(int objects) {
  static const char* words[] = {"car", "truck", "bus", "van", "bike", "boat", "train", "plane"};
  std::vector<std::string> texts;
  for (int i = 0; i < prompts_for(objects) && i < 8; ++i) texts.push_back(words[i]);
  return texts;
}

// Tracks the prompts for `objects` (the generated bundle's concept: its detector finds every
// palette colour for a word) through the frames `next` yields; `after_frame(n, stats)` is called after the n-th.
using AfterFrame = std::function<void(std::int64_t, const sam3::VideoTrackerStats&)>;
Row track(const std::shared_ptr<const sam3::Model>& model, int objects, const std::function<std::optional<sam3::VideoFrame>()>& next,
          const sam3::VideoTrackerOptions& options, const AfterFrame& after_frame = {}) {
  reset_peak_resident();
  sam3::VideoTracker tracker(model, sam3::VideoPrompts{texts_for(objects), {}}, options);
  const auto t0 = std::chrono::steady_clock::now();
  std::int64_t n = 0;
  while (auto frame = next()) {
    tracker.push(*frame);
    ++n;
    if (after_frame) after_frame(n, tracker.stats());
  }
  tracker.finish();
  Row r{objects, options.recondition_every != 0, tracker.stats(),
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(), peak_resident_mb()};
  return r;
}

std::function<std::optional<sam3::VideoFrame>()> generated(int objects, std::int64_t frames, int width, int height) {
  return [=, i = std::int64_t{0}]() mutable -> std::optional<sam3::VideoFrame> {
    if (i >= frames) return std::nullopt;
    return sam3::bench::video_bench_frame(i++, squares_for(objects), width, height);
  };
}

void write_frames(const fs::path& root, const std::vector<int>& objects, std::int64_t frames, int width, int height) {
  for (int n : objects) {
    const auto folder = frames_folder(root, n);
    if (fs::exists(folder))
      throw sam3::Error(sam3::ErrorCode::kInvalidArgument, folder.string() + " exists already: give an empty --write-frames folder");
    fs::create_directories(folder);
    for (std::int64_t i = 0; i < frames; ++i) {
      char name[32];
      std::snprintf(name, sizeof name, "%05lld.png", static_cast<long long>(i));
      const auto png = sam3::encode_rgb_png(sam3::bench::video_bench_frame(i, squares_for(n), width, height).image);
      const auto tmp = folder / (std::string(name) + ".tmp");
      std::ofstream(tmp, std::ios::binary).write(png.data(), static_cast<std::streamsize>(png.size()));
      fs::rename(tmp, folder / name);
    }
  }
}

void print_row(const Row& r, bool json) {
  const double f = static_cast<double>(std::max<std::int64_t>(1, r.stats.frames));
  const auto& s = r.stats;
  const double other = r.wall_ms - (s.encode_ms + s.detect_ms + s.track_ms + s.memory_ms + s.new_objects_ms + s.output_ms);
  if (json) {
    std::printf(
        "{\"objects\": %d, \"rules\": \"%s\", \"frames\": %lld, \"ms_per_frame\": %.2f, \"encode\": %.2f, \"detect\": %.2f, "
        "\"track\": %.2f, \"memory\": %.2f, \"new_objects\": %.2f, \"output\": %.2f, \"other\": %.2f, \"live\": %d, "
        "\"objects_started\": %lld, \"buckets\": %d, \"bank_mb\": %.2f, \"peak_mb\": %.1f}\n",
        r.objects, r.rules ? "3.1" : "off", static_cast<long long>(s.frames), r.wall_ms / f, s.encode_ms / f, s.detect_ms / f,
        s.track_ms / f, s.memory_ms / f, s.new_objects_ms / f, s.output_ms / f, other / f, s.live_objects,
        static_cast<long long>(s.objects), s.buckets, s.memory_bank_bytes / double(1 << 20), r.peak_mb);
  } else {
    std::printf("| %d | %s | %lld | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %d | %d | %.2f | %lld | %lld | %.0f |\n",
                r.objects, r.rules ? "3.1" : "off", static_cast<long long>(s.frames), r.wall_ms / f, s.encode_ms / f, s.detect_ms / f,
                s.track_ms / f, s.memory_ms / f, s.new_objects_ms / f, s.output_ms / f, other / f, s.live_objects, s.buckets,
                s.memory_bank_bytes / double(1 << 20), static_cast<long long>(s.reconditioned), static_cast<long long>(s.shrunk),
                r.peak_mb);
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) try {
  CLI::App app{"sam3-bench-video: the video tracker's time per frame by stage and its peak memory over a video"};
  std::string models, input, write_to;
  std::vector<int> objects = {1, 4, 16, 32};
  std::int64_t frames = 30, short_run = 50, long_run = 500;
  int width = 640, threads = 0, memory_objects = 4;
  bool rules_off_too = false, json = false, progress = false;
  app.add_option("--models", models, "A SAM 3.1 bundle (ailia's files; build/test-models/sam3.1-video is generated)");
  app.add_option("--objects", objects,
                 "Object counts to time (34 colours; above 32, several prompts find each square: 64 = 2 prompts x 32)")
      ->delimiter(',');
  app.add_option("--frames", frames, "Frames per timing run (generated frames; 0: the memory reading alone)");
  app.add_option("--short", short_run, "Memory: frames of the first reading");
  app.add_option("--long", long_run, "Memory: frames of the second reading (same run)");
  app.add_option("--memory-objects", memory_objects, "Memory: objects in that run (0: no memory reading)");
  app.add_option("--size", width, "Frame width (height = 3/4 of it)");
  app.add_option("--threads", threads, "ONNX Runtime intra-op threads (0: one per core)");
  app.add_flag("--rules-off-too", rules_off_too,
               "Also time each count with reconditioning and the area-shrinkage rule off (the reference for their cost)");
  app.add_option("--write-frames", write_to, "Write the generated frames as DIR/objects-N/00000.png ... for each count, then exit");
  app.add_option("--input", input, "Time on the frames of DIR/objects-N (made by --write-frames) instead of generating them");
  app.add_flag("--json", json, "One JSON object per line instead of the table");
  app.add_flag(
      "--progress", progress,
      "A line on stderr per frame (its time by stage, the peak resident memory so far and the resident memory now): for long runs");
  CLI11_PARSE(app, argc, argv);
  const int height = width * 3 / 4;
  const int capacity = sam3::bench::video_bench_capacity(width, height);
  for (int n : objects)
    if (n < 0 || squares_for(n) > capacity || squares_for(n) * prompts_for(n) != n || prompts_for(n) > 8) {
      std::fprintf(stderr,
                   "sam3-bench-video: %d objects do not fit: %dx%d frames hold %d squares of distinct colours, each found by up to 8 "
                   "prompts (above %d objects give a multiple of the prompts, e.g. 64 = 2 x 32)\n",
                   n, width, height, capacity, kSquaresPerPrompt);
      return 2;
    }
  if (!write_to.empty()) {
    write_frames(write_to, objects, frames, width, height);
    return 0;
  }
  if (models.empty()) {
    std::fprintf(stderr, "sam3-bench-video: --models is required (unless --write-frames)\n");
    return 2;
  }

  sam3::ModelOptions options;
  options.intra_op_threads = threads;
  const auto model = sam3::Model::load(models, options);
  if (!json)
    std::printf("sam3-bench-video: %s, %s, %ld cores, %s\n\n", models.c_str(),
                input.empty() ? (std::to_string(width) + "x" + std::to_string(height) + " frames").c_str() : ("frames of " + input).c_str(),
                sysconf(_SC_NPROCESSORS_ONLN), cpu_model().c_str());

  // Memory first, right after loading, so that no earlier run's heap is in its readings.
  if (memory_objects > 0) {
    double peak_short = 0, resident_short = 0, resident_long = 0;
    auto last = std::chrono::steady_clock::now();
    const auto r = track(
        model, memory_objects, generated(memory_objects, long_run, width, height), {}, [&](std::int64_t n, const sam3::VideoTrackerStats&) {
          if (n == short_run) {
            peak_short = peak_resident_mb();
            resident_short = resident_mb();
          }
          if (n == long_run) resident_long = resident_mb();
          if (progress) {
            const auto now = std::chrono::steady_clock::now();
            std::fprintf(stderr, "memory run: frame %lld, %.0f ms, peak %.1f MB, resident %.1f MB\n", static_cast<long long>(n),
                         std::chrono::duration<double, std::milli>(now - last).count(), peak_resident_mb(), resident_mb());
            last = now;
          }
        });
    const double bank = r.stats.memory_bank_bytes / double(1 << 20);
    if (json)
      std::printf(
          "{\"memory_objects\": %d, \"short\": %lld, \"peak_mb_short\": %.1f, \"long\": %lld, \"peak_mb_long\": %.1f, \"bank_mb\": %.2f, "
          "\"resident_mb_short\": %.1f, \"resident_mb_long\": %.1f, \"ms_per_frame\": %.2f}\n",
          memory_objects, static_cast<long long>(short_run), peak_short, static_cast<long long>(long_run), r.peak_mb, bank, resident_short,
          resident_long, r.wall_ms / std::max<double>(1, r.stats.frames));
    else
      std::printf(
          "memory over one run of %d objects (%dx%d): peak resident %.1f MB after %lld frames, %.1f MB after %lld (%+.1f%%); "
          "resident %.1f MB after %lld frames, %.1f MB after %lld (%+.1f%%); memory banks %.2f MB at the end; %.0f ms a frame\n\n",
          memory_objects, width, height, peak_short, static_cast<long long>(short_run), r.peak_mb, static_cast<long long>(long_run),
          peak_short > 0 ? 100.0 * (r.peak_mb - peak_short) / peak_short : 0.0, resident_short, static_cast<long long>(short_run),
          resident_long, static_cast<long long>(long_run),
          resident_short > 0 ? 100.0 * (resident_long - resident_short) / resident_short : 0.0, bank,
          r.wall_ms / std::max<double>(1, r.stats.frames));
    std::fflush(stdout);
  }

  if (frames == 0 && input.empty()) return 0;  // the memory reading alone
  if (!json) {
    std::printf(
        "| objects | rules | frames | ms/frame | encode | detect | track | memory | new objects | output | other | live | buckets "
        "| bank MB | reconditioned | shrunk | peak MB |\n");
    std::printf("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  }
  sam3::VideoTrackerOptions off;
  off.recondition_every = 0;
  off.shrinkage_min_ratio = 0;
  for (int n : objects) {
    for (bool rules : {true, false}) {
      if (!rules && !rules_off_too) continue;
      std::unique_ptr<sam3::FrameSource> folder;
      if (!input.empty()) folder = sam3::open_image_folder(frames_folder(input, n));
      auto next =
          folder ? std::function<std::optional<sam3::VideoFrame>()>([&] { return folder->next(); }) : generated(n, frames, width, height);
      auto last = std::chrono::steady_clock::now();
      sam3::VideoTrackerStats before;
      const auto each = [&](std::int64_t frame, const sam3::VideoTrackerStats& s) {
        if (!progress) return;
        const auto now = std::chrono::steady_clock::now();
        std::fprintf(stderr,
                     "%d objects: frame %lld, %.0f ms (encode %.0f, detect %.0f, track %.0f, memory %.0f, new objects %.0f, output %.0f), "
                     "peak %.1f MB, resident %.1f MB\n",
                     n, static_cast<long long>(frame), std::chrono::duration<double, std::milli>(now - last).count(),
                     s.encode_ms - before.encode_ms, s.detect_ms - before.detect_ms, s.track_ms - before.track_ms,
                     s.memory_ms - before.memory_ms, s.new_objects_ms - before.new_objects_ms, s.output_ms - before.output_ms,
                     peak_resident_mb(), resident_mb());
        before = s;
        last = now;
      };
      print_row(track(model, n, next, rules ? sam3::VideoTrackerOptions{} : off, each), json);
    }
  }
  return 0;
} catch (const std::exception& e) {  // sam3's typed errors, and the filesystem's for --write-frames
  std::fprintf(stderr, "sam3-bench-video: %s\n", e.what());
  return 1;
}
