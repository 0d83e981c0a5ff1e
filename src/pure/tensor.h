// Tensors as the pure core sees them: named, typed, shaped bytes. No ONNX Runtime here: the
// native backends (through runtime::) and the WebAssembly module (through ONNX Runtime Web) move
// these in and out of their sessions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sam3::pure {

// ONNX's TensorProto element types (the same numbers ONNX Runtime and ORT Web use).
enum class DType : int { kFloat = 1, kUint8 = 2, kInt32 = 6, kInt64 = 7, kBool = 9, kFloat16 = 10 };

std::size_t element_size(DType type);
// ONNX's names: "float32", "uint8", "int32", "int64", "bool", "float16" (ORT Web's too).
const char* dtype_name(DType type);
// From the number ONNX gives (kRuntime error for an element type the core does not know).
DType dtype_from_onnx(int onnx_type);

// One input or output of a session, as the file declares it (-1 for a dynamic dimension).
struct TensorSpec {
  std::string name;
  int type = 0;  // ONNX element type number (may be one the core does not handle)
  std::vector<std::int64_t> shape;
};

// One file's inputs and outputs; `file` names it in errors.
struct PartSpec {
  std::string file;
  std::vector<TensorSpec> inputs, outputs;
  const TensorSpec* input(const std::string& name) const;
  const TensorSpec* output(const std::string& name) const;
};

// An input the core built: owns its bytes.
struct Tensor {
  std::string name;
  DType type = DType::kFloat;
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;
};

// An output a session gave: borrowed bytes.
struct TensorView {
  DType type = DType::kFloat;
  std::vector<std::int64_t> shape;
  const void* data = nullptr;
  std::size_t count = 0;  // elements
};
using TensorViews = std::map<std::string, TensorView>;

std::string shape_string(const std::vector<std::int64_t>& shape);

// Tensors in the element type a spec asks for: integers as int32 or int64, floats as float32
// or float16 (converted here, so a float16 export's inputs come out right on every runtime).
Tensor int_tensor(const std::string& name, int onnx_type, std::vector<std::int64_t> shape, const std::vector<std::int64_t>& values);
Tensor float_tensor(const std::string& name, int onnx_type, std::vector<std::int64_t> shape, const std::vector<float>& values);
Tensor bool_tensor(const std::string& name, std::vector<std::int64_t> shape, const std::vector<std::uint8_t>& values);
Tensor uint8_tensor(const std::string& name, std::vector<std::int64_t> shape, std::vector<std::uint8_t> values);

float half_to_float(std::uint16_t h);
std::uint16_t float_to_half(float f);
// A float32 copy of a float32 or float16 view (kModelMismatch for another type).
std::vector<float> to_float32(const TensorView& view, const std::string& name);

}  // namespace sam3::pure
