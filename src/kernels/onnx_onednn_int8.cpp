#include "kernels/onnx_onednn_int8.h"

#include "kernels/onednn_int8.h"
#include "optimize/onnx_domain_move.h"
#include "optimize/onnx_fields.h"

namespace sam3::kernels {
namespace {

using namespace optimize::onnx;

// Whether oneDNN's kernel computes this node exactly as ONNX Runtime would.
bool movable(const GraphView& g, const Node& n, std::int64_t min_weights) {
  if (!is_op(&n, "MatMulInteger") || n.inputs.size() < 2 || n.inputs.size() > 4 || n.outputs.size() != 1) return false;
  // Activations: DynamicQuantizeLinear's uint8 output with its scalar zero point (or none).
  const Node* quantize = g.producer(n.inputs[0]);
  if (!is_op(quantize, "DynamicQuantizeLinear") || quantize->outputs.size() < 3 || quantize->outputs[0] != n.inputs[0]) {
    return false;
  }
  if (n.inputs.size() >= 3 && !n.inputs[2].empty() && n.inputs[2] != quantize->outputs[2]) return false;
  // Weights: a constant int8 matrix; their zero point a constant int8 scalar or one per column.
  const auto b = g.constant_tensor(n.inputs[1]);
  if (!b) return false;
  const TensorHeader w = tensor_header(*b);
  if (w.data_type != kInt8 || w.external || w.dims.size() != 2 || w.elements() < min_weights) return false;
  if (n.inputs.size() == 4 && !n.inputs[3].empty()) {
    const auto zp = g.constant_tensor(n.inputs[3]);
    if (!zp) return false;
    const TensorHeader z = tensor_header(*zp);
    if (z.data_type != kInt8 || z.external || z.dims.size() > 1) return false;
    if (z.elements() != 1 && z.elements() != w.dims[1]) return false;
  }
  return true;
}

}  // namespace

std::string move_matmulinteger_to_onednn(const std::string& model_bytes, OneDnnInt8Stats* stats, std::int64_t min_weights) {
  OneDnnInt8Stats local;
  OneDnnInt8Stats& st = stats ? *stats : local;
  st = {};
  return optimize::move_nodes_to_domain(
      model_bytes, kOneDnnDomain, [&](const GraphView& g, const Node& n) { return movable(g, n, min_weights); }, &st.nodes);
}

}  // namespace sam3::kernels
