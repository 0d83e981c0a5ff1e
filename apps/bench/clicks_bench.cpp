// sam3-bench-clicks: the interactive model's speed: load, image encode, click latency (one
// positive click on an encoded image, decode and masks at the image's size; median of the
// clicks) and "segment everything" on one image, median and spread over repeats, peak memory;
// with --reference the same on the same files by transformers.js's pipeline on onnxruntime-node
// (tools/reference/clicks_reference.mjs), side by side.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "sam3/image.h"
#include "sam3/interactive_segmenter.h"
#include "sam3/model.h"

namespace {

namespace fs = std::filesystem;
using Stages = std::map<std::string, std::vector<double>>;  // stage -> ms, one value per repeat

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The image stretched (nearest) to width x height: the benchmark's image size whatever the file's.
sam3::Image stretched(const sam3::Image& in, int width, int height) {
  sam3::Image out{width, height, std::vector<std::uint8_t>(static_cast<size_t>(width) * height * 3)};
  for (int y = 0; y < height; ++y) {
    const int sy = std::min(in.height - 1, y * in.height / height);
    for (int x = 0; x < width; ++x) {
      const int sx = std::min(in.width - 1, x * in.width / width);
      std::copy_n(&in.rgb[(static_cast<size_t>(sy) * in.width + sx) * 3], 3, &out.rgb[(static_cast<size_t>(y) * width + x) * 3]);
    }
  }
  return out;
}

struct Run {
  double load = 0, encode = 0, click = 0, everything = 0, masks = 0;
  double everything_decode = 0;  // of "everything": the decoder runs (the rest is post-processing)
};

Run run_ours(const fs::path& models, const sam3::Image& image, const std::vector<sam3::PointPrompt>& clicks,
             const sam3::EverythingOptions& everything, const sam3::ModelOptions& options) {
  Run r;
  auto t0 = std::chrono::steady_clock::now();
  const auto segmenter = sam3::InteractiveSegmenter::load(models, options);
  r.load = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  const auto embedding = segmenter.encode(image);
  r.encode = ms_since(t0);
  std::vector<double> per_click;
  for (const auto& p : clicks) {
    t0 = std::chrono::steady_clock::now();
    segmenter.segment(embedding, sam3::InteractivePrompt{{p}, std::nullopt});
    per_click.push_back(ms_since(t0));
  }
  r.click = median(per_click);
  t0 = std::chrono::steady_clock::now();
  const auto all = segmenter.segment_everything(embedding, everything);
  r.everything = ms_since(t0);
  r.masks = static_cast<double>(all.instances.size());
  r.everything_decode = all.timings.decode_ms;
  return r;
}

// run_ours in a child process: its own peak memory.
Run run_ours_in_child(const fs::path& models, const sam3::Image& image, const std::vector<sam3::PointPrompt>& clicks,
                      const sam3::EverythingOptions& everything, const sam3::ModelOptions& options, double* peak_mb) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    int code = 0;
    std::array<double, 6> v{};
    try {
      const Run r = run_ours(models, image, clicks, everything, options);
      v = {r.load, r.encode, r.click, r.everything, r.masks, r.everything_decode};
    } catch (const std::exception& e) {
      std::fprintf(stderr, "sam3-bench-clicks: %s\n", e.what());
      code = 1;
    }
    if (::write(fds[1], v.data(), sizeof v) != static_cast<ssize_t>(sizeof v)) code = 1;
    std::_Exit(code);
  }
  ::close(fds[1]);
  std::array<double, 6> v{};
  const bool read_all = ::read(fds[0], v.data(), sizeof v) == static_cast<ssize_t>(sizeof v);
  ::close(fds[0]);
  int status = 0;
  rusage u{};
  if (pid < 0 || ::wait4(pid, &status, 0, &u) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !read_all) {
    throw std::runtime_error("the sam3cpp run failed");
  }
  *peak_mb = std::max(*peak_mb, u.ru_maxrss / 1024.0);
  return {v[0], v[1], v[2], v[3], v[4], v[5]};
}

Run run_reference(const fs::path& models, const fs::path& raw, const sam3::Image& image, const std::vector<sam3::PointPrompt>& clicks,
                  int points_per_side, double* peak_mb) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : clicks) points.push_back({p.x, p.y});
  const std::string cmd = "node " + (fs::path(SAM3_SOURCE_DIR) / "tools" / "reference" / "clicks_reference.mjs").string() + " " +
                          models.string() + " " + raw.string() + " " + std::to_string(image.width) + " " + std::to_string(image.height) +
                          " '" + points.dump() + "' " + std::to_string(points_per_side);
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot start node");
  std::string out;
  std::array<char, 4096> buf;
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) out.append(buf.data(), n);
  if (::pclose(pipe) != 0) throw std::runtime_error("the reference failed: " + out);
  const auto j = nlohmann::json::parse(out);
  *peak_mb = std::max(*peak_mb, j["peak_rss_mb"].get<double>());
  return {j["load_ms"],       j["encode_ms"],        median(j["clicks_ms"].get<std::vector<double>>()),
          j["everything_ms"], j["everything_masks"], j["everything_decode_ms"]};
}

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

