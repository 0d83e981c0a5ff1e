#include "runtime/session.h"

#include <pthread.h>

#include <cstdlib>
#include <exception>
#include <mutex>
#include <fstream>
#include <sstream>

#include "kernels/onednn_bf16.h"
#include "kernels/onednn_int8.h"
#include "runtime/run_stop.h"
#include "sam3/error.h"
#include "sam3/log.h"

namespace sam3::runtime {

std::vector<TensorInfo> read_io(const Ort::Session& s, bool inputs) {
  Ort::AllocatorWithDefaultOptions alloc;
  std::vector<TensorInfo> out;
  const size_t n = inputs ? s.GetInputCount() : s.GetOutputCount();
  for (size_t i = 0; i < n; ++i) {
    TensorInfo t;
    t.name = (inputs ? s.GetInputNameAllocated(i, alloc) : s.GetOutputNameAllocated(i, alloc)).get();
    const Ort::TypeInfo type = inputs ? s.GetInputTypeInfo(i) : s.GetOutputTypeInfo(i);
    if (type.GetONNXType() == ONNX_TYPE_TENSOR) {
      const auto info = type.GetTensorTypeAndShapeInfo();
      t.type = info.GetElementType();
      t.shape = info.GetShape();
    }
    out.push_back(std::move(t));
  }
  return out;
}

namespace {

// Creating ONNX Runtime's environment parses /proc/self/cmdline with a recursive regular
// expression (its telemetry's app id), about 300 bytes of stack per character: a command line
// of 30 KB overflows an 8 MB stack. So the environment is made on a thread whose stack grows
// with the command line (reserved address space; only the pages used are touched).
std::size_t command_line_bytes() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::size_t n = 0;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) n += static_cast<std::size_t>(in.gcount());
  return n;
}

Ort::Env* create_env() {
  // ONNX Runtime's official Linux builds (1.30, the npm one sam3's set-up fetches) carry
  // Microsoft's 1DS telemetry, which at the environment's creation writes $TMPDIR/mat-debug-<pid>.log
  // and a device id and event database under ~/.cache/Microsoft. A library should not do that
  // behind its user's back: off unless the user set ORT_DISABLE_TELEMETRY (0 turns it back on).
  setenv("ORT_DISABLE_TELEMETRY", "1", /*overwrite=*/0);
  // With process-wide thread pools (ONNX Runtime's defaults: one intra-op thread per physical
  // core, spinning) for sessions that share them; the others keep their own.
  return new Ort::Env(Ort::ThreadingOptions{}, ORT_LOGGING_LEVEL_ERROR, "sam3cpp");
}

Ort::Env* create_env_on_large_stack() {
  struct Job {
    Ort::Env* env = nullptr;
    std::exception_ptr error;
  } job;
  const std::size_t stack = (std::size_t{16} << 20) + 1024 * command_line_bytes();
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack);
  pthread_t thread;
  const auto run = [](void* arg) -> void* {
    auto* j = static_cast<Job*>(arg);
    try {
      j->env = create_env();
    } catch (...) {
      j->error = std::current_exception();
    }
    return nullptr;
  };
  const int rc = pthread_create(&thread, &attr, run, &job);
  pthread_attr_destroy(&attr);
  if (rc != 0) return create_env();  // no thread: the default stack serves short command lines
  pthread_join(thread, nullptr);
  if (job.error) std::rethrow_exception(job.error);
  return job.env;
}

}  // namespace

Ort::Env& env() {
  static Ort::Env* instance = create_env_on_large_stack();  // never freed: sessions may outlive statics
  return *instance;
}

std::string type_name(ONNXTensorElementDataType type) {
  switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
      return "float32";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8:
      return "uint8";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8:
      return "int8";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32:
      return "int32";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64:
      return "int64";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL:
      return "bool";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
      return "float16";
    default:
      return "type#" + std::to_string(static_cast<int>(type));
  }
}

std::string shape_string(const std::vector<std::int64_t>& shape) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s << ",";
    if (shape[i] < 0)
      s << "?";
    else
      s << shape[i];
  }
  s << "]";
  return s.str();
}

