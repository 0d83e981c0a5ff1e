#include "optimize/onnx_onednn_int8.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "kernels/onednn_int8.h"
#include "optimize/onnx_fields.h"
#include "optimize/onnx_graph_view.h"
#include "optimize/protobuf_wire.h"

namespace sam3::optimize {
namespace {

using namespace onnx;
using wire::Field;
using wire::parse;

using Constant = TensorHeader;

Constant read_constant(std::string_view tensor) { return tensor_header(tensor); }

std::int64_t elements(const Constant& c) {
  std::int64_t n = 1;
  for (auto d : c.dims) n *= d;
  return n;
}

// Whether oneDNN's kernel computes this node exactly as ONNX Runtime would.
bool movable(const GraphView& g, const Node& n) {
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
  const Constant w = read_constant(*b);
  if (w.data_type != kInt8 || w.external || w.dims.size() != 2) return false;
  if (n.inputs.size() == 4 && !n.inputs[3].empty()) {
    const auto zp = g.constant_tensor(n.inputs[3]);
    if (!zp) return false;
    const Constant z = read_constant(*zp);
    if (z.data_type != kInt8 || z.external || z.dims.size() > 1) return false;
    if (elements(z) != 1 && elements(z) != w.dims[1]) return false;
  }
  return true;
}

// The same NodeProto in the oneDNN domain.
std::string in_onednn_domain(const Field& node_field) {
  std::string n;
  for (const auto& f : parse(node_field.bytes)) {
    if (f.number != kNodeDomain) n.append(f.whole);
  }
  wire::write_len(n, kNodeDomain, kernels::kOneDnnDomain);
  std::string field;
  wire::write_len(field, kGraphNode, n);
  return field;
}

}  // namespace

std::string move_matmulinteger_to_onednn(const std::string& model_bytes, OneDnnInt8Stats* stats) {
  OneDnnInt8Stats local;
  OneDnnInt8Stats& st = stats ? *stats : local;
  st = {};
  const auto model = parse(model_bytes);
  const Field& graph_field = wire::message_field(model, kModelGraph);
  const auto graph_fields = parse(graph_field.bytes);
  const GraphView g(graph_fields);
  std::string new_graph;
  for (const auto& f : graph_fields) {
    const Node* n = f.number == kGraphNode && f.wire == 2 ? g.node_of(f) : nullptr;
    if (n && movable(g, *n)) {
      new_graph += in_onednn_domain(f);
      ++st.nodes;
    } else {
      new_graph.append(f.whole);
    }
  }
  if (st.nodes == 0) return model_bytes;
  std::string out = wire::with_payload(model, graph_field, new_graph);
  bool imported = false;
  for (const auto& f : model) {
    if (f.number != kModelOpsetImport || f.wire != 2) continue;
    for (const auto& of : parse(f.bytes)) imported = imported || (of.number == kOpsetDomain && of.bytes == kernels::kOneDnnDomain);
  }
  if (!imported) {
    std::string opset;
    wire::write_len(opset, kOpsetDomain, kernels::kOneDnnDomain);
    wire::write_varint_field(opset, kOpsetVersion, 1);
    wire::write_len(out, kModelOpsetImport, opset);
  }
  return out;
}

}  // namespace sam3::optimize
