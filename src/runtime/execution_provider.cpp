#include "sam3/execution_provider.h"

#include <onnxruntime_cxx_api.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "runtime/provider_table.h"
#include "sam3/error.h"

namespace sam3 {
namespace runtime {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

namespace {

const std::string kGpuBuild =
    "a GPU build of ONNX Runtime: Microsoft's release tarball onnxruntime-linux-x64-gpu (or the libraries of the "
    "onnxruntime-gpu Python wheel), built into sam3 with -DSAM3_ORT_ROOT=DIR (SAM3_ORT_ROOT=DIR scripts/build.sh), "
    "or scripts/setup.sh --gpu; it needs NVIDIA's CUDA and cuDNN libraries";

}  // namespace

const std::vector<ProviderInfo>& provider_table() {
  static const std::vector<ProviderInfo> table = {
      {"tensorrt",
       "TensorrtExecutionProvider",
       "TensorRT",
       {"device_id",
        "trt_max_workspace_size",
        "trt_fp16_enable",
        "trt_bf16_enable",
        "trt_int8_enable",
        "trt_engine_cache_enable",
        "trt_engine_cache_path",
        "trt_timing_cache_enable",
        "trt_timing_cache_path",
        "trt_builder_optimization_level",
        "trt_max_partition_iterations",
        "trt_min_subgraph_size",
        "trt_layer_norm_fp32_fallback",
        "trt_force_sequential_engine_build",
        "trt_detailed_build_log",
        "trt_cuda_graph_enable",
        "trt_dla_enable",
        "trt_dla_core",
        "trt_auxiliary_streams",
        "trt_sparsity_enable"},
       true,
       kGpuBuild + " plus NVIDIA's TensorRT libraries"},
      {"cuda",
       "CUDAExecutionProvider",
       "CUDA",
       {"device_id", "gpu_mem_limit", "arena_extend_strategy", "cudnn_conv_algo_search", "cudnn_conv_use_max_workspace",
        "cudnn_conv1d_pad_to_nc1d", "do_copy_in_default_stream", "enable_cuda_graph", "use_tf32", "prefer_nhwc", "tunable_op_enable",
        "tunable_op_tuning_enable", "use_ep_level_unified_stream"},
       true,
       kGpuBuild},
      {"coreml",
       "CoreMLExecutionProvider",
       "CoreML",
       {"ModelFormat", "MLComputeUnits", "RequireStaticInputShapes", "EnableOnSubgraphs", "ModelCacheDirectory", "SpecializationStrategy",
        "AllowLowPrecisionAccumulationOnGPU", "ProfileComputePlan"},
       false,
       "Microsoft's macOS build of ONNX Runtime (the onnxruntime-osx release, Homebrew's onnxruntime); CoreML "
       "runs on Apple devices only"},
      {"dml",
       "DmlExecutionProvider",
       "DirectML",
       {"device_id", "performance_preference", "device_filter", "disable_metacommands", "enable_graph_capture"},
       true,
       "Microsoft's DirectML build of ONNX Runtime (Microsoft.ML.OnnxRuntime.DirectML); DirectML runs on Windows "
       "only"},
      {"openvino",
       "OpenVINOExecutionProvider",
       "OpenVINO",
       {"device_type", "precision", "num_of_threads", "num_streams", "cache_dir", "enable_qdq_optimizer", "disable_dynamic_shapes",
        "load_config", "model_priority", "enable_opencl_throttling"},
       false,
       "an ONNX Runtime built with OpenVINO (Intel's onnxruntime-openvino builds) and Intel's OpenVINO runtime"},
      {"cpu", "CPUExecutionProvider", "CPU", {}, false, "any ONNX Runtime"},
  };
  return table;
}

const ProviderInfo* find_provider(std::string_view name) {
  const std::string n = lower(name);
  for (const auto& p : provider_table()) {
    if (n == p.name || n == lower(p.ort_name)) return &p;
  }
  return nullptr;
}

}  // namespace runtime

namespace {

std::string joined(const std::vector<std::string>& items, const char* separator = ", ") {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : separator) + s;
  return out;
}

std::string trimmed(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(" \t") - b + 1));
}

