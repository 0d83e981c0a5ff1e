// Splits a graph at its dynamically quantized linear layers, for the browser's own int8 kernel
// (apps/web/kernels/int8_gemm.c, docs/browser.md "Relaxed-SIMD int8 products"): ONNX Runtime Web
// runs the graph between the products as a chain of smaller graphs ("segments"), and the kernel
// computes each product from the quantized activation that ONNX Runtime's DynamicQuantizeLinear
// wrote. A linear layer is what quantize_dynamic writes (and ONNX Runtime fuses into
// DynamicQuantizeMatMul):
//     DynamicQuantizeLinear(x) -> MatMulInteger(x_q, W, x_zp[, w_zp]) -> Cast(float)
//       -> Mul(., Mul(x_scale, w_scale)) [-> Add(., bias)]
// with W a constant 2-D uint8/int8 matrix stored in the file, w_zp and w_scale constants of one
// value or one per column, bias a constant of N floats; each intermediate read by the next node
// only. Anything else stays in the segments as it was.
//
// The result is one "bundle": the magic "SAM3SPL1", a little-endian uint32 header length, the
// header (JSON), then the blobs it points to (16-byte aligned offsets from the bundle's start):
//   {"version": 1, "inputs"/"outputs": the graph's [{name, type (ONNX element type), shape}],
//    "steps": [{"segment": {offset, bytes, inputs, outputs}} | {"linear": {x, scale, zero_point
//    (the quantizer's outputs), output, k, n, signed, weight: {offset, bytes} ([k, n] as
//    stored), w_zero_point, w_scale, bias: {offset, count} or null}}, ...]}
// run in order: each segment's inputs are graph inputs or earlier steps' outputs. Segments are
// ONNX models (the input's opsets) holding the nodes in their original order and the
// initializers they read; their inputs carry element types, inferred for the common operators
// (a value whose type is unknown stops the split: nothing is split then).
#pragma once

#include <string>
#include <string_view>

namespace sam3::optimize {

struct SplitLinearsStats {
  int linears = 0;   // products moved to the kernel
  int segments = 0;  // graphs left to ONNX Runtime
  std::string refused;  // why nothing was split although products were found
};

inline constexpr std::string_view kSplitBundleMagic = "SAM3SPL1";

// The bundle, or an empty string when the graph has no such linear layer or cannot be split
// (stats->refused says why). Throws sam3::Error(kModelMismatch) on a malformed file.
std::string split_at_int8_linears(std::string_view model_bytes, SplitLinearsStats* stats);

}  // namespace sam3::optimize
