// sam3-bench: per-stage timings of the pipeline (median and spread over repeats), peak
// memory, and, with --reference, the model card's pipeline (onnxruntime-node, three networks
// per request) on the same files in the same run, with ratios.
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
#include <sstream>
#include <thread>

#include "sam3/image.h"
#include "sam3/model.h"
#include "sam3/tokenizer.h"

namespace {

namespace fs = std::filesystem;
using Stages = std::map<std::string, double>;  // stage -> ms for one repeat

const std::vector<std::string> kStages = {"load", "preprocess", "encode_image", "encode_text", "decode", "postprocess", "total"};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

Stages run_ours(const fs::path& models, const sam3::Image& image, const std::vector<std::string>& prompts,
                const sam3::ModelOptions& options) {
  Stages s;
  auto t0 = std::chrono::steady_clock::now();
  auto model = sam3::Model::load(models, options);
  s["load"] = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  const auto embedding = model->encode(image);
  s["preprocess"] = embedding.preprocess_ms();
  s["encode_image"] = embedding.encode_ms();
  for (const auto& p : prompts) {
    const auto r = model->segment(embedding, {p, {}});
    s["encode_text"] += r.timings.encode_text_ms;
    s["decode"] += r.timings.decode_ms;
    s["postprocess"] += r.timings.postprocess_ms;
  }
  s["total"] = ms_since(t0);
  return s;
}

// The first load on a host prepares the files (graph rewrites, ONNX Runtime's optimized graph,
// cached next to the model). Done here once, in a child process, so that neither its time nor
// its memory counts: the table shows the pipeline as it runs on every later load.
double prepare_in_child(const fs::path& models, const sam3::ModelOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    try {
      sam3::Model::load(models, options);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "sam3-bench: %s\n", e.what());
      std::_Exit(1);
    }
    std::_Exit(0);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("preparing the models failed");
  }
  return ms_since(t0);
}

Stages run_reference(const fs::path& script, const fs::path& models, const fs::path& raw, const sam3::Image& image,
                     const std::string& tokens, size_t requests, double* peak_mb) {
  const std::string cmd = "node " + script.string() + " " + models.string() + " " + raw.string() + " " +
                          std::to_string(image.width) + " " + std::to_string(image.height) + " '" + tokens + "' " +
                          std::to_string(requests);
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot start node");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  if (::pclose(pipe) != 0) throw std::runtime_error("the reference failed: " + out);
  const auto j = nlohmann::json::parse(out);
  Stages s;
  s["load"] = j["load_ms"];
  for (const auto& r : j["requests"]) {
    for (const auto& [k, v] : r.items()) s[k] += v.get<double>();
  }
  s["total"] = s["preprocess"] + s["encode_image"] + s["encode_text"] + s["decode"] + s["postprocess"];
  *peak_mb = std::max(*peak_mb, j["peak_rss_mb"].get<double>());
  return s;
}

struct Summary {
  double median = 0, min = 0, max = 0;
};

Summary summarize(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v.front(), v.back()};
}

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

