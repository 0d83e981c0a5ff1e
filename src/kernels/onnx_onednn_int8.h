// Hands MatMulInteger nodes to oneDNN (kernels/onednn_int8.h): the nodes whose weights are a
// constant int8 matrix (after the int8 weight rewrite) with a constant zero point, and whose
// activations come from DynamicQuantizeLinear (uint8, scalar zero point), move to the custom
// domain; inputs, outputs and the results are the same. Works on the serialized protobuf.
//
// Products with fewer than kOneDnnInt8MinWeights weights stay with ONNX Runtime: there it
// fuses quantization, product and scaling into one DynamicQuantizeMatMul, which beats oneDNN's
// product plus the separate passes on SAM3's width-256 decoder products (docs/performance.md).
#pragma once

#include <cstdint>
#include <string>

namespace sam3::kernels {

inline constexpr std::int64_t kOneDnnInt8MinWeights = 1024 * 1024;  // K * N

struct OneDnnInt8Stats {
  int nodes = 0;  // MatMulInteger nodes moved to oneDNN
};

// Returns the rewritten model bytes (the input unchanged when nothing matched). Throws
// sam3::Error(kModelMismatch) on a malformed file.
std::string move_matmulinteger_to_onednn(const std::string& model_bytes, OneDnnInt8Stats* stats,
                                         std::int64_t min_weights = kOneDnnInt8MinWeights);

}  // namespace sam3::kernels
