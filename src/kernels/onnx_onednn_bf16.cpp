#include "kernels/onnx_onednn_bf16.h"

#include "kernels/onednn_bf16.h"
#include "optimize/onnx_domain_move.h"
#include "optimize/onnx_fields.h"

namespace sam3::kernels {
namespace {

using namespace optimize::onnx;

// The attention fusion's node: Q, K, V and one head; no mask, bias or other attribute.
bool movable_attention(const Node& n) {
  if (n.op != "MultiHeadAttention" || n.domain != "com.microsoft" || n.inputs.size() != 3 || n.outputs.size() != 1) return false;
  for (const auto& i : n.inputs) {
    if (i.empty()) return false;
  }
  if (int_attribute(n, "num_heads") != 1) return false;
  for (const auto& name : optimize::attribute_names(n)) {
    if (name != "num_heads" && name != "scale") return false;
  }
  return true;
}

// x @ W with W a constant float matrix of at least kBf16MinWeights elements, stored in the file.
bool movable_matmul(const GraphView& g, const Node& n) {
  if (!is_op(&n, "MatMul") || n.inputs.size() != 2 || n.outputs.size() != 1) return false;
  const auto w = g.constant_tensor(n.inputs[1]);
  if (!w) return false;
  const TensorHeader h = tensor_header(*w);
  return h.data_type == kFloat && !h.external && h.dims.size() == 2 && h.elements() >= kBf16MinWeights;
}

}  // namespace

std::string move_float_work_to_onednn_bf16(const std::string& model_bytes, OneDnnBf16Stats* stats) {
  OneDnnBf16Stats local;
  OneDnnBf16Stats& st = stats ? *stats : local;
  st = {};
  return optimize::move_nodes_to_domain(
      model_bytes, kOneDnnBf16Domain,
      [&](const GraphView& g, const Node& n) {
        if (movable_attention(n)) return ++st.attention, true;
        if (movable_matmul(g, n)) return ++st.matmuls, true;
        return false;
      },
      nullptr);
}

}  // namespace sam3::kernels
