// Rewrites dynamically quantized products (what quantize_dynamic writes, and what the public int8
// SAM3 files hold):
//     DynamicQuantizeLinear(x) -> MatMulInteger or ConvInteger (constant weight) -> Cast(float)
// into float operators that compute the same integers:
//   - the activation's quantization as ReduceMin, ReduceMax, Clip, Div, Neg, Add, Sub, as
//     DynamicQuantizeLinear defines it (range widened to include 0, scale (max - min) / 255,
//     zero point and values rounded half to even and saturated to 0..255), the quantized values
//     minus their zero point left as integer-valued floats;
//   - the weight as DequantizeLinear(w, 1) - DequantizeLinear(zero point, 1) (scales of ones,
//     shaped around two bugs of the WebGPU kernel, see the source): integer-valued floats made at
//     run time from the uint8/int8 weight, which stays as it is in memory (ONNX Runtime does not
//     fold a DequantizeLinear into a float constant);
//   - the product as a float MatMul or Conv writing the Cast's output.
// Every value is an integer below 2^24 up to the product's sums, so the results equal the
// integer graph's up to float rounding of large sums. ONNX Runtime Web's WebGPU provider has
// kernels for all of these and none for DynamicQuantizeLinear, MatMulInteger or ConvInteger
// (docs/browser.md), so the rewritten graph runs on the GPU instead of falling back to WASM.
//
// A product is left alone when its result is read by anything but one Cast to float, its
// activation does not come from DynamicQuantizeLinear, its weight is not a constant (2-D for
// MatMulInteger), or its weight zero point is neither a constant scalar nor, for MatMulInteger,
// one constant per column. Graphs with a default opset below 13 are returned unchanged. Works on
// the serialized protobuf, like the other rewrites here.
#pragma once

#include <string>
#include <string_view>

namespace sam3::optimize {

struct Int8AsFloatStats {
  int quantizers = 0;  // DynamicQuantizeLinear nodes computed with float operators
  int matmuls = 0;     // MatMulInteger -> DequantizeLinear + MatMul
  int convs = 0;       // ConvInteger -> DequantizeLinear + Conv
  int skipped = 0;     // MatMulInteger / ConvInteger nodes left as they were
};

// Returns the rewritten model bytes (the input unchanged when nothing matched). Throws
// sam3::Error(kModelMismatch) on a malformed file.
std::string int8_products_as_float(std::string_view model_bytes, Int8AsFloatStats* stats);

}  // namespace sam3::optimize
