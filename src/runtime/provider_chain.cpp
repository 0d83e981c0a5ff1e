#include "runtime/provider_chain.h"

#include <algorithm>
#include <memory>

#include "runtime/provider_table.h"
#include "runtime/session.h"
#include "sam3/error.h"
#include "sam3/log.h"

namespace sam3::runtime {
namespace {

namespace fs = std::filesystem;

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

void check(OrtStatus* status) { Ort::ThrowOnError(status); }

// Adds one provider through ONNX Runtime's C API: CUDA and TensorRT through their option
// structs (their libraries are loaded here, so a missing CUDA library fails here), the others
// through the generic call that takes ONNX Runtime's short name.
void append_one(Ort::SessionOptions& session, const ExecutionProvider& p, const fs::path& cache_dir) {
  const OrtApi& api = Ort::GetApi();
  auto options = p.options;
  if (p.name == "tensorrt" && !cache_dir.empty() && !options.contains("trt_engine_cache_path")) {
    // Building an engine takes minutes; kept with the model's other prepared files.
    const fs::path engines = cache_dir / "tensorrt";
    std::error_code ec;
    fs::create_directories(engines, ec);
    if (!ec) {
      options.emplace("trt_engine_cache_enable", "1");
      options.emplace("trt_engine_cache_path", engines.string());
    }
  }
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : options) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  if (p.name == "cuda") {
    OrtCUDAProviderOptionsV2* raw = nullptr;
    check(api.CreateCUDAProviderOptions(&raw));
    std::unique_ptr<OrtCUDAProviderOptionsV2, decltype(api.ReleaseCUDAProviderOptions)> cuda(raw, api.ReleaseCUDAProviderOptions);
    check(api.UpdateCUDAProviderOptions(cuda.get(), keys.data(), values.data(), keys.size()));
    check(api.SessionOptionsAppendExecutionProvider_CUDA_V2(session, cuda.get()));
  } else if (p.name == "tensorrt") {
    OrtTensorRTProviderOptionsV2* raw = nullptr;
    check(api.CreateTensorRTProviderOptions(&raw));
    std::unique_ptr<OrtTensorRTProviderOptionsV2, decltype(api.ReleaseTensorRTProviderOptions)> trt(raw,
                                                                                                    api.ReleaseTensorRTProviderOptions);
    check(api.UpdateTensorRTProviderOptions(trt.get(), keys.data(), values.data(), keys.size()));
    check(api.SessionOptionsAppendExecutionProvider_TensorRT_V2(session, trt.get()));
  } else if (p.name != "cpu") {
    const char* generic = p.name == "openvino" ? "OpenVINO" : p.name == "coreml" ? "CoreML" : "DML";
    check(api.SessionOptionsAppendExecutionProvider(session, generic, keys.data(), values.data(), keys.size()));
  }
}

// ONNX Runtime's reason on one line, without its source location and error-code prefix.
std::string ort_reason(const std::string& what) {
  std::string r = what;
  if (const auto at = r.find("[ONNXRuntimeError]"); at != std::string::npos) {
    std::size_t cut = at;
    for (int i = 0; i < 3 && cut != std::string::npos; ++i) cut = r.find(" : ", cut + 1);
    if (cut != std::string::npos) r = r.substr(cut + 3);
  }
  std::replace(r.begin(), r.end(), '\n', ' ');
  while (!r.empty() && r.back() == ' ') r.pop_back();
  return r;
}

}  // namespace

// Why the provider cannot be used here: "" when it can. Appending loads a provider's shared
// library (CUDA, TensorRT), so a build that lists the provider without shipping its library,
// or a missing CUDA library, fails here rather than in the first session.
std::string start_problem(const ExecutionProvider& p) {
  try {
    env();  // the providers log through ONNX Runtime's default logger, made with the environment
    Ort::SessionOptions scratch;
    append_one(scratch, p, {});
    return {};
  } catch (const Ort::Exception& e) {
    return ort_reason(e.what());
  }
}

namespace {

// One line: which providers cannot be used and why, and how to get one that can.
std::string refusal(const std::vector<std::string>& absent, const std::vector<std::pair<std::string, std::string>>& failed,
                    const std::vector<std::string>& available) {
  std::string what;
  const auto add = [&](const std::string& part) { what += (what.empty() ? "" : "; ") + part; };
  for (const auto& name : absent) {
    add("execution provider '" + name + "' is not in the loaded ONNX Runtime " + Ort::GetVersionString() +
        ", which has: " + joined(available));
  }
  for (const auto& [name, why] : failed) {
    add("execution provider '" + name + "' is listed by the loaded ONNX Runtime " + Ort::GetVersionString() + " but cannot start here (" +
        why + ")");
  }
  const ProviderInfo* first = find_provider(absent.empty() ? failed.front().first : absent.front());
  return what + ". For " + first->title + " use " + first->how_to_get + " (see the README's 'Using a GPU'), or choose the cpu provider";
}

}  // namespace

