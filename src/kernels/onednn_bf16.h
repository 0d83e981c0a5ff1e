// oneDNN's bf16 kernels for float work, run by ONNX Runtime as custom operators in the domain
// kOneDnnBf16Domain (ModelOptions' precision "fast"; the prepare step moves the nodes, see
// optimize/onnx_onednn_bf16.h). Tensors stay float outside; inside, the operands are rounded
// to bf16 (8 significant bits) and the products accumulated in float:
//  - MultiHeadAttention (com.microsoft's inputs and attributes, one head, no mask): Q, K and V
//    [batch, tokens, width]; the scores Q K^T * scale in float, their softmax in float, then
//    rounded to bf16 for the product with V. Queries go in blocks, so the score matrix is
//    never whole (at most kScoreElements floats).
//  - MatMul with constant float weights [K, N]: reordered to bf16 once, at session creation.
// Used only where oneDNN has a native bf16 kernel for the CPU (AVX512-BF16 or AMX); elsewhere
// the nodes are not moved. Builds without oneDNN have the same functions (available() false).
#pragma once

#include <onnxruntime_cxx_api.h>

#include <cstdint>
#include <string>

namespace sam3::kernels {

inline constexpr const char* kOneDnnBf16Domain = "ai.sam3.onednn.bf16";
inline constexpr std::int64_t kScoreElements = 64 * 1024;  // one block of attention scores: 256 KB, in a core's cache

// Whether this build has oneDNN and oneDNN has a native bf16 product kernel on this CPU.
bool onednn_bf16_available();
// What would run the bf16 work, for logs and --version: "oneDNN 2.6.3 (brg:avx512_core_bf16)",
// or why nothing does.
std::string bf16_kernels_description();
// Registers the custom operators on `options` (nothing when unavailable); `threads` as in
// register_onednn_ops.
void register_onednn_bf16_ops(Ort::SessionOptions& options, int threads);

}  // namespace sam3::kernels
