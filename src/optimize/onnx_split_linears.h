// Splits a graph at its dynamically quantized linear layers, for the browser's own int8 kernel
// (apps/web/kernels/int8_gemm.c, docs/browser.md "Relaxed-SIMD int8 products"): ONNX Runtime Web
// runs the graph between the products (optimize/onnx_split_graph.h), and the kernel computes
// each product from the quantized activation that ONNX Runtime's DynamicQuantizeLinear wrote. A
// linear layer is what quantize_dynamic writes (and ONNX Runtime fuses into
// DynamicQuantizeMatMul):
//     DynamicQuantizeLinear(x) -> MatMulInteger(x_q, W, x_zp[, w_zp]) -> Cast(float)
//       -> Mul(., Mul(x_scale, w_scale)) [-> Add(., bias)] [-> Add(., r)]
// with W a constant 2-D uint8/int8 matrix stored in the file, w_zp and w_scale constants of one
// value or one per column, bias a constant of N floats, r a value made at run time (a residual
// connection: the kernel adds it, so the sum never leaves the kernels' memory); each
// intermediate read by the next node only. Anything else stays in the segments as it was.
//
// Its bundle steps: {"linear": {x, scale, zero_point (the quantizer's outputs), output, k, n,
// signed, weight: {offset, bytes} ([k, n] as stored), w_zero_point, w_scale, bias: {offset,
// bytes} or null, and with a residual taken in, residual (r's name)}}.
#pragma once

#include <string>
#include <string_view>

#include "optimize/onnx_split_graph.h"

namespace sam3::optimize {

struct SplitLinearsStats {
  int linears = 0;      // products moved to the kernel
  int segments = 0;     // graphs left to ONNX Runtime
  std::string refused;  // why nothing was split although products were found
};

// The linear layers of a graph as kernel steps, for split_graph.
void match_int8_linears(const onnx::GraphView& g, std::vector<KernelStep>& steps);

// split_graph with the linear layers alone: the bundle, or an empty string when the graph has no
// such linear layer or cannot be split (stats->refused says why). Throws
// sam3::Error(kModelMismatch) on a malformed file.
std::string split_at_int8_linears(std::string_view model_bytes, SplitLinearsStats* stats);

}  // namespace sam3::optimize
