#include "model/ort_tensors.h"

#include <cstring>

namespace sam3::detail {

void Feeds::add(pure::Tensor& t) {
  static const auto info = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  static std::uint8_t none = 0;  // an empty tensor (SAM 3.1's zero boxes) still needs an address
  views_.push_back(Ort::Value::CreateTensor(info, t.bytes.empty() ? &none : t.bytes.data(), t.bytes.size(), t.shape.data(), t.shape.size(),
                                            static_cast<ONNXTensorElementDataType>(t.type)));
  feeds_[t.name] = views_.back();
}

Ort::Value owned_value(const pure::Tensor& t) {
  Ort::AllocatorWithDefaultOptions allocator;
  auto value = Ort::Value::CreateTensor(allocator, t.shape.data(), t.shape.size(), static_cast<ONNXTensorElementDataType>(t.type));
  if (!t.bytes.empty()) std::memcpy(value.GetTensorMutableRawData(), t.bytes.data(), t.bytes.size());
  return value;
}

pure::TensorView view_of(const Ort::Value& value) {
  const auto info = value.GetTensorTypeAndShapeInfo();
  pure::TensorView v;
  v.type = pure::dtype_from_onnx(static_cast<int>(info.GetElementType()));
  v.shape = info.GetShape();
  v.data = value.GetTensorRawData();
  v.count = info.GetElementCount();
  return v;
}

pure::TensorViews views_of(const std::map<std::string, Ort::Value>& values) {
  pure::TensorViews out;
  for (const auto& [name, value] : values) {
    const int type = static_cast<int>(value.GetTensorTypeAndShapeInfo().GetElementType());
    if (type == 1 || type == 2 || type == 6 || type == 7 || type == 9 || type == 10) out.emplace(name, view_of(value));
  }
  return out;
}

}  // namespace sam3::detail
