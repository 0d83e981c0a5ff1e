// sam3-bench-video-graphs: each graph of a SAM 3.1 video bundle timed alone, at the shapes the
// tracker feeds it at steady state (a full bank: 7 memory frames and 16 pointer frames of a
// bucket of 16), on random inputs; for each call its time, its peak resident memory above what
// was resident before it (VmHWM reset through /proc/self/clear_refs) and how many attention
// blocks sam3's fusion wrote into the graph. The per-frame cost of N objects is then
//   encoder + grounding x prompts + ceil(N / 16) x (memory attention + tracking decoder
//   + pointers + memory encoder) + host rules
// (docs/video.md, "At SAM 3.1's real size"). A real-size frame takes minutes on a small machine;
// this times each graph once at the shapes that matter without running the frames that lead
// there. `--compare unfused` also runs the memory attention without the fusion on the same
// inputs and prints the largest difference (the fused graph must equal it within rounding);
// `--precision-fast --compare exact` times the bf16 path (oneDNN) against the exact fused one.
// The bench bundle's outputs are its behaviour graph's (docs/video.md): compare on the real
// graph alone (make_sam31_bench_bundle.py --memory-attention-alone).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/session.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kD = 256, kGrid = 72, kTokens = kGrid * kGrid, kSlots = 16;

double status_mb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::stod(line.substr(line.find(':') + 1)) / 1024.0;  // kB
  }
  return 0.0;
}

void reset_peak() { std::ofstream("/proc/self/clear_refs") << "5"; }

// Random inputs that live as long as the values viewing them.
struct Feeds {
  std::vector<std::vector<float>> floats;
  std::vector<std::vector<std::int64_t>> ints;
  std::vector<std::vector<std::int32_t>> ints32;
  std::vector<std::vector<std::uint8_t>> bools;
  std::map<std::string, Ort::Value> values;

  std::map<std::string, const OrtValue*> feeds() const {
    std::map<std::string, const OrtValue*> r;
    for (const auto& [k, v] : values) r[k] = v;
    return r;
  }
};

std::int64_t count(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

// Fills every input the session lists with the shape `shapes` gives (or its declared one);
// floats are N(0, 1) from `seed`, integers and bools as `ints` says (default 0).
Feeds make_feeds(const sam3::runtime::Session& s, const std::map<std::string, std::vector<std::int64_t>>& shapes, unsigned seed,
                 const std::map<std::string, std::vector<std::int64_t>>& ints = {}) {
  Feeds f;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  f.floats.reserve(s.inputs().size());
  f.ints.reserve(s.inputs().size());
  f.ints32.reserve(s.inputs().size());
  f.bools.reserve(s.inputs().size());
  for (const auto& in : s.inputs()) {
    std::vector<std::int64_t> shape = shapes.count(in.name) ? shapes.at(in.name) : in.shape;
    for (auto& d : shape) {
      if (d < 0) throw std::runtime_error(s.path().filename().string() + ": input " + in.name + " needs a shape");
    }
    const auto n = static_cast<size_t>(count(shape));
    std::vector<std::int64_t> given = ints.count(in.name) ? ints.at(in.name) : std::vector<std::int64_t>{};
    given.resize(n, 0);
    switch (in.type) {
      case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: {
        auto& v = f.floats.emplace_back(n);
        for (auto& x : v) x = normal(rng);
        f.values.emplace(in.name, sam3::runtime::view(v.data(), n, shape));
        break;
      }
      case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: {
        auto& v = f.ints.emplace_back(given);
        f.values.emplace(in.name, sam3::runtime::view(v.data(), n, shape));
        break;
      }
      case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: {
        auto& v = f.ints32.emplace_back(given.begin(), given.end());
        f.values.emplace(in.name, sam3::runtime::view(v.data(), n, shape));
        break;
      }
      case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: {
        auto& v = f.bools.emplace_back(given.begin(), given.end());
        f.values.emplace(in.name, sam3::runtime::view_bool(v.data(), n, shape));
        break;
      }
      default:
        throw std::runtime_error(s.path().filename().string() + ": input " + in.name + " has a type this bench does not make");
    }
  }
  return f;
}

struct Call {
  std::string graph, shape;
  int fused = 0;
  double ms = 0, peak_above_mb = 0, resident_after_mb = 0;
};

struct Timed {
  Call call;
  std::map<std::string, Ort::Value> out;
};

Timed time_call(const sam3::runtime::Session& s, const Feeds& f, const std::string& graph, const std::string& shape, int repeat) {
  Timed t;
  t.call.graph = graph;
  t.call.shape = shape;
  t.call.fused = s.prepared().fused_attention;
  double best = 1e300, peak = 0;
  for (int r = 0; r < repeat; ++r) {
    t.out.clear();
    const double before = status_mb("VmRSS:");
    reset_peak();
    const auto t0 = Clock::now();
    t.out = s.run(f.feeds());
    best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    peak = std::max(peak, status_mb("VmHWM:") - before);
  }
  t.call.ms = best;
  t.call.peak_above_mb = peak;
  t.call.resident_after_mb = status_mb("VmRSS:");
  return t;
}

fs::path graph_file(const fs::path& dir, const std::string& stem) {
  for (const auto& p : {dir / (stem + ".onnx"), dir / "onnx" / (stem + ".onnx")}) {
    if (fs::is_regular_file(p)) return p;
  }
  throw std::runtime_error((dir / (stem + ".onnx")).string() + ": missing");
}

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> r;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) r.push_back(std::stoi(item));
  return r;
}

