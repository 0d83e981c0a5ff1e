#include "pure/tensor.h"

#include <cstring>

#include "sam3/error.h"

namespace sam3::pure {

std::size_t element_size(DType type) {
  switch (type) {
    case DType::kFloat:
    case DType::kInt32:
      return 4;
    case DType::kInt64:
      return 8;
    case DType::kFloat16:
      return 2;
    case DType::kUint8:
    case DType::kBool:
      return 1;
  }
  return 1;
}

const char* dtype_name(DType type) {
  switch (type) {
    case DType::kFloat:
      return "float32";
    case DType::kUint8:
      return "uint8";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kBool:
      return "bool";
    case DType::kFloat16:
      return "float16";
  }
  return "unknown";
}

DType dtype_from_onnx(int t) {
  switch (t) {
    case 1:
      return DType::kFloat;
    case 2:
      return DType::kUint8;
    case 6:
      return DType::kInt32;
    case 7:
      return DType::kInt64;
    case 9:
      return DType::kBool;
    case 10:
      return DType::kFloat16;
    default:
      throw Error(ErrorCode::kRuntime, "tensor element type " + std::to_string(t) + " is not one SAM3 uses");
  }
}

const TensorSpec* PartSpec::input(const std::string& name) const {
  for (const auto& t : inputs)
    if (t.name == name) return &t;
  return nullptr;
}

const TensorSpec* PartSpec::output(const std::string& name) const {
  for (const auto& t : outputs)
    if (t.name == name) return &t;
  return nullptr;
}

std::string shape_string(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  return s + "]";
}

namespace {

template <typename T>
std::vector<std::uint8_t> raw_bytes(const std::vector<T>& values) {
  std::vector<std::uint8_t> out(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

}  // namespace

Tensor int_tensor(const std::string& name, int onnx_type, std::vector<std::int64_t> shape, const std::vector<std::int64_t>& values) {
  if (onnx_type == static_cast<int>(DType::kInt32)) {
    return {name, DType::kInt32, std::move(shape), raw_bytes(std::vector<std::int32_t>(values.begin(), values.end()))};
  }
  return {name, DType::kInt64, std::move(shape), raw_bytes(values)};
}

Tensor float_tensor(const std::string& name, int onnx_type, std::vector<std::int64_t> shape, const std::vector<float>& values) {
  if (onnx_type == static_cast<int>(DType::kFloat16)) {
    std::vector<std::uint16_t> half(values.size());
    for (size_t i = 0; i < values.size(); ++i) half[i] = float_to_half(values[i]);
    return {name, DType::kFloat16, std::move(shape), raw_bytes(half)};
  }
  return {name, DType::kFloat, std::move(shape), raw_bytes(values)};
}

Tensor bool_tensor(const std::string& name, std::vector<std::int64_t> shape, const std::vector<std::uint8_t>& values) {
  return {name, DType::kBool, std::move(shape), values};
}

Tensor uint8_tensor(const std::string& name, std::vector<std::int64_t> shape, std::vector<std::uint8_t> values) {
  return {name, DType::kUint8, std::move(shape), std::move(values)};
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
  std::uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FF, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      exp = 127 - 15 + 1;
      while ((mant & 0x400) == 0) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3FF) << 13);
    }
  } else if (exp == 0x1F) {
    bits = sign | 0x7F800000 | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::uint16_t float_to_half(float f) {  // round to nearest even
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000);
  const std::uint32_t abs = x & 0x7FFFFFFF;
  if (abs >= 0x7F800000) return sign | static_cast<std::uint16_t>(abs > 0x7F800000 ? 0x7E00 : 0x7C00);
  if (abs >= 0x477FF000) return sign | 0x7C00;  // rounds past the largest half: infinity
  if (abs < 0x38800000) {                       // below the smallest normal half
    if (abs < 0x33000000) return sign;
    const std::uint32_t shift = 126 - (abs >> 23);
    const std::uint32_t mant = (abs & 0x7FFFFF) | 0x800000;
    std::uint32_t half = mant >> shift;
    const std::uint32_t rest = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1))) ++half;
    return sign | static_cast<std::uint16_t>(half);
  }
  std::uint32_t half = ((abs >> 13) - (112u << 10));
  const std::uint32_t rest = abs & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;
  return sign | static_cast<std::uint16_t>(half);
}

std::vector<float> to_float32(const TensorView& view, const std::string& name) {
  std::vector<float> out(view.count);
  if (view.type == DType::kFloat) {
    if (view.count) std::memcpy(out.data(), view.data, view.count * 4);
  } else if (view.type == DType::kFloat16) {
    const auto* h = static_cast<const std::uint16_t*>(view.data);
    for (size_t i = 0; i < view.count; ++i) out[i] = half_to_float(h[i]);
  } else {
    throw Error(ErrorCode::kModelMismatch,
                "decoder output '" + name + "' is " + dtype_name(view.type) + ", expected float32 or float16; is this a SAM3 decoder?");
  }
  return out;
}

}  // namespace sam3::pure
