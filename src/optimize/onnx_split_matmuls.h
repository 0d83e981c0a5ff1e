// Splits a graph at its float products by constant weights, for the browser's own float kernel
// (apps/web/kernels/float_gemm.c, docs/browser.md "The tab's own float product"): ONNX Runtime
// Web's MatMul runs 128-bit SIMD without fused multiply-adds, the kernel computes the same
// product with relaxed SIMD's multiply-add. Taken: MatMul(x, W) with W a constant 2-D float
// matrix stored in the file, optionally followed by the Add of a constant bias of n floats (read
// by that Add alone), where x is known to have at least `min_rows` rows (the product of its
// dimensions but the last, those known from the declared shapes and a small static shape
// propagation; unknown dimensions count as 1): a kernel step costs a segment boundary (a session
// run, its inputs copied in and its outputs out), which a product over a few prompt tokens does
// not pay back. Anything else stays in the segments as it was.
//
// An Add of a constant before the product, read by such products alone (Add(a, C), C's shape
// without its leading 1s known to be a's last dimensions), is taken into each: the step reads a
// and adds C (x_add) before the product, so the sum never leaves ONNX Runtime Web.
//
// Its bundle steps (optimize/onnx_split_graph.h): {"matmul": {x, output, k, n, rows (the known
// lower bound), weight: {offset, bytes} ([k, n] floats, little-endian), bias: {offset, bytes} or
// null, and with an Add taken in x_add: {offset, bytes} (C's floats; steps sharing C share the
// blob) and x_add_shape (C's dimensions without its leading 1s)}}.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "optimize/onnx_split_graph.h"

namespace sam3::optimize {

struct FloatMatMulOptions {
  std::int64_t min_rows = 1024;    // x's rows, at least (statically known)
  std::int64_t min_weight = 4096;  // k x n, at least
};

// The matcher for split_graph; reads the model's declared shapes (graph inputs, value_info), so
// it is made from the model's bytes (which need not outlive it).
KernelMatcher float_matmul_matcher(std::string_view model_bytes, FloatMatMulOptions options = {});

}  // namespace sam3::optimize
