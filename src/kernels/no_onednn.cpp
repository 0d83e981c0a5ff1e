// The build without oneDNN: ONNX Runtime's own kernels run every product.
#include "kernels/onednn_bf16.h"
#include "kernels/onednn_int8.h"

namespace sam3::kernels {

bool onednn_int8_available() { return false; }

std::string int8_kernels_description() { return "ONNX Runtime (this build has no oneDNN)"; }

void register_onednn_ops(Ort::SessionOptions&, int) {}

bool onednn_bf16_available() { return false; }

std::string bf16_kernels_description() { return "none (this build has no oneDNN)"; }

void register_onednn_bf16_ops(Ort::SessionOptions&, int) {}

}  // namespace sam3::kernels
