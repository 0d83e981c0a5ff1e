// Writing new ONNX nodes, attributes and initializers as protobuf fields of a GraphProto, for the
// protobuf-level rewrites (they splice these into the graph's bytes).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sam3::optimize::onnx {

// AttributeProto payloads.
std::string int_attr(std::string_view name, std::int64_t v);
std::string float_attr(std::string_view name, float v);
std::string ints_attr(std::string_view name, const std::vector<std::int64_t>& v);

// A graph's `node` field: one output, named after it (outputs are unique, so are the names).
// `attributes` are AttributeProto payloads.
std::string node(std::string_view op, const std::vector<std::string>& inputs, const std::string& output,
                 const std::vector<std::string>& attributes = {}, std::string_view domain = {});

// A graph's `initializer` fields: int64 [1], float scalar, float [n] of one value.
std::string int64_vector_initializer(const std::string& name, std::int64_t value);
std::string float_initializer(const std::string& name, float value);
std::string float_vector_initializer(const std::string& name, std::int64_t n, float value);

}  // namespace sam3::optimize::onnx
