#include "optimize/onnx_build.h"

#include <cstring>

#include "optimize/onnx_fields.h"
#include "optimize/protobuf_wire.h"

namespace sam3::optimize::onnx {
namespace {

std::uint32_t bits(float v) {
  std::uint32_t u;
  std::memcpy(&u, &v, sizeof u);  // (Emscripten's libc++ has no std::bit_cast)
  return u;
}

void append_le32(std::string& raw, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) raw.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

std::string initializer_field(const std::string& tensor) {
  std::string field;
  wire::write_len(field, kGraphInitializer, tensor);
  return field;
}

}  // namespace

std::string int_attr(std::string_view name, std::int64_t v) {
  std::string a;
  wire::write_len(a, kAttrName, name);
  wire::write_varint_field(a, kAttrI, static_cast<std::uint64_t>(v));
  wire::write_varint_field(a, kAttrType, kAttrTypeInt);
  return a;
}

std::string float_attr(std::string_view name, float v) {
  std::string a;
  wire::write_len(a, kAttrName, name);
  wire::write_fixed32_field(a, kAttrF, bits(v));
  wire::write_varint_field(a, kAttrType, kAttrTypeFloat);
  return a;
}

std::string ints_attr(std::string_view name, const std::vector<std::int64_t>& v) {
  std::string a, packed;
  wire::write_len(a, kAttrName, name);
  for (auto x : v) wire::write_varint(packed, static_cast<std::uint64_t>(x));
  wire::write_len(a, kAttrInts, packed);
  wire::write_varint_field(a, kAttrType, kAttrTypeInts);
  return a;
}

std::string node(std::string_view op, const std::vector<std::string>& inputs, const std::string& output,
                 const std::vector<std::string>& attributes, std::string_view domain) {
  std::string n;
  for (const auto& i : inputs) wire::write_len(n, kNodeInput, i);
  wire::write_len(n, kNodeOutput, output);
  wire::write_len(n, kNodeName, output);
  wire::write_len(n, kNodeOpType, op);
  for (const auto& a : attributes) wire::write_len(n, kNodeAttribute, a);
  if (!domain.empty()) wire::write_len(n, kNodeDomain, domain);
  std::string field;
  wire::write_len(field, kGraphNode, n);
  return field;
}

std::string int64_vector_initializer(const std::string& name, std::int64_t value) {
  std::string t;
  wire::write_varint_field(t, kTensorDims, 1);
  wire::write_varint_field(t, kTensorDataType, kInt64);
  wire::write_len(t, kTensorName, name);
  std::string raw;
  const auto u = static_cast<std::uint64_t>(value);
  append_le32(raw, static_cast<std::uint32_t>(u));
  append_le32(raw, static_cast<std::uint32_t>(u >> 32));
  wire::write_len(t, kTensorRawData, raw);
  return initializer_field(t);
}

std::string float_initializer(const std::string& name, float value) {
  std::string t;  // no dims: a scalar
  wire::write_varint_field(t, kTensorDataType, kFloat);
  wire::write_len(t, kTensorName, name);
  std::string raw;
  append_le32(raw, bits(value));
  wire::write_len(t, kTensorRawData, raw);
  return initializer_field(t);
}

std::string float_vector_initializer(const std::string& name, std::int64_t n, float value) {
  std::string t;
  wire::write_varint_field(t, kTensorDims, static_cast<std::uint64_t>(n));
  wire::write_varint_field(t, kTensorDataType, kFloat);
  wire::write_len(t, kTensorName, name);
  std::string raw;
  for (std::int64_t i = 0; i < n; ++i) append_le32(raw, bits(value));
  wire::write_len(t, kTensorRawData, raw);
  return initializer_field(t);
}

}  // namespace sam3::optimize::onnx
