// libFuzzer target: arbitrary bytes as an ONNX file, through the protobuf reader that the
// int8 and uint8 weight rewrites and the attention fusion run on every model they prepare, and the browser's
// int8-as-float rewrite on every file it loads for WebGPU. A file that is
// not a valid ModelProto must be sam3::Error(kModelMismatch); one that is must come out as a
// message the reader parses again. Never a crash, hang or sanitizer report.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "optimize/onnx_attention.h"
#include "optimize/onnx_int8.h"
#include "optimize/onnx_int8_as_float.h"
#include "kernels/onnx_onednn_bf16.h"
#include "kernels/onnx_onednn_int8.h"
#include "optimize/onnx_uint8.h"
#include "optimize/protobuf_wire.h"
#include "sam3/error.h"

namespace {

// Every length-delimited field tried as a nested message, a few levels down, as the rewrites do.
void walk(std::string_view message, int depth) {
  if (depth > 4) return;
  try {
    for (const auto& f : sam3::optimize::wire::parse(message)) {
      if (f.wire == 2) walk(f.bytes, depth + 1);
    }
  } catch (const sam3::Error& e) {
    if (e.code() != sam3::ErrorCode::kModelMismatch) std::abort();
  }
}

template <typename Rewrite>
void rewrite(const std::string& bytes, Rewrite&& run) {
  try {
    const std::string out = run(bytes);
    sam3::optimize::wire::parse(out);  // what was written must read back
  } catch (const sam3::Error& e) {
    if (e.code() != sam3::ErrorCode::kModelMismatch) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  walk(bytes, 0);
  rewrite(bytes, [](const std::string& b) {
    sam3::optimize::Int8RewriteStats stats;
    return sam3::optimize::rewrite_matmulinteger_weights_to_int8(b, &stats);
  });
  rewrite(bytes, [](const std::string& b) {
    sam3::optimize::Int8RewriteStats stats;
    return sam3::optimize::rewrite_matmulinteger_weights_to_uint8(b, &stats);
  });
  rewrite(bytes, [](const std::string& b) {
    sam3::optimize::AttentionFusionStats stats;
    return sam3::optimize::fuse_attention(b, &stats);
  });
  rewrite(bytes, [](const std::string& b) {
    sam3::kernels::OneDnnInt8Stats stats;
    return sam3::kernels::move_matmulinteger_to_onednn(b, &stats, 0);
  });
  rewrite(bytes, [](const std::string& b) {
    sam3::kernels::OneDnnBf16Stats stats;
    return sam3::kernels::move_float_work_to_onednn_bf16(b, &stats);
  });
  rewrite(bytes, [](const std::string& b) {
    sam3::optimize::Int8AsFloatStats stats;
    return sam3::optimize::int8_products_as_float(b, &stats);
  });
  return 0;
}
