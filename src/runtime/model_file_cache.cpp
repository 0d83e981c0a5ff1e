#include "runtime/model_file_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <onnxruntime_cxx_api.h>
#include <set>
#include <sstream>

#include "core/hash.h"
#include "kernels/onednn_bf16.h"
#include "kernels/onednn_int8.h"
#include "optimize/onnx_attention.h"
#include "optimize/onnx_int8.h"
#include "optimize/onnx_uint8.h"
#include "kernels/onnx_onednn_bf16.h"
#include "kernels/onnx_onednn_int8.h"
#include "runtime/cpu_features.h"
#include "sam3/error.h"
#include "sam3/files.h"
#include "sam3/log.h"

namespace sam3::runtime {
namespace {

namespace fs = std::filesystem;

// A folder sam3 made for the cache, or may make: not a link (to a folder of the user's, where
// sam3 would remove and overwrite files it did not create), not a file.
bool own_folder_or_none(const fs::path& p) {
  std::error_code ec;
  const auto type = fs::symlink_status(p, ec).type();
  return type == fs::file_type::not_found || type == fs::file_type::directory;
}

bool regular_file_not_link(const fs::path& p) {
  std::error_code ec;
  return fs::symlink_status(p, ec).type() == fs::file_type::regular;
}

fs::path cache_root_of(const fs::path& model) {
  const fs::path next_to_model = model.parent_path() / ".sam3-cache";
  std::error_code ec;
  if (own_folder_or_none(next_to_model)) {
    fs::create_directories(next_to_model, ec);
    if (!ec && ::access(next_to_model.c_str(), W_OK) == 0 && own_folder_or_none(next_to_model)) return next_to_model;
  }
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const fs::path base = xdg && *xdg ? fs::path(xdg) : fs::path(home ? home : "/tmp") / ".cache";
  return base / "sam3cpp" / "optimized" / core::hex64(core::fnv1a64(fs::absolute(model.parent_path()).string()));
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Keeps a rewrite's result when it changed `count` things, and logs `what` it did.
bool keep_rewrite(std::string& bytes, std::string rewritten, int count, const fs::path& model, const std::string& what) {
  if (count == 0) return false;
  bytes = std::move(rewritten);
  log(LogLevel::kInfo, model.filename().string() + ": " + what);
  return true;
}

// Applies the graph rewrites to `bytes` and records them in `p`; false when nothing changed.
// Throws sam3::Error when the bytes are not an ONNX protobuf.
bool apply_rewrites(std::string& bytes, bool int8, bool exact_uint8, bool onednn, bool fuse_attention, bool bf16,
                    const FileCacheOptions& options, const fs::path& model, PreparedModelFile& p) {
  bool changed = false;
  if (exact_uint8) {
    optimize::Int8RewriteStats stats;
    auto rewritten = optimize::rewrite_matmulinteger_weights_to_uint8(bytes, &stats);
    p.uint8_weights = stats.weights;
    changed |= keep_rewrite(bytes, std::move(rewritten), stats.weights, model,
                            std::to_string(stats.weights) +
                                " int8 MatMulInteger weights rewritten as uint8: this CPU's u8 x s8 kernels saturate (" +
                                detect_cpu_features().summary() + ")");
  }
  if (int8) {
    optimize::Int8RewriteStats stats;
    auto rewritten = optimize::rewrite_matmulinteger_weights_to_int8(bytes, &stats);
    p.int8_weights = stats.weights;
    changed |= keep_rewrite(
        bytes, std::move(rewritten), stats.weights, model,
        std::to_string(stats.weights) + " MatMulInteger weights rewritten as int8 for this CPU (" + detect_cpu_features().summary() + ")");
  }
  if (int8 && onednn) {
    kernels::OneDnnInt8Stats stats;
    auto moved = kernels::move_matmulinteger_to_onednn(bytes, &stats, options.onednn_min_weights);
    p.onednn_int8 = stats.nodes;
    changed |= keep_rewrite(bytes, std::move(moved), stats.nodes, model,
                            std::to_string(stats.nodes) + " int8 products run on " + kernels::int8_kernels_description());
  }
  if (fuse_attention) {
    optimize::AttentionFusionStats stats;
    auto fused = optimize::fuse_attention(bytes, &stats);
    p.fused_attention = stats.fused;
    changed |= keep_rewrite(bytes, std::move(fused), stats.fused, model,
                            std::to_string(stats.fused) + " attention blocks fused into MultiHeadAttention");
  }
  if (bf16) {  // after the fusion: its attention nodes are what moves
    kernels::OneDnnBf16Stats stats;
    auto moved = kernels::move_float_work_to_onednn_bf16(bytes, &stats);
    p.bf16_attention = stats.attention;
    p.bf16_matmuls = stats.matmuls;
    changed |= keep_rewrite(bytes, std::move(moved), stats.attention + stats.matmuls, model,
                            std::to_string(stats.attention) + " attention and " + std::to_string(stats.matmuls) +
                                " float products run in bf16 on " + kernels::bf16_kernels_description());
  }
  return changed;
}

// Once per file and process: a process may load a model more than once (`models optimize`
// loads it again to check the prepared files).
void warn_forced_int8_once(const fs::path& model) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  const std::lock_guard lock(mutex);
  if (!warned.insert(fs::absolute(model).lexically_normal().string()).second) return;
  log(LogLevel::kWarning, model.filename().string() +
                              ": int8 weights forced (--int8 on) on a CPU without VNNI, AMX "
                              "or dot-product instructions: ONNX Runtime's u8 x s8 products here can saturate, so "
                              "results may differ from exact ones; --int8 auto keeps them exact");
}

bool int8_for(const FileCacheOptions& options) {
  return options.int8 == Int8Weights::kOn ||
         (options.int8 == Int8Weights::kAuto && options.cpu_int8 && detect_cpu_features().int8_weights_help());
}

// CPU sessions where ONNX Runtime's u8 x s8 kernels saturate, unless int8 weights are forced.
bool exact_uint8_for(const FileCacheOptions& options) {
  return options.int8 != Int8Weights::kOn && options.cpu_int8 && !detect_cpu_features().int8_weights_help();
}

// What the entry holds: ONNX Runtime's optimized graph (CPU), or sam3's rewritten one.
const char* entry_file(const FileCacheOptions& options) { return options.save_optimized ? "optimized.onnx" : "prepared.onnx"; }

void write_meta(const PreparedModelFile& p, const fs::path& source) {
  std::error_code ec;
  const nlohmann::ordered_json meta = {
      {"source", fs::absolute(source).string()}, {"source_size", fs::file_size(source, ec)},
      {"onnxruntime", Ort::GetVersionString()},  {"cpu", detect_cpu_features().summary()},
      {"int8_weights", p.int8_weights},          {"uint8_weights", p.uint8_weights},
      {"fused_attention", p.fused_attention},    {"onednn_int8", p.onednn_int8},
      {"bf16_attention", p.bf16_attention},      {"bf16_matmuls", p.bf16_matmuls},
  };
  write_file_atomic(p.entry / "meta.json", meta.dump(2) + "\n");
}

bool onednn_for(const FileCacheOptions& options) { return options.onednn && int8_for(options) && kernels::onednn_int8_available(); }

// Precision "fast" on a CPU session, where oneDNN has native bf16 kernels; else, once per
// process, a line saying that the exact path runs.
bool bf16_for(const FileCacheOptions& options) {
  if (!options.bf16 || !options.provider_key.empty()) return false;
  if (kernels::onednn_bf16_available()) return true;
  static std::once_flag said;
  std::call_once(said, [] {
    log(LogLevel::kInfo, "precision fast: float work stays exact, no bf16 kernels here: " + kernels::bf16_kernels_description());
  });
  return false;
}

// What tells this file from another put in its place: size and modification time, which a copy
// can keep (cp -p, rsync -t, a download tool), and the file's identity and change time, which it
// cannot (a new file has another inode; writing into the old one sets its change time).
std::string file_identity(const fs::path& model) {
  struct stat st {};
  if (::stat(model.c_str(), &st) != 0) return {};
  return std::to_string(st.st_size) + "|" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + "|" +
         std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + "|" + std::to_string(st.st_ctim.tv_sec) + "." +
         std::to_string(st.st_ctim.tv_nsec);
}

// The cache entry of this file for this host and these rewrites; empty if the file is unreadable
// or the entry is not sam3's own folder.
fs::path entry_for(const fs::path& model, const FileCacheOptions& options) {
  const std::string identity = file_identity(model);
  if (identity.empty()) return {};
  const std::string key = model.filename().string() + "|" + identity + "|" + Ort::GetVersionString() + "|" +
                          detect_cpu_features().summary() + "|" +
                          (int8_for(options)          ? "int8"
                           : exact_uint8_for(options) ? "uint8-exact"
                                                      : "uint8") +
                          (onednn_for(options) ? "|onednn-int8>=" + std::to_string(options.onednn_min_weights) : "") +
                          (options.fuse_attention ? "|fused-attention" : "") + (bf16_for(options) ? "|bf16" : "") +
                          (options.provider_key.empty() ? "" : "|providers=" + options.provider_key);
  const fs::path root = cache_root_of(model), entry = root / (model.stem().string() + "-" + core::hex64(core::fnv1a64(key)));
  if (!own_folder_or_none(root) || !own_folder_or_none(entry)) {
    log(LogLevel::kWarning, model.filename().string() + ": cache not used: " + entry.string() +
                                " is a link or not a folder (sam3 writes only into folders it made)");
    return {};
  }
  return entry;
}

}  // namespace

fs::path cache_folder(const fs::path& model) { return cache_root_of(model); }

fs::path external_data_file(const fs::path& model) {
  std::error_code ec;
  // "<file>.data" (most exporters), "<stem>.data", "<file>_data" (the onnx-community repositories).
  for (const fs::path& p :
       {fs::path(model.string() + ".data"), model.parent_path() / (model.stem().string() + ".data"), fs::path(model.string() + "_data")}) {
    if (fs::exists(p, ec)) return p;
  }
  return {};
}

static bool has_external_data(const fs::path& model) { return !external_data_file(model).empty(); }

bool has_prepared_file(const fs::path& model, const FileCacheOptions& options) {
  if (has_external_data(model)) return false;  // never cached (see prepare_model_file)
  const fs::path entry = entry_for(model, options);
  std::error_code ec;
  return !entry.empty() && regular_file_not_link(entry / entry_file(options));
}

PreparedModelFile prepare_model_file(const fs::path& model, const FileCacheOptions& options) {
  PreparedModelFile p;
  p.load_path = model;
  const bool int8 = int8_for(options);
  if (!options.enabled) return p;
  if (options.int8 == Int8Weights::kOn && options.cpu_int8 && !detect_cpu_features().int8_weights_help()) {
    warn_forced_int8_once(model);
  }
  // The rewrites are optimisations: a file they cannot parse is left to ONNX Runtime, whose
  // error names the file.
  if (has_external_data(model)) {
    if (!options.fuse_attention) return p;
    // Only the graph is in the .onnx: fused in memory on each load, nothing saved (a saved
    // graph would copy the weights). The int8 rewrite does not reach external weights.
    std::string graph = read_file(model);
    try {
      if (apply_rewrites(graph, false, false, false, options.fuse_attention, bf16_for(options), options, model, p)) {
        p.graph_in_memory = std::move(graph);
      }
    } catch (const Error&) {
    }
    return p;
  }
  std::error_code ec;
  p.entry = entry_for(model, options);
  if (p.entry.empty()) return p;
  const fs::path cached = p.entry / entry_file(options);
  if (regular_file_not_link(cached)) {
    p.load_path = cached;
    p.from_cache = true;
    p.pre_optimized = options.save_optimized;
    try {  // what was done to the file, for reports; a missing or damaged meta.json is harmless
      const auto meta = nlohmann::json::parse(read_file(p.entry / "meta.json"));
      p.int8_weights = meta.value("int8_weights", 0);
      p.uint8_weights = meta.value("uint8_weights", 0);
      p.fused_attention = meta.value("fused_attention", 0);
      p.onednn_int8 = meta.value("onednn_int8", 0);
      p.bf16_attention = meta.value("bf16_attention", 0);
      p.bf16_matmuls = meta.value("bf16_matmuls", 0);
    } catch (const nlohmann::json::exception&) {
    }
    return p;
  }
  // Rewrites on the file's bytes; ONNX Runtime then optimizes the result and saves it.
  std::string bytes = read_file(model);
  bool rewritten = false;
  try {
    rewritten = apply_rewrites(bytes, int8, exact_uint8_for(options), onednn_for(options), options.fuse_attention, bf16_for(options),
                               options, model, p);
  } catch (const Error&) {
    PreparedModelFile original;
    original.load_path = model;
    return original;
  }
  if (!options.save_optimized) {
    if (!rewritten) {  // nothing of sam3's to keep
      p.entry.clear();
      return p;
    }
    write_file_atomic(cached, bytes);  // another process may write the same bytes: the last rename wins
    write_meta(p, model);
    p.load_path = cached;
    return p;
  }
  // Other processes (a Slurm array, parallel tests) may prepare the same entry at the same
  // time: what this one writes before the final rename carries its own name, and it removes
  // only that.
  fs::create_directories(p.entry, ec);
  if (ec || !own_folder_or_none(p.entry)) {
    p.entry.clear();
    return p;
  }
  remove_stale_temporaries(p.entry);         // what processes that died here left
  static std::atomic<unsigned> sessions{0};  // several sessions of one process, too
  const std::string mine = ".tmp" + std::to_string(::getpid()) + "-" + std::to_string(sessions++);
  if (rewritten) {
    p.scratch = p.entry / ("rewritten.onnx" + mine);
    write_file_atomic(p.scratch, bytes);
    p.load_path = p.scratch;
  }
  p.save_optimized = p.entry / ("optimized.onnx" + mine);
  return p;
}

void finish_model_file(const PreparedModelFile& p, const fs::path& source) {
  if (p.save_optimized.empty()) return;
  std::error_code ec;
  if (fs::is_regular_file(p.save_optimized, ec)) {
    fs::rename(p.save_optimized, p.entry / "optimized.onnx", ec);
    if (!ec) {
      write_meta(p, source);
      log(LogLevel::kInfo, source.filename().string() + ": optimized graph cached in " + p.entry.string());
    }
  }
  discard_model_file(p);  // the rewritten graph is folded into the optimized one
}

void discard_model_file(const PreparedModelFile& p) {
  std::error_code ec;
  if (p.from_cache) fs::remove(p.load_path, ec);  // damaged: the next load rebuilds it
  if (!p.scratch.empty()) fs::remove(p.scratch, ec);
  if (!p.save_optimized.empty()) fs::remove(p.save_optimized, ec);
}

}  // namespace sam3::runtime