std::string cell(const Summary& s) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.0f (%.0f-%.0f)", s.median, s.min, s.max);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sam3-bench: per-stage timings and peak memory, optionally side by side with the model card's pipeline"};
  std::string models, image_path = std::string(SAM3_SOURCE_DIR) + "/examples/street.png", json_path;
  std::vector<std::string> prompts = {"car", "road", "yellow school bus", "person", "tree"};
  int repeats = 3, threads = 0;
  bool reference = false;
  std::string int8 = "auto";
  std::string arena = "auto";
  bool no_spin = false, unfused = false, shared_pool = false;
  app.add_option("-m,--models", models, "Model directory (usls layout for --reference)")->required();
  app.add_option("-i,--image", image_path, "Image")->capture_default_str();
  app.add_option("-p,--prompt", prompts, "Prompts (one image, all prompts)");
  app.add_option("-r,--repeats", repeats, "Repeats (median and spread)")->capture_default_str()->check(CLI::Range(1, 100));
  app.add_option("--threads", threads, "ONNX Runtime intra-op threads (0 = default)");
  app.add_flag("--reference", reference, "Also run the model card's pipeline (node + onnxruntime-node) on the same files");
  app.add_option("--int8", int8, "int8 weights: auto, on, off")->check(CLI::IsMember({"auto", "on", "off"}))->capture_default_str();
  app.add_flag("--no-spin", no_spin, "ONNX Runtime threads do not spin while waiting");
  app.add_flag("--no-fused-attention", unfused, "Run attention as the files write it (materialised scores)");
  app.add_flag("--shared-pool", shared_pool, "One process-wide ONNX Runtime thread pool for all sessions");
  app.add_option("--arena", arena, "ONNX Runtime's CPU memory arena for the image encoder: auto (on when its attention was fused), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  std::vector<std::string> providers;
  app.add_option("--provider", providers, "Execution providers as a fallback order (cpu, cuda, tensorrt, ..., auto)")
      ->delimiter(',');
  app.add_option("--json", json_path, "Also write the results as JSON to this file");
  CLI11_PARSE(app, argc, argv);

  const auto image = sam3::load_image(image_path);
  sam3::ModelOptions options;
  options.providers = sam3::parse_execution_providers(providers);
  options.intra_op_threads = threads;
  if (arena != "auto") options.encoder_memory_arena = arena == "on";
  options.spin_threads = !no_spin;
  options.fuse_attention = !unfused;
  options.shared_thread_pool = shared_pool;
  options.int8_weights = int8 == "on" ? sam3::Int8Weights::kOn : int8 == "off" ? sam3::Int8Weights::kOff : sam3::Int8Weights::kAuto;
  options.fallback_vocabulary = std::string(SAM3_SOURCE_DIR) + "/data/clip/bpe_simple_vocab_16e6.txt.gz";

  std::map<std::string, std::vector<double>> ours, theirs;
  double ref_peak = 0;
  const fs::path raw = fs::temp_directory_path() / "sam3-bench-image.rgb";
  if (reference) {
    std::ofstream(raw, std::ios::binary).write(reinterpret_cast<const char*>(image.rgb.data()), static_cast<std::streamsize>(image.rgb.size()));
  }
  nlohmann::json tokens = nlohmann::json::array();
  const auto tok = sam3::ClipTokenizer::from_file(options.fallback_vocabulary);
  for (const auto& p : prompts) {
    const auto t = tok.encode(p);
    tokens.push_back({{"ids", t.ids}, {"mask", t.mask}});
  }
  std::fprintf(stderr, "preparing the models (first load on this host)...\n");
  const double prepare_ms = prepare_in_child(models, options);
  for (int r = 0; r < repeats; ++r) {
    std::fprintf(stderr, "repeat %d/%d: sam3cpp...\n", r + 1, repeats);
    for (const auto& [k, v] : run_ours(models, image, prompts, options)) ours[k].push_back(v);
    if (reference) {
      std::fprintf(stderr, "repeat %d/%d: reference...\n", r + 1, repeats);
      const auto s = run_reference(fs::path(SAM3_SOURCE_DIR) / "tools" / "reference" / "reference.mjs", models, raw, image,
                                   tokens.dump(), prompts.size(), &ref_peak);
      for (const auto& [k, v] : s) theirs[k].push_back(v);
    }
  }
  const double our_peak = peak_rss_mb();

  std::string runs_on;
  for (const auto& p : sam3::resolve_execution_providers(options.providers)) runs_on += (runs_on.empty() ? "" : ", ") + p;
  std::printf("machine: %s, %u hardware threads; ONNX Runtime %s on %s; image %dx%d, %zu prompts, %d repeats\n\n",
              cpu_name().c_str(), std::thread::hardware_concurrency(), sam3::onnxruntime_version().c_str(),
              runs_on.c_str(), image.width, image.height, prompts.size(), repeats);
  nlohmann::json out = {{"image", image_path}, {"prompts", prompts}, {"repeats", repeats}, {"stages", nlohmann::json::object()}};
  if (reference) {
    std::printf("| stage | sam3cpp ms, median (min-max) | reference ms, median (min-max) | sam3cpp / reference |\n|---|---:|---:|---:|\n");
  } else {
    std::printf("| stage | ms, median (min-max) |\n|---|---:|\n");
  }
  for (const auto& stage : kStages) {
    const Summary a = summarize(ours[stage]);
    out["stages"][stage] = {{"sam3cpp", {{"median", a.median}, {"min", a.min}, {"max", a.max}}}};
    if (reference) {
      const Summary b = summarize(theirs[stage]);
      out["stages"][stage]["reference"] = {{"median", b.median}, {"min", b.min}, {"max", b.max}};
      std::printf("| %s | %s | %s | %.2f |\n", stage.c_str(), cell(a).c_str(), cell(b).c_str(), b.median > 0 ? a.median / b.median : 0.0);
    } else {
      std::printf("| %s | %s |\n", stage.c_str(), cell(a).c_str());
    }
  }
  if (reference) {
    std::printf("| peak RSS MB | %.0f | %.0f | %.2f |\n", our_peak, ref_peak, ref_peak > 0 ? our_peak / ref_peak : 0.0);
    out["peak_rss_mb"] = {{"sam3cpp", our_peak}, {"reference", ref_peak}};
  } else {
    std::printf("| peak RSS MB | %.0f |\n", our_peak);
    out["peak_rss_mb"] = {{"sam3cpp", our_peak}};
  }
  std::printf("\n\"total\" is one image with all prompts, from the start of preprocessing, model loading excluded.\n");
  std::printf("sam3cpp's files were prepared first (first load on this host, %.0f ms, in a child process, not counted).\n",
              prepare_ms);
  out["prepare_ms"] = prepare_ms;
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  return 0;
}
