// The execution providers a model's sessions are created with, resolved once per load from
// what the caller asked for (sam3/execution_provider.h) and what the loaded ONNX Runtime has,
// and which of sam3's graph preparations suit them.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sam3/execution_provider.h"

namespace sam3::runtime {

struct ProviderChain {
  // Given to ONNX Runtime in this order; the CPU is implicit after them (empty: the CPU alone).
  std::vector<ExecutionProvider> providers;
  std::string primary() const { return providers.empty() ? "cpu" : providers.front().name; }
  std::vector<std::string> names() const;  // e.g. {"cuda", "cpu"}
};

// Validates, expands `auto`, skips (with one log line) providers this ONNX Runtime lacks or
// cannot start when a later one is usable. Throws sam3::Error: kInvalidArgument for a bad
// list, kRuntime when none of the asked-for providers can be used (naming those it has and how
// to get one). `report`: log the one line saying what runs where (and what was skipped).
ProviderChain resolve_providers(const std::vector<ExecutionProvider>& requested, bool report = true);

// Why the provider cannot start here (its shared library or CUDA's missing, no device): ""
// when it can. Appending a provider loads its library, so this is found without a model.
std::string start_problem(const ExecutionProvider& provider);

// Adds the chain to a session's options. `cache_dir` is the model's cache folder (TensorRT's
// engine cache goes under it unless the caller set trt_engine_cache_path).
void append_providers(Ort::SessionOptions& options, const ProviderChain& chain, const std::filesystem::path& cache_dir);

// Which of sam3's preparations suit the chain's first provider (the one that runs the most).
struct Preparation {
  bool cpu_int8 = true;        // the u8->s8 weight rewrite (for CPU dot-product instructions)
  bool fuse_attention = true;  // com.microsoft MultiHeadAttention (CPU, CUDA and DirectML kernels)
  // ONNX Runtime's optimized graph may be saved and reloaded; compiling providers (TensorRT,
  // OpenVINO, CoreML, DirectML) make nodes that cannot be saved.
  bool save_optimized = true;
  std::string cache_key;  // the provider part of the prepared-file cache key ("" for the CPU)
};
Preparation preparation_for(const ProviderChain& chain);

}  // namespace sam3::runtime