std::vector<std::string> ProviderChain::names() const {
  std::vector<std::string> out;
  for (const auto& p : providers) out.push_back(p.name);
  out.push_back("cpu");
  return out;
}

ProviderChain resolve_providers(const std::vector<ExecutionProvider>& requested, bool report) {
  validate_execution_providers(requested);
  ProviderChain chain;
  if (requested.empty()) return chain;
  const std::vector<std::string> available = available_execution_providers();
  const auto has = [&](const std::string& name) { return std::find(available.begin(), available.end(), name) != available.end(); };
  const auto in_chain = [&](const std::string& name) {
    return std::any_of(chain.providers.begin(), chain.providers.end(), [&](const auto& p) { return p.name == name; });
  };
  std::vector<std::string> absent, skipped;
  std::vector<std::pair<std::string, std::string>> failed;
  bool cpu_listed = false, auto_listed = false;
  for (const auto& want : requested) {
    if (want.name == "cpu") {
      cpu_listed = true;
      break;
    }
    std::vector<ExecutionProvider> candidates;
    if (want.name == "auto") {
      auto_listed = true;
      for (const auto& info : provider_table()) {
        if (info.name == "cpu" || !has(info.name) || in_chain(info.name)) continue;
        ExecutionProvider p{info.name, {}};
        if (info.takes_device_id && want.options.contains("device_id")) p.options["device_id"] = want.options.at("device_id");
        candidates.push_back(std::move(p));
      }
    } else if (!has(want.name)) {
      absent.push_back(want.name);
      skipped.push_back(want.name + " is not in the loaded ONNX Runtime " + Ort::GetVersionString() + " (it has: " + joined(available) +
                        ")");
    } else if (!in_chain(want.name)) {
      candidates.push_back(want);
    }
    for (auto& p : candidates) {
      if (const std::string why = start_problem(p); !why.empty()) {
        skipped.push_back(p.name + " cannot start here (" + why + ")");
        failed.emplace_back(p.name, why);
        continue;
      }
      chain.providers.push_back(std::move(p));
    }
  }
  if (chain.providers.empty() && !cpu_listed && !auto_listed) throw Error(ErrorCode::kRuntime, refusal(absent, failed, available));
  if (!report) return chain;
  const std::string runs_on = "running on " + joined(chain.names());
  const std::string who = auto_listed ? "provider auto: " : "execution providers: ";
  if (auto_listed && chain.providers.empty() && skipped.empty()) {
    log(LogLevel::kWarning,
        who + "the loaded ONNX Runtime " + Ort::GetVersionString() + " has no accelerator (it has: " + joined(available) + "); " + runs_on);
  } else if (!skipped.empty()) {
    std::string why;
    for (const auto& s : skipped) why += (why.empty() ? "" : "; ") + s;
    log(LogLevel::kWarning, who + why + "; " + runs_on);
  } else {
    log(LogLevel::kInfo, who + runs_on);
  }
  return chain;
}

void append_providers(Ort::SessionOptions& options, const ProviderChain& chain, const fs::path& cache_dir) {
  for (const auto& p : chain.providers) append_one(options, p, cache_dir);
}

Preparation preparation_for(const ProviderChain& chain) {
  Preparation p;
  const std::string primary = chain.primary();
  if (primary == "cpu") return p;
  // The int8 rewrite serves the CPU's u8 x s8 dot-product instructions; GPU MatMulInteger
  // kernels (CUDA: s8 x s8 only) do not use it.
  p.cpu_int8 = false;
  // MultiHeadAttention is a com.microsoft operator: CUDA and DirectML have kernels for it;
  // TensorRT, OpenVINO and CoreML would hand it back to the CPU (they fuse attention themselves).
  p.fuse_attention = primary == "cuda" || primary == "dml";
  p.save_optimized = false;
  for (const auto& name : chain.names()) p.cache_key += (p.cache_key.empty() ? "" : "+") + name;
  return p;
}

}  // namespace sam3::runtime

namespace sam3 {

std::vector<std::string> resolve_execution_providers(const std::vector<ExecutionProvider>& providers) {
  return runtime::resolve_providers(providers, false).names();
}

std::vector<std::string> usable_execution_providers() {
  std::vector<std::string> out;
  for (const auto& name : available_execution_providers()) {
    if (name == "cpu" || runtime::start_problem({name, {}}).empty()) out.push_back(name);
  }
  return out;
}

}  // namespace sam3