std::string cell(const std::vector<double>& v) {
  if (v.empty()) return "-";
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.0f (%.0f-%.0f)", median(v), *std::min_element(v.begin(), v.end()),
                *std::max_element(v.begin(), v.end()));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "sam3-bench-clicks: the interactive model's click latency and \"segment everything\", optionally beside "
      "transformers.js's pipeline on onnxruntime-node"};
  std::string models, image_path = std::string(SAM3_SOURCE_DIR) + "/examples/street.png", json_path;
  int repeats = 3, threads = 0, clicks_n = 20, width = 1280, height = 960;
  bool reference = false;
  sam3::EverythingOptions everything;
  app.add_option("-m,--models", models, "Interactive model directory (tools/make_bench_tracker.py)")->required();
  app.add_option("-i,--image", image_path, "Image, stretched to --size")->capture_default_str();
  app.add_option("--width", width, "Image width")->capture_default_str();
  app.add_option("--height", height, "Image height")->capture_default_str();
  app.add_option("--clicks", clicks_n, "Clicks per repeat (their median is the click latency)")->capture_default_str();
  app.add_option("--points-per-side", everything.points_per_side, "\"Everything\" grid")->capture_default_str();
  app.add_option("-r,--repeats", repeats, "Repeats")->capture_default_str()->check(CLI::Range(1, 100));
  app.add_option("--threads", threads, "ONNX Runtime intra-op threads (0 = default)");
  app.add_flag("--reference", reference, "Also run transformers.js's pipeline (node + onnxruntime-node) on the same files");
  app.add_option("--json", json_path, "Also write the results as JSON to this file");
  CLI11_PARSE(app, argc, argv);

  const auto image = stretched(sam3::load_image(image_path), width, height);
  std::vector<sam3::PointPrompt> clicks;  // a 5 x 4 grid of clicks, then more rows as needed
  for (int i = 0; i < clicks_n; ++i) {
    clicks.push_back({(static_cast<float>(i % 5) + 0.5f) * width / 5.f, (static_cast<float>((i / 5) % 4) + 0.5f) * height / 4.f, true});
  }
  sam3::ModelOptions options;
  options.intra_op_threads = threads;
  const fs::path raw = fs::temp_directory_path() / "sam3-bench-clicks-image.rgb";
  if (reference) {
    std::ofstream(raw, std::ios::binary)
        .write(reinterpret_cast<const char*>(image.rgb.data()), static_cast<std::streamsize>(image.rgb.size()));
  }
  // The first load prepares the files (graph rewrites, cached optimized graphs): not counted.
  std::fprintf(stderr, "preparing the model (first load on this host)...\n");
  sam3::Model::load(models, options);
  Stages ours, theirs;
  double our_peak = 0, ref_peak = 0;
  const auto add = [](Stages& s, const Run& r) {
    s["load"].push_back(r.load);
    s["encode_image"].push_back(r.encode);
    s["click"].push_back(r.click);
    s["everything"].push_back(r.everything);
    s["masks"].push_back(r.masks);
    s["everything_decode"].push_back(r.everything_decode);
    s["everything_post"].push_back(r.everything - r.everything_decode);
  };
  for (int r = 0; r < repeats; ++r) {
    std::fprintf(stderr, "repeat %d/%d: sam3cpp...\n", r + 1, repeats);
    add(ours, run_ours_in_child(models, image, clicks, everything, options, &our_peak));
    if (reference) {
      std::fprintf(stderr, "repeat %d/%d: reference...\n", r + 1, repeats);
      add(theirs, run_reference(models, raw, image, clicks, everything.points_per_side, &ref_peak));
    }
  }
  if (reference) fs::remove(raw);
  std::printf("machine: %s, %u hardware threads; ONNX Runtime %s; image %dx%d; %d clicks; everything %dx%d points; %d repeats\n\n",
              cpu_name().c_str(), std::thread::hardware_concurrency(), sam3::onnxruntime_version().c_str(), width, height, clicks_n,
              everything.points_per_side, everything.points_per_side, repeats);
  std::printf("| stage | sam3cpp ms, median (min-max) |%s\n", reference ? " reference ms, median (min-max) | sam3cpp / reference |" : "");
  std::printf("|---|---:|%s\n", reference ? "---:|---:|" : "");
  nlohmann::json out = {
      {"image", image_path}, {"width", width}, {"height", height}, {"clicks", clicks_n}, {"points_per_side", everything.points_per_side},
      {"repeats", repeats}};
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"load", "load"},
      {"encode_image", "encode_image (preprocessing included)"},
      {"click", "click (median of " + std::to_string(clicks_n) + ", decode and masks)"},
      {"everything", "everything (" + std::to_string(everything.points_per_side * everything.points_per_side) + " clicks)"},
      {"everything_decode", "- of which decoder runs"},
      {"everything_post", "- of which post-processing"}};
  for (const auto& [key, label] : rows) {
    std::string row = "| " + label + " | " + cell(ours[key]) + " |";
    out["stages"][key]["sam3cpp"] = median(ours[key]);
    if (reference) {
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, " %.2f |", median(theirs[key]) > 0 ? median(ours[key]) / median(theirs[key]) : 0.0);
      row += " " + cell(theirs[key]) + " |" + ratio;
      out["stages"][key]["reference"] = median(theirs[key]);
    }
    std::printf("%s\n", row.c_str());
  }
  std::printf("| masks kept by \"everything\" | %.0f |%s\n", median(ours["masks"]),
              reference ? (" " + std::to_string(static_cast<int>(median(theirs["masks"]))) + " | |").c_str() : "");
  std::printf("| peak RSS MB | %.0f |", our_peak);
  if (reference) std::printf(" %.0f | %.2f |", ref_peak, ref_peak > 0 ? our_peak / ref_peak : 0.0);
  std::printf("\n");
  out["peak_rss_mb"] = {{"sam3cpp", our_peak}, {"reference", ref_peak}};
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  return 0;
}
