// Hands float work to oneDNN's bf16 kernels (kernels/onednn_bf16.h), for ModelOptions'
// precision "fast": the single-head com.microsoft MultiHeadAttention that the attention fusion
// (onnx_attention.h) writes, and float MatMuls whose weights are a constant matrix of at least
// kBf16MinWeights elements (smaller products gain nothing from bf16 and stay with ONNX Runtime).
// The nodes keep their op type, inputs and outputs and move to the bf16 domain.
#pragma once

#include <cstdint>
#include <string>

namespace sam3::kernels {

inline constexpr std::int64_t kBf16MinWeights = 256 * 1024;  // K * N: 1 MB of float weights

struct OneDnnBf16Stats {
  int attention = 0;  // MultiHeadAttention nodes moved
  int matmuls = 0;    // MatMul nodes moved
};

// Returns the rewritten model bytes (the input unchanged when nothing matched). Throws
// sam3::Error(kModelMismatch) on a malformed file.
std::string move_float_work_to_onednn_bf16(const std::string& model_bytes, OneDnnBf16Stats* stats);

}  // namespace sam3::kernels
