// sam3-bench: per-stage timings of the pipeline (median and spread over repeats), peak
// memory, and, with --reference, the model card's pipeline (onnxruntime-node, three networks
// per request) on the same files in the same run, with ratios. One column per kernel choice
// (ONNX Runtime's, int8 on oneDNN, and that with precision "fast"); how far each choice's
// masks and scores are from the previous choice's; and how the time grows with the prompts.
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
#include <cstdlib>
#include <cstdint>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "sam3/image.h"
#include "sam3/image_segmenter.h"
#include "sam3/model.h"
#include "sam3/tokenizer.h"

namespace {

namespace fs = std::filesystem;
using Stages = std::map<std::string, double>;  // stage -> ms for one repeat

const std::vector<std::string> kStages = {"load", "preprocess", "encode_image", "encode_text", "decode", "postprocess", "total"};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// A prompt's instances: count, then per instance score, box, width, height, mask bytes.
void write_instances(std::ofstream& out, const sam3::PromptResult& r) {
  const auto put = [&](const auto& v) { out.write(reinterpret_cast<const char*>(&v), sizeof v); };
  put(static_cast<std::uint32_t>(r.instances.size()));
  for (const auto& inst : r.instances) {
    put(inst.score);
    put(inst.box);
    put(static_cast<std::int32_t>(inst.mask.width()));
    put(static_cast<std::int32_t>(inst.mask.height()));
    const auto raster = inst.mask.to_raster();
    out.write(reinterpret_cast<const char*>(raster.data()), static_cast<std::streamsize>(raster.size()));
  }
}

struct Instance {
  float score = 0;
  sam3::Box box;
  std::vector<std::uint8_t> mask;
};
std::vector<std::vector<Instance>> read_instances(const std::string& path, size_t prompts) {
  std::ifstream in(path, std::ios::binary);
  const auto get = [&](auto& v) { in.read(reinterpret_cast<char*>(&v), sizeof v); };
  std::vector<std::vector<Instance>> out(prompts);
  for (auto& p : out) {
    std::uint32_t n = 0;
    get(n);
    p.resize(in ? n : 0);
    for (auto& inst : p) {
      std::int32_t w = 0, h = 0;
      get(inst.score), get(inst.box), get(w), get(h);
      inst.mask.resize(static_cast<size_t>(std::max(0, w)) * static_cast<size_t>(std::max(0, h)));
      in.read(reinterpret_cast<char*>(inst.mask.data()), static_cast<std::streamsize>(inst.mask.size()));
    }
  }
  return out;
}

double box_iou(const sam3::Box& a, const sam3::Box& b) {
  const double w = std::min(a.x1, b.x1) - std::max(a.x0, b.x0), h = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
  const double both = w > 0 && h > 0 ? w * h : 0;
  const double either = (a.x1 - a.x0) * (a.y1 - a.y0) + (b.x1 - b.x0) * (b.y1 - b.y0) - both;
  return either > 0 ? both / either : 1.0;
}

double mask_iou(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  size_t both = 0, either = 0;
  for (size_t j = 0; j < a.size() && j < b.size(); ++j) both += a[j] && b[j], either += a[j] || b[j];
  return either ? static_cast<double>(both) / static_cast<double>(either) : 1.0;
}

// How far `b`'s instances are from `a`'s (the same prompts): instance counts, and each of a's
// instances against b's instance with the closest box: how many have a mask IoU >= 0.99, the
// smallest IoU and the largest score difference among those pairs.
std::string fidelity(const std::vector<std::vector<Instance>>& a, const std::vector<std::vector<Instance>>& b) {
  size_t na = 0, nb = 0, paired = 0, close = 0;
  double worst_iou = 1, worst_score = 0;
  for (size_t p = 0; p < a.size() && p < b.size(); ++p) {
    na += a[p].size(), nb += b[p].size();
    for (const auto& x : a[p]) {
      const Instance* best = nullptr;
      double best_iou = -1;
      for (const auto& y : b[p]) {
        if (const double i = box_iou(x.box, y.box); i > best_iou) best_iou = i, best = &y;
      }
      if (!best) continue;
      const double iou = mask_iou(x.mask, best->mask);
      ++paired, close += iou >= 0.99;
      worst_iou = std::min(worst_iou, iou);
      worst_score = std::max(worst_score, static_cast<double>(std::abs(x.score - best->score)));
    }
  }
  char buf[300];
  std::snprintf(buf, sizeof buf,
                "%zu against %zu instances over %zu prompts; paired by closest box: %zu of %zu with mask IoU >= 0.99, "
                "smallest IoU %.4f, largest score difference %.4f",
                nb, na, a.size(), close, paired, worst_iou, worst_score);
  return buf;
}

// Stage totals; "after N" is the time from preprocessing to the end of the N-th prompt. With a
// `dump` path, each prompt's instances (score, mask) are written there for the fidelity check.
Stages run_ours(const fs::path& models, const sam3::Image& image, const std::vector<std::string>& prompts,
                const sam3::ModelOptions& options, const std::string& dump) {
  Stages s;
  std::ofstream masks;
  if (!dump.empty()) masks.open(dump, std::ios::binary);
  auto t0 = std::chrono::steady_clock::now();
  const auto segmenter = sam3::ImageSegmenter::load(models, options);
  s["load"] = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  const auto embedding = segmenter.encode(image);
  s["preprocess"] = embedding.preprocess_ms();
  s["encode_image"] = embedding.encode_ms();
  for (size_t i = 0; i < prompts.size(); ++i) {
    const auto r = segmenter.segment(embedding, {prompts[i], {}});
    s["encode_text"] += r.timings.encode_text_ms;
    s["decode"] += r.timings.decode_ms;
    s["postprocess"] += r.timings.postprocess_ms;
    s["after " + std::to_string(i + 1)] = ms_since(t0);
    if (masks.is_open()) write_instances(masks, r);
  }
  s["total"] = ms_since(t0);
  return s;
}

// run_ours in a child process: each kernel choice gets its own peak memory (the child's).
Stages run_ours_in_child(const fs::path& models, const sam3::Image& image, const std::vector<std::string>& prompts,
                         const sam3::ModelOptions& options, const std::string& dump, double* peak_mb) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    int code = 0;
    std::string out;
    try {
      out = nlohmann::json(run_ours(models, image, prompts, options, dump)).dump();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "sam3-bench: %s\n", e.what());
      code = 1;
    }
    for (size_t done = 0; done < out.size();) {
      const auto n = ::write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    std::_Exit(code);
  }
  ::close(fds[1]);
  std::string out;
  std::array<char, 4096> buf;
  for (ssize_t n; (n = ::read(fds[0], buf.data(), buf.size())) > 0;) out.append(buf.data(), static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  rusage u{};
  if (pid < 0 || ::wait4(pid, &status, 0, &u) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("the sam3cpp run failed");
  }
  *peak_mb = std::max(*peak_mb, u.ru_maxrss / 1024.0);
  return nlohmann::json::parse(out).get<Stages>();
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
  const std::string cmd = "node " + script.string() + " " + models.string() + " " + raw.string() + " " + std::to_string(image.width) + " " +
                          std::to_string(image.height) + " '" + tokens + "' " + std::to_string(requests);
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
  double total = 0;
  int request = 0;
  for (const auto& r : j["requests"]) {
    for (const auto& [k, v] : r.items()) s[k] += v.get<double>(), total += v.get<double>();
    s["after " + std::to_string(++request)] = total;
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
  app.add_option("--provider", providers, "Execution providers as a fallback order (cpu, cuda, tensorrt, ..., auto)")->delimiter(',');
  std::vector<std::string> kernels = {"ort", "onednn-int8", "onednn-int8+bf16"};
  app.add_option("--kernels", kernels,
                 "Kernel choices, one column each: ort (ONNX Runtime's), onednn-int8 (int8 products on oneDNN), "
                 "onednn-int8+bf16 (and precision fast: attention and large float products in bf16 on oneDNN); "
                 "the masks of each are compared with the previous one's")
      ->delimiter(',')
      ->check(CLI::IsMember({"ort", "onednn-int8", "onednn-int8+bf16"}))
      ->capture_default_str();
  std::int64_t min_weights = sam3::ModelOptions{}.onednn_min_weights;
  app.add_option("--onednn-min-weights", min_weights, "int8 products with fewer weights (K x N) stay with ONNX Runtime (0: all on oneDNN)")
      ->capture_default_str();
  std::vector<int> growth;
  app.add_option("--growth", growth,
                 "Prompt counts (e.g. 1,5,20): the prompts are cycled up to the largest, and a "
                 "second table gives the time to the end of each count")
      ->delimiter(',')
      ->check(CLI::Range(1, 1000));
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
  options.onednn_min_weights = min_weights;
  options.int8_weights = int8 == "on" ? sam3::Int8Weights::kOn : int8 == "off" ? sam3::Int8Weights::kOff : sam3::Int8Weights::kAuto;

  std::map<std::string, std::map<std::string, std::vector<double>>> ours;  // kernels -> stage -> ms
  std::map<std::string, std::vector<double>> theirs;
  std::map<std::string, double> our_peak;
  double ref_peak = 0;
  auto options_for = [&](const std::string& k) {
    sam3::ModelOptions o = options;
    o.onednn_kernels = k != "ort";
    o.precision = k == "onednn-int8+bf16" ? sam3::Precision::kFast : sam3::Precision::kExact;
    return o;
  };
  if (!growth.empty()) {
    const size_t given = prompts.size(), most = static_cast<size_t>(*std::max_element(growth.begin(), growth.end()));
    for (size_t i = given; i < most; ++i) prompts.push_back(prompts[i % given]);
    prompts.resize(most);
  }
  auto dump_of = [&](const std::string& k) { return (fs::temp_directory_path() / ("sam3-bench-" + k + ".masks")).string(); };
  const fs::path raw = fs::temp_directory_path() / "sam3-bench-image.rgb";
  if (reference) {
    std::ofstream(raw, std::ios::binary)
        .write(reinterpret_cast<const char*>(image.rgb.data()), static_cast<std::streamsize>(image.rgb.size()));
  }
  nlohmann::json tokens = nlohmann::json::array();
  const auto tok =
      sam3::ClipTokenizer::from_file(options.fallback_vocabulary.empty() ? sam3::bundled_vocabulary() : options.fallback_vocabulary);
  for (const auto& p : prompts) {
    const auto t = tok.encode(p);
    tokens.push_back({{"ids", t.ids}, {"mask", t.mask}});
  }
  std::fprintf(stderr, "preparing the models (first load on this host)...\n");
  double prepare_ms = 0;
  for (const auto& k : kernels) prepare_ms += prepare_in_child(models, options_for(k));
  for (int r = 0; r < repeats; ++r) {
    for (const auto& k : kernels) {
      std::fprintf(stderr, "repeat %d/%d: sam3cpp, %s kernels...\n", r + 1, repeats, k.c_str());
      const auto s = run_ours_in_child(models, image, prompts, options_for(k), r == 0 ? dump_of(k) : "", &our_peak[k]);
      for (const auto& [stage, v] : s) ours[k][stage].push_back(v);
    }
    if (reference) {
      std::fprintf(stderr, "repeat %d/%d: reference...\n", r + 1, repeats);
      const auto s = run_reference(fs::path(SAM3_SOURCE_DIR) / "tools" / "reference" / "reference.mjs", models, raw, image, tokens.dump(),
                                   prompts.size(), &ref_peak);
      for (const auto& [k, v] : s) theirs[k].push_back(v);
    }
  }
  std::string runs_on;
  for (const auto& p : sam3::resolve_execution_providers(options.providers)) runs_on += (runs_on.empty() ? "" : ", ") + p;
  double load[3] = {0, 0, 0};
  ::getloadavg(load, 3);
  std::printf(
      "machine: %s, %u hardware threads, load average %.2f %.2f %.2f at the end; ONNX Runtime %s on %s; int8 products on %s\n"
      "(those with %lld weights or more); bf16 work (onednn-int8+bf16) on %s; image %dx%d, %zu prompts, %d repeats\n\n",
      cpu_name().c_str(), std::thread::hardware_concurrency(), load[0], load[1], load[2], sam3::onnxruntime_version().c_str(),
      runs_on.c_str(), sam3::int8_kernels().c_str(), static_cast<long long>(min_weights), sam3::bf16_kernels().c_str(), image.width,
      image.height, prompts.size(), repeats);
  nlohmann::json out = {{"image", image_path},
                        {"prompts", prompts},
                        {"repeats", repeats},
                        {"int8_kernels", sam3::int8_kernels()},
                        {"bf16_kernels", sam3::bf16_kernels()},
                        {"onednn_min_weights", min_weights},
                        {"load_average", load},
                        {"stages", nlohmann::json::object()}};
  // | stage | sam3cpp (k) ... | reference | sam3cpp (k) / reference ... |
  std::string header = "| stage |", rule = "|---|";
  for (const auto& k : kernels) header += " sam3cpp, " + k + " kernels, ms |", rule += "---:|";
  if (reference) {
    header += " reference ms |", rule += "---:|";
    for (const auto& k : kernels) header += " " + k + " / reference |", rule += "---:|";
  }
  std::printf("%s\n%s\n", header.c_str(), rule.c_str());
  for (const auto& stage : kStages) {
    const Summary b = summarize(theirs[stage]);
    std::string row = "| " + stage + " |";
    for (const auto& k : kernels) {
      const Summary a = summarize(ours[k][stage]);
      out["stages"][stage]["sam3cpp " + k] = {{"median", a.median}, {"min", a.min}, {"max", a.max}};
      row += " " + cell(a) + " |";
    }
    if (reference) {
      out["stages"][stage]["reference"] = {{"median", b.median}, {"min", b.min}, {"max", b.max}};
      row += " " + cell(b) + " |";
      for (const auto& k : kernels) {
        const Summary a = summarize(ours[k][stage]);
        char ratio[32];
        std::snprintf(ratio, sizeof ratio, " %.2f |", b.median > 0 ? a.median / b.median : 0.0);
        row += ratio;
      }
    }
    std::printf("%s\n", row.c_str());
  }
  std::string row = "| peak RSS MB |";
  char buf[64];
  for (const auto& k : kernels) {
    std::snprintf(buf, sizeof buf, " %.0f |", our_peak[k]);
    row += buf;
    out["peak_rss_mb"]["sam3cpp " + k] = our_peak[k];
  }
  if (reference) {
    std::snprintf(buf, sizeof buf, " %.0f |", ref_peak);
    row += buf;
    out["peak_rss_mb"]["reference"] = ref_peak;
    for (const auto& k : kernels) {
      std::snprintf(buf, sizeof buf, " %.2f |", ref_peak > 0 ? our_peak[k] / ref_peak : 0.0);
      row += buf;
    }
  }
  std::printf("%s\n", row.c_str());
  if (!growth.empty()) {
    // | prompts | sam3cpp (k) ... | reference | sam3cpp (k) / reference ... |
    std::printf("\n%s\n%s\n", ("| prompts |" + header.substr(std::string("| stage |").size())).c_str(), rule.c_str());
    for (const int n : growth) {
      const std::string stage = "after " + std::to_string(n);
      std::string line = "| " + std::to_string(n) + " |";
      for (const auto& k : kernels) line += " " + cell(summarize(ours[k][stage])) + " |";
      if (reference) {
        const Summary b = summarize(theirs[stage]);
        line += " " + cell(b) + " |";
        for (const auto& k : kernels) {
          std::snprintf(buf, sizeof buf, " %.2f |", b.median > 0 ? summarize(ours[k][stage]).median / b.median : 0.0);
          line += buf;
        }
      }
      std::printf("%s\n", line.c_str());
      out["growth"][std::to_string(n)] = nlohmann::json::object();
      for (const auto& k : kernels) out["growth"][std::to_string(n)]["sam3cpp " + k] = summarize(ours[k][stage]).median;
      if (reference) out["growth"][std::to_string(n)]["reference"] = summarize(theirs[stage]).median;
    }
    std::printf("(ms from the start of preprocessing to the end of the N-th prompt; the reference encodes the image for each)\n");
  }
  // Each choice against the one before it (onednn-int8+bf16 against onednn-int8: what bf16 changes).
  if (kernels.size() > 1) std::printf("\nmasks and scores of each kernel choice against the previous column's (first repeat):\n");
  for (size_t i = 1; i < kernels.size(); ++i) {
    const std::string f =
        fidelity(read_instances(dump_of(kernels[i - 1]), prompts.size()), read_instances(dump_of(kernels[i]), prompts.size()));
    std::printf("  %s against %s: %s\n", kernels[i].c_str(), kernels[i - 1].c_str(), f.c_str());
    out["fidelity"][kernels[i] + " against " + kernels[i - 1]] = f;
  }
  for (const auto& k : kernels) fs::remove(dump_of(k));
  std::printf("\n\"total\" is one image with all prompts, from the start of preprocessing, model loading excluded.\n");
  std::printf(
      "sam3cpp's files were prepared first (first load on this host, %.0f ms for all kernel choices, in child\n"
      "processes, not counted); each sam3cpp run is a child process of its own (its own peak memory).\n",
      prepare_ms);
  out["prepare_ms"] = prepare_ms;
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  return 0;
}