bool is_device_number(const std::string& s) {
  return !s.empty() && s.size() <= 4 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

const std::vector<std::string>& execution_provider_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& p : runtime::provider_table()) out.push_back(p.name);
    out.push_back("auto");
    return out;
  }();
  return names;
}

ExecutionProvider parse_execution_provider(std::string_view spec) {
  ExecutionProvider p;
  std::string_view rest = spec;
  const auto colon = rest.find(':');
  p.name = trimmed(rest.substr(0, colon));
  if (p.name.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                "execution provider '" + std::string(spec) + "' has no name; use one of: " + joined(execution_provider_names()));
  }
  if (const auto* info = runtime::find_provider(p.name)) p.name = info->name;  // CUDA, CUDAExecutionProvider -> cuda
  if (runtime::lower(p.name) == "auto") p.name = "auto";
  rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  while (colon != std::string_view::npos) {
    const auto next = rest.find(':');
    const std::string pair = trimmed(rest.substr(0, next));
    const auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw Error(ErrorCode::kInvalidArgument,
                  "execution provider '" + std::string(spec) + "': '" + pair + "' is not key=value; write e.g. cuda:device_id=1");
    }
    p.options[trimmed(pair.substr(0, eq))] = trimmed(pair.substr(eq + 1));
    if (next == std::string_view::npos) break;
    rest = rest.substr(next + 1);
  }
  validate_execution_providers({p});
  return p;
}

std::vector<ExecutionProvider> parse_execution_providers(const std::vector<std::string>& specs) {
  std::vector<ExecutionProvider> out;
  for (const auto& spec : specs) {
    std::size_t start = 0;
    while (true) {
      const auto comma = spec.find(',', start);
      out.push_back(parse_execution_provider(std::string_view(spec).substr(start, comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  validate_execution_providers(out);
  return out;
}

void validate_execution_providers(const std::vector<ExecutionProvider>& providers) {
  std::set<std::string> seen;
  bool after_cpu = false;
  for (const auto& p : providers) {
    const runtime::ProviderInfo* info = p.name == "auto" ? nullptr : runtime::find_provider(p.name);
    if (p.name != "auto" && (!info || info->name != p.name)) {
      throw Error(ErrorCode::kInvalidArgument,
                  "unknown execution provider '" + p.name + "'; use one of: " + joined(execution_provider_names()));
    }
    if (after_cpu) {
      throw Error(ErrorCode::kInvalidArgument, "cpu runs every operator, so '" + p.name + "' after it would never be used; put cpu last");
    }
    if (!seen.insert(p.name).second) throw Error(ErrorCode::kInvalidArgument, "execution provider '" + p.name + "' is listed twice");
    after_cpu = p.name == "cpu";
    const std::vector<std::string> keys = info ? info->keys : std::vector<std::string>{"device_id"};
    for (const auto& [key, value] : p.options) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
        throw Error(ErrorCode::kInvalidArgument, keys.empty()
                                                     ? p.name + " takes no options, got '" + key + "'"
                                                     : p.name + " does not take the option '" + key + "'; it takes: " + joined(keys));
      }
      if (value.empty()) throw Error(ErrorCode::kInvalidArgument, p.name + ": the option '" + key + "' has no value");
      if (key == "device_id" && !is_device_number(value)) {
        throw Error(ErrorCode::kInvalidArgument,
                    p.name + ": device_id must be a device number 0 or more (0 is the first GPU), got '" + value + "'");
      }
    }
  }
}

std::string to_string(const ExecutionProvider& provider) {
  std::string out = provider.name;
  for (const auto& [key, value] : provider.options) out += ":" + key + "=" + value;
  return out;
}

std::vector<std::string> available_execution_providers() {
  const std::vector<std::string> ort = Ort::GetAvailableProviders();
  std::vector<std::string> out;
  for (const auto& p : runtime::provider_table()) {
    if (std::find(ort.begin(), ort.end(), p.ort_name) != ort.end() || p.name == "cpu") out.push_back(p.name);
  }
  return out;
}

}  // namespace sam3
