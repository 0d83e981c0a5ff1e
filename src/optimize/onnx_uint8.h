// For CPUs whose u8 x s8 integer kernels saturate (AVX2 and AVX-512 without VNNI sum pairs of
// products in 16 bits: 255 * 127 * 2 does not fit): MatMulInteger's int8 weights rewritten as
// uint8 w + 128, their zero points + 128 (an absent one becomes an explicit 128), which gives
// exactly the same products through ONNX Runtime's u8 x u8 kernel, exact on every CPU. Only
// products of DynamicQuantizeLinear's activations (uint8, what quantize_dynamic writes); a
// weight and every zero point joined to it through shared nodes change together or not at all.
#pragma once

#include <string>

#include "optimize/onnx_int8.h"

namespace sam3::optimize {

// Returns the rewritten model bytes (the input itself when nothing changes). Throws
// sam3::Error(kModelMismatch) on a malformed file.
std::string rewrite_matmulinteger_weights_to_uint8(const std::string& model_bytes, Int8RewriteStats* stats);

}  // namespace sam3::optimize