float max_difference(const Ort::Value& a, const Ort::Value& b) {
  const auto n = a.GetTensorTypeAndShapeInfo().GetElementCount();
  if (n != b.GetTensorTypeAndShapeInfo().GetElementCount()) return INFINITY;
  const float *x = a.GetTensorData<float>(), *y = b.GetTensorData<float>();
  float m = 0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(x[i] - y[i]));
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sam3-bench-video-graphs: each graph of a SAM 3.1 video bundle timed alone at the tracker's steady-state shapes"};
  std::string models, graphs = "image_encoder,grounding,memory_attention,tracking_mask_decoder,memory_encoder,pointers", frames = "7";
  int threads = 1, pointer_frames = 16, repeat = 1;
  bool unfused = false, fast = false;
  std::string compare, arena = "on";
  app.add_option("--models", models, "A SAM 3.1 bundle (ailia's file names)")->required();
  app.add_option("--graphs", graphs, "Which graphs, comma-separated");
  app.add_option("--memory-frames", frames,
                 "Memory frames in the bank for each memory-attention call (7: full; up to 10 with reconditioning)");
  app.add_option("--pointer-frames", pointer_frames, "Pointer frames in the bank (16: full), 16 pointers each");
  app.add_option("--threads", threads, "ONNX Runtime intra-op threads");
  app.add_option("--repeat", repeat, "Calls per graph (the fastest is reported)");
  app.add_flag("--unfused", unfused, "Load every graph without sam3's attention fusion");
  app.add_option("--arena", arena, "ONNX Runtime's CPU memory arena for every session (on: as the tracker's video graphs)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_flag("--precision-fast", fast, "bf16 float work on oneDNN where the CPU has it (ModelOptions precision fast)");
  app.add_option("--compare", compare,
                 "Also run the memory attention as 'unfused' or 'exact' (fused, float32) on the same inputs; print the largest difference")
      ->check(CLI::IsMember({"unfused", "exact"}));
  CLI11_PARSE(app, argc, argv);
  if (threads < 1 || repeat < 1 || pointer_frames < 0) {
    std::fprintf(stderr, "--threads and --repeat must be at least 1, --pointer-frames at least 0\n");
    return 2;
  }
  try {
    sam3::runtime::SessionConfig config;  // as Model::load makes the video graphs' sessions
    config.intra_op_threads = threads;
    config.cache.fuse_attention = !unfused;
    config.cache.bf16 = fast;
    config.memory_arena = arena == "on" ? sam3::runtime::SessionConfig::Arena::kOn : sam3::runtime::SessionConfig::Arena::kOff;
    const fs::path dir = models;
    std::vector<Call> calls;
    auto want = [&](const std::string& g) { return ("," + graphs + ",").find("," + g + ",") != std::string::npos; };
    auto load = [&](const std::string& stem, const sam3::runtime::SessionConfig& c) {
      auto s = std::make_unique<sam3::runtime::Session>(graph_file(dir, "sam3.1_" + stem), c);
      if (c.cache.bf16)
        std::fprintf(stderr, "%s: %d attention blocks and %d products in bf16\n", stem.c_str(), s->prepared().bf16_attention,
                     s->prepared().bf16_matmuls);
      return s;
    };
    auto print = [](const Call& c) {
      std::printf("| %s | %s | %d | %.1f | %.0f | %.0f |\n", c.graph.c_str(), c.shape.c_str(), c.fused, c.ms, c.peak_above_mb,
                  c.resident_after_mb);
      std::fflush(stdout);
    };
    std::printf(
        "| graph | shape | fused attention blocks | ms | peak above resident MB | resident after MB |\n|---|---|---:|---:|---:|---:|\n");
    const std::vector<std::int64_t> map72{1, kD, kGrid, kGrid}, map144{1, kD, 144, 144}, map288{1, kD, 288, 288};
    if (want("image_encoder")) {
      auto s = load("image_encoder", config);
      auto f = make_feeds(*s, {{"image", {1, 3, 1008, 1008}}}, 1);
      calls.push_back(time_call(*s, f, "image_encoder", "1x3x1008x1008", repeat).call);
      print(calls.back());
    }
    if (want("grounding")) {
      auto s = load("grounding", config);
      // A text prompt alone ("car": SAM3's start, word and end ids, zero padding), no boxes.
      auto f = make_feeds(*s,
                          {{"fpn0", map288},
                           {"fpn1", map144},
                           {"fpn2", map72},
                           {"pos2", map72},
                           {"text_tokens", {1, 32}},
                           {"box_coords", {0, 1, 4}},
                           {"box_labels", {0, 1}},
                           {"box_mask", {1, 0}}},
                          2, {{"text_tokens", {49406, 1615, 49407}}});
      calls.push_back(time_call(*s, f, "grounding", "1 text prompt", repeat).call);
      print(calls.back());
    }
    if (want("memory_attention")) {
      auto s = load("memory_attention", config);
      std::unique_ptr<sam3::runtime::Session> plain;
      if (!compare.empty()) {
        auto c = config;
        c.cache.fuse_attention = compare == "exact";
        c.cache.bf16 = false;
        plain = load("memory_attention", c);
      }
      for (int n : parse_list(frames)) {
        const std::int64_t ti = n * kTokens, t = ti + pointer_frames * kSlots;
        auto f = make_feeds(*s,
                            {{"curr_obj", {kTokens, 1, kD}},
                             {"curr_obj_pos", {kTokens, 1, kD}},
                             {"curr_img", {kTokens, 1, kD}},
                             {"memory_obj", {t, 1, kD}},
                             {"memory_obj_pos", {t, 1, kD}},
                             {"memory_img", {ti, 1, kD}},
                             {"memory_img_pos", {ti, 1, kD}}},
                            3 + n);
        const std::string shape =
            std::to_string(n) + " memory frames + " + std::to_string(pointer_frames) + "x16 pointers (" + std::to_string(t) + " keys)";
        auto fused = time_call(*s, f, "memory_attention", shape, repeat);
        calls.push_back(fused.call);
        print(calls.back());
        if (plain) {
          auto ref = time_call(*plain, f, "memory_attention (" + compare + ")", shape, repeat);
          calls.push_back(ref.call);
          print(calls.back());
          const auto& name = s->outputs().at(0).name;
          std::printf("memory attention, %d memory frames: largest difference to %s = %.3g\n", n, compare.c_str(),
                      max_difference(fused.out.at(name), ref.out.at(name)));
        }
      }
    }
    if (want("tracking_mask_decoder")) {
      auto s = load("tracking_mask_decoder", config);
      auto f = make_feeds(
          *s, {{"image_embeddings", map72}, {"high_res_feat0", map288}, {"high_res_feat1", map144}, {"extra_embed", {1, kSlots, kD}}}, 4);
      calls.push_back(time_call(*s, f, "tracking_mask_decoder", "a bucket of 16", repeat).call);
      print(calls.back());
    }
    if (want("memory_encoder")) {
      auto s = load("memory_encoder", config);
      auto f = make_feeds(*s, {{"pix_feat", map72}, {"masks", {1, 2 * kSlots, 1152, 1152}}}, 5);
      calls.push_back(time_call(*s, f, "memory_encoder", "a bucket of 16 (32 x 1152^2)", repeat).call);
      print(calls.back());
    }
    if (want("pointers")) {
      auto p = load("obj_ptr_proj", config);
      auto f = make_feeds(*p, {{"x", {kSlots, kD}}}, 6);
      calls.push_back(time_call(*p, f, "obj_ptr_proj", "16 tokens", repeat).call);
      print(calls.back());
      auto q = load("obj_ptr_tpos_proj", config);
      auto g = make_feeds(*q, {{"x", {pointer_frames, kD}}}, 7);
      calls.push_back(time_call(*q, g, "obj_ptr_tpos_proj", std::to_string(pointer_frames) + " ages", repeat).call);
      print(calls.back());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sam3-bench-video-graphs: %s\n", e.what());
    return 1;
  }
  return 0;
}
