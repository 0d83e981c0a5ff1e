// Per-host preparation of an ONNX file before ONNX Runtime loads it, cached next to the model
// (<dir>/.sam3-cache/, or the user cache when the model folder is read-only):
//  - int8 weights: MatMulInteger's uint8 weights rewritten as int8 (exact) when the CPU has
//    VNNI/AMX/dot-product instructions; without them, where ONNX Runtime's u8 x s8 kernels
//    saturate, int8 weights rewritten as uint8 so that the products stay exact;
//  - those int8 products handed to oneDNN (kernels/onednn_int8.h) when the build has it and
//    oneDNN runs them exactly on this CPU (VNNI/AMX);
//  - attention written out op by op fused into ONNX Runtime's MultiHeadAttention, which never
//    materialises the score matrix (optimize/onnx_attention.h); for files with external
//    weights only this, in memory, on every load;
//  - with FileCacheOptions::bf16 (precision "fast"), the fused attention and large float
//    products handed to oneDNN's bf16 kernels where the CPU has them (kernels/onednn_bf16.h);
//  - the graph as ONNX Runtime optimized it, saved on the first load, so later loads skip
//    graph optimisation.
// Entries are keyed by the file's size and modification time, the CPU features, the ONNX
// Runtime version, the kernels used and the execution providers (CPU entries keep the key they
// had before providers could be chosen); the source's size is recorded in the entry's meta.json.
// Sessions on other providers keep only sam3's rewritten graph (prepared.onnx): ONNX Runtime
// optimizes it on each load, as their compiled nodes cannot be saved.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "kernels/onnx_onednn_int8.h"

namespace sam3::runtime {

enum class Int8Weights { kAuto, kOn, kOff };

struct FileCacheOptions {
  bool enabled = true;
  Int8Weights int8 = Int8Weights::kAuto;
  bool fuse_attention = true;
  // Set from the session's execution providers (provider_chain.h: preparation_for).
  bool cpu_int8 = true;                                              // kAuto may rewrite int8 weights (CPU sessions only)
  bool save_optimized = true;                                        // keep ONNX Runtime's optimized graph; else only the rewritten one
  std::string provider_key;                                          // part of the cache key ("" for the CPU, e.g. "cuda+cpu")
  bool onednn = true;                                                // int8 products on oneDNN where available (needs the int8 weights)
  std::int64_t onednn_min_weights = kernels::kOneDnnInt8MinWeights;  // smaller products stay with ONNX Runtime
  bool bf16 = false;                                                 // float work in bf16 on oneDNN where available (CPU sessions only)
};

struct PreparedModelFile {
  std::filesystem::path load_path;       // what ONNX Runtime loads
  bool pre_optimized = false;            // a saved optimized graph: skip graph optimisation
  std::filesystem::path save_optimized;  // where ONNX Runtime should write its optimized graph
  std::filesystem::path entry;           // the cache entry folder (empty when not cached)
  bool from_cache = false;               // load_path is the entry's finished file
  std::filesystem::path scratch;         // this process's rewritten graph, removed when done
  int int8_weights = 0;                  // weights rewritten as int8 (0: none or not applied)
  int uint8_weights = 0;                 // int8 weights rewritten as uint8 where u8 x s8 saturates
  int fused_attention = 0;               // attention patterns fused (0: none or not applied)
  int onednn_int8 = 0;                   // MatMulInteger nodes run by oneDNN
  int bf16_attention = 0;                // MultiHeadAttention nodes run in bf16 by oneDNN
  int bf16_matmuls = 0;                  // MatMul nodes run in bf16 by oneDNN
  // Files with external weights: the fused graph, held in memory (nothing is cached: a saved
  // graph would copy gigabytes of weights); its weights are read from load_path's folder.
  std::string graph_in_memory;
};

PreparedModelFile prepare_model_file(const std::filesystem::path& model, const FileCacheOptions& options);
// Whether this host's prepared graph of the file is in the cache (nothing is written).
bool has_prepared_file(const std::filesystem::path& model, const FileCacheOptions& options);
// The model's cache folder (<dir>/.sam3-cache, or the user cache when that is read-only).
std::filesystem::path cache_folder(const std::filesystem::path& model);
// The file holding the model's external weights ("<file>.data", "<stem>.data" or "<file>_data"); empty if none.
std::filesystem::path external_data_file(const std::filesystem::path& model);
// After a session was created with save_optimized: move the file into place, describe it, and
// remove this process's scratch files.
void finish_model_file(const PreparedModelFile& prepared, const std::filesystem::path& source);
// After a failed load: this process's scratch files are removed, and a cached file that failed
// to load, so the next load rebuilds it. Never more: other processes may share the entry.
void discard_model_file(const PreparedModelFile& prepared);

}  // namespace sam3::runtime