namespace {

Ort::Session create_session(const PreparedModelFile& p, const SessionConfig& config, const std::filesystem::path& model) {
  Ort::SessionOptions options;
  if (!config.providers.providers.empty()) {
    append_providers(options, config.providers, config.cache.enabled ? cache_folder(model) : std::filesystem::path());
  }
  // A saved optimized graph is already fused for this host; optimizing again is wasted time.
  options.SetGraphOptimizationLevel(p.pre_optimized ? GraphOptimizationLevel::ORT_DISABLE_ALL : GraphOptimizationLevel::ORT_ENABLE_ALL);
  if (!p.save_optimized.empty()) options.SetOptimizedModelFilePath(p.save_optimized.c_str());
  if (config.shared_thread_pool) {
    options.DisablePerSessionThreads();
  } else {
    if (config.intra_op_threads > 0) options.SetIntraOpNumThreads(config.intra_op_threads);
    if (!config.spin_threads) options.AddConfigEntry("session.intra_op.allow_spinning", "0");
  }
  // Always there when available: a cached graph may hold oneDNN nodes whatever this load did.
  kernels::register_onednn_ops(options, config.shared_thread_pool ? 0 : config.intra_op_threads);
  kernels::register_onednn_bf16_ops(options, config.shared_thread_pool ? 0 : config.intra_op_threads);
  const bool arena = config.memory_arena == SessionConfig::Arena::kOn ||
                     (config.memory_arena == SessionConfig::Arena::kWhenAttentionFused && p.fused_attention > 0);
  if (!arena) options.DisableCpuMemArena();
  if (!p.graph_in_memory.empty()) {
    const std::string folder = p.load_path.parent_path().empty() ? "." : p.load_path.parent_path().string();
    options.AddConfigEntry("session.model_external_initializers_file_folder_path", folder.c_str());
    return Ort::Session(env(), p.graph_in_memory.data(), p.graph_in_memory.size(), options);
  }
  return Ort::Session(env(), p.load_path.c_str(), options);
}

}  // namespace

Session::Session(const std::filesystem::path& path, const SessionConfig& config) : path_(path) {
  static std::once_flag said;  // one line per process: which kernels run the int8 products and bf16 work
  std::call_once(said, [] {
    log(LogLevel::kInfo,
        "int8 kernels: " + kernels::int8_kernels_description() + "; bf16 kernels (precision fast): " + kernels::bf16_kernels_description());
  });
  if (!std::filesystem::is_regular_file(path)) {
    throw Error(ErrorCode::kModelNotFound, path.string() + ": no such model file");
  }
  providers_ = config.providers.names();
  FileCacheOptions cache = config.cache;
  const Preparation preparation = preparation_for(config.providers);
  cache.cpu_int8 = preparation.cpu_int8;
  cache.fuse_attention = cache.fuse_attention && preparation.fuse_attention;
  cache.save_optimized = preparation.save_optimized;
  cache.provider_key = preparation.cache_key;
  try {
    prepared_ = prepare_model_file(path, cache);
    try {
      session_ = create_session(prepared_, config, path);
    } catch (const Ort::Exception& e) {
      if (prepared_.load_path == path && prepared_.graph_in_memory.empty()) {
        discard_model_file(prepared_);
        throw;
      }
      // A damaged cache entry, or a rewrite this runtime rejects: fall back to the original file.
      const std::string prepared = prepared_.graph_in_memory.empty() ? "the prepared file " + prepared_.load_path.string()
                                                                     : std::string("the attention-fused graph");
      log(LogLevel::kWarning,
          path.filename().string() + ": " + prepared + " did not load (" + e.what() + "); loading the original instead");
      discard_model_file(prepared_);
      prepared_ = PreparedModelFile{};
      prepared_.load_path = path;
      session_ = create_session(prepared_, config, path);
    }
    finish_model_file(prepared_, path);
    prepared_.graph_in_memory = std::string();  // ONNX Runtime has its own copy
  } catch (const Ort::Exception& e) {
    if (!config.providers.providers.empty()) {  // more likely the provider (GPU memory, drivers) than the file
      throw Error(ErrorCode::kRuntime, path.string() + ": ONNX Runtime could not create a session on " + config.providers.primary() + " (" +
                                           e.what() + "); check the device and its libraries, or choose the cpu provider");
    }
    throw Error(ErrorCode::kModelMismatch, path.string() + ": ONNX Runtime cannot load this file (" + e.what() +
                                               "); the file is damaged or not an ONNX model - download it again");
  }
  inputs_ = read_io(session_, true);
  outputs_ = read_io(session_, false);
}

const TensorInfo* Session::input(const std::string& name) const {
  for (const auto& t : inputs_)
    if (t.name == name) return &t;
  return nullptr;
}

const TensorInfo* Session::output(const std::string& name) const {
  for (const auto& t : outputs_)
    if (t.name == name) return &t;
  return nullptr;
}

