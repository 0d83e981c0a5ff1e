// oneDNN's int8 matrix products, run by ONNX Runtime as a custom operator: MatMulInteger with
// uint8 activations and constant int8 weights (what the prepare step's int8 rewrite leaves),
// in the domain kDomain. oneDNN reaches the CPU's VNNI and AMX instructions, which ONNX
// Runtime's own kernels leave idle on AMX machines.
//
// Results are bit-identical to ONNX Runtime's MatMulInteger: oneDNN computes the raw u8 x s8
// products in int32 (exact on VNNI/AMX; the AVX2/AVX-512 paths without VNNI may saturate 16-bit
// sums, so they are never used), and the zero points are applied exactly afterwards.
//
// Builds without oneDNN have the same functions: available() is then false.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <string>

namespace sam3::kernels {

inline constexpr const char* kOneDnnDomain = "ai.sam3.onednn";

// Whether this build has oneDNN and oneDNN runs u8 x s8 products exactly on this CPU.
bool onednn_int8_available();
// What runs the int8 products, for logs and --version: "oneDNN 2.6.3 (brg:avx512_core_vnni)",
// or why ONNX Runtime's kernels do ("ONNX Runtime (this build has no oneDNN)").
std::string int8_kernels_description();
// Registers the custom operator on `options` (nothing when unavailable). During each product
// oneDNN uses `threads` threads (0: its default, one per logical CPU).
void register_onednn_ops(Ort::SessionOptions& options, int threads);

}  // namespace sam3::kernels
