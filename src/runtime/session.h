// One ONNX Runtime session plus the names, element types and shapes of its inputs and
// outputs, read once at load. Run() takes named non-owning inputs and feeds only the inputs
// the session lists (exports prune unused ones).
#pragma once

#include <onnxruntime_cxx_api.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "runtime/model_file_cache.h"
#include "runtime/provider_chain.h"

namespace sam3::runtime {

struct TensorInfo {
  std::string name;
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  std::vector<std::int64_t> shape;  // -1 for dynamic dimensions
};

struct SessionConfig {
  int intra_op_threads = 0;
  // ONNX Runtime's CPU memory arena; kWhenAttentionFused: only when the attention fusion
  // applied to this file (unfused attention would keep gigabytes of scores in the arena).
  enum class Arena { kOn, kOff, kWhenAttentionFused } memory_arena = Arena::kOn;
  bool spin_threads = true;
  bool shared_thread_pool = false;  // the process-wide pools of env(); threads/spin then ignored
  FileCacheOptions cache;           // adjusted to the providers (preparation_for) by Session
  ProviderChain providers;          // empty: the CPU
};

Ort::Env& env();
// The names, element types and shapes of a session's inputs (or outputs).
std::vector<TensorInfo> read_io(const Ort::Session& session, bool inputs);
std::string type_name(ONNXTensorElementDataType type);
std::string shape_string(const std::vector<std::int64_t>& shape);

class Session {
 public:
  Session(const std::filesystem::path& path, const SessionConfig& config);

  const std::filesystem::path& path() const { return path_; }
  const PreparedModelFile& prepared() const { return prepared_; }
  const std::vector<std::string>& providers() const { return providers_; }  // e.g. {"cuda", "cpu"}
  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  const std::vector<TensorInfo>& outputs() const { return outputs_; }
  const TensorInfo* input(const std::string& name) const;
  const TensorInfo* output(const std::string& name) const;
  bool has_output(const std::string& name) const { return output(name) != nullptr; }

  // Runs with every output. `feeds` maps input names to values; every input the session
  // lists must be present (a missing one is a programming error reported as kRuntime).
  std::map<std::string, Ort::Value> run(const std::map<std::string, const OrtValue*>& feeds) const;

 private:
  std::filesystem::path path_;
  PreparedModelFile prepared_;
  Ort::Session session_{nullptr};
  std::vector<std::string> providers_;
  std::vector<TensorInfo> inputs_, outputs_;
};

// Non-owning tensor over caller memory (the memory must outlive the run).
template <typename T>
Ort::Value view(T* data, size_t count, const std::vector<std::int64_t>& shape) {
  static const auto info = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  return Ort::Value::CreateTensor<T>(info, data, count, shape.data(), shape.size());
}
// bool tensors: std::vector<bool> has no data(), so callers pass a byte buffer.
Ort::Value view_bool(std::uint8_t* data, size_t count, const std::vector<std::int64_t>& shape);

std::vector<std::int64_t> shape_of(const Ort::Value& value);
// float <-> float16 copies: fp16 exports take and give half floats; Session::run converts its
// inputs to what the session lists, and results are made float32 for the postprocessing.
Ort::Value convert_float(const OrtValue* value, ONNXTensorElementDataType to);
void outputs_to_float32(std::map<std::string, Ort::Value>& values);
size_t element_size(ONNXTensorElementDataType type);

}  // namespace sam3::runtime