Ort::Value convert_float(const OrtValue* value, ONNXTensorElementDataType to) {
  const Ort::ConstValue v(value);
  const auto info = v.GetTensorTypeAndShapeInfo();
  const size_t n = info.GetElementCount();
  Ort::AllocatorWithDefaultOptions allocator;
  const auto shape = info.GetShape();
  if (to == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16) {
    auto out = Ort::Value::CreateTensor<Ort::Float16_t>(allocator, shape.data(), shape.size());
    const float* src = v.GetTensorData<float>();
    Ort::Float16_t* dst = out.GetTensorMutableData<Ort::Float16_t>();
    for (size_t i = 0; i < n; ++i) dst[i] = Ort::Float16_t(src[i]);
    return out;
  }
  auto out = Ort::Value::CreateTensor<float>(allocator, shape.data(), shape.size());
  const Ort::Float16_t* src = v.GetTensorData<Ort::Float16_t>();
  float* dst = out.GetTensorMutableData<float>();
  for (size_t i = 0; i < n; ++i) dst[i] = src[i].ToFloat();
  return out;
}

bool is_float_pair(ONNXTensorElementDataType a, ONNXTensorElementDataType b) {
  const auto f = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, h = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
  return (a == f && b == h) || (a == h && b == f);
}

void outputs_to_float32(std::map<std::string, Ort::Value>& values) {
  for (auto& [name, value] : values) {
    if (value.IsTensor() && value.GetTensorTypeAndShapeInfo().GetElementType() == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16) {
      value = convert_float(value, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT);
    }
  }
}

std::map<std::string, Ort::Value> Session::run(const std::map<std::string, const OrtValue*>& feeds) const {
  std::vector<const char*> in_names;
  std::vector<const OrtValue*> in_values;
  std::vector<Ort::Value> converted;  // float <-> float16 where this session wants the other
  converted.reserve(inputs_.size());
  for (const auto& t : inputs_) {
    auto it = feeds.find(t.name);
    if (it == feeds.end()) {
      throw Error(ErrorCode::kRuntime, path_.string() + ": no value for input '" + t.name + "'");
    }
    in_names.push_back(t.name.c_str());
    const auto given = Ort::ConstValue(it->second).GetTensorTypeAndShapeInfo().GetElementType();
    if (is_float_pair(given, t.type)) {
      converted.push_back(convert_float(it->second, t.type));
      in_values.push_back(converted.back());
    } else {
      in_values.push_back(it->second);
    }
  }
  std::vector<const char*> out_names;
  for (const auto& t : outputs_) out_names.push_back(t.name.c_str());
  std::vector<OrtValue*> out_values(out_names.size(), nullptr);
  // The current thread's stop token (Model sets it around each call): a stopped one fails at
  // once, and one stopped during the run terminates it between nodes.
  const StopToken& stop = current_stop_token();
  const auto cancelled = [&] { return Error(ErrorCode::kCancelled, path_.filename().string() + ": stopped before its run finished"); };
  if (stop.stop_requested()) throw cancelled();
  OrtStatus* status = nullptr;
  if (stop.stoppable()) {
    Ort::RunOptions options;
    const WatchedRun watched(stop, options);
    status = Ort::GetApi().Run(session_, options, in_names.data(), in_values.data(), in_values.size(), out_names.data(), out_names.size(),
                               out_values.data());
  } else {
    status = Ort::GetApi().Run(session_, nullptr, in_names.data(), in_values.data(), in_values.size(), out_names.data(), out_names.size(),
                               out_values.data());
  }
  std::map<std::string, Ort::Value> out;
  for (size_t i = 0; i < out_values.size(); ++i) {
    if (out_values[i]) out.emplace(outputs_[i].name, Ort::Value(out_values[i]));
  }
  if (status) {
    const std::string message = Ort::GetApi().GetErrorMessage(status);
    Ort::GetApi().ReleaseStatus(status);
    if (stop.stop_requested()) throw cancelled();
    throw Error(ErrorCode::kRuntime, path_.filename().string() + " failed to run: " + message);
  }
  return out;
}

Ort::Value view_bool(std::uint8_t* data, size_t count, const std::vector<std::int64_t>& shape) {
  static const auto info = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  return Ort::Value::CreateTensor(info, data, count, shape.data(), shape.size(), ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL);
}

std::vector<std::int64_t> shape_of(const Ort::Value& value) { return value.GetTensorTypeAndShapeInfo().GetShape(); }

size_t element_size(ONNXTensorElementDataType type) {
  switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL:
      return 1;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
      return 2;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
      return 8;
    default:
      return 4;
  }
}

}  // namespace sam3::runtime
