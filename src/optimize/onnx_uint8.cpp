#include "optimize/onnx_uint8.h"

#include <map>
#include <set>
#include <vector>

#include "optimize/change_groups.h"
#include "optimize/onnx_fields.h"
#include "optimize/onnx_graph_view.h"
#include "optimize/onnx_int8_sign.h"
#include "optimize/protobuf_wire.h"

namespace sam3::optimize {
namespace {

using namespace onnx;
using wire::Field;
using wire::parse;
using wire::write_len;

std::string_view tensor_name(std::string_view tensor) {
  for (const auto& f : parse(tensor)) {
    if (f.number == kTensorName && f.wire == 2) return f.bytes;
  }
  return {};
}

std::string uint8_scalar(const std::string& name, std::uint8_t value) {
  std::string t;
  wire::write_varint_field(t, kTensorDataType, kUint8);
  write_len(t, kTensorName, name);
  write_len(t, kTensorRawData, std::string(1, static_cast<char>(value)));
  std::string field;
  write_len(field, kGraphInitializer, t);
  return field;
}

// The node with inputs `inputs` (written first) and its other fields as they were.
std::string with_inputs(const Node& n, const std::vector<std::string>& inputs) {
  std::string node;
  for (const auto& in : inputs) write_len(node, kNodeInput, in);
  for (const auto& f : parse(n.field->bytes)) {
    if (f.number != kNodeInput) node.append(f.whole);
  }
  std::string field;
  write_len(field, kGraphNode, node);
  return field;
}

}  // namespace

std::string rewrite_matmulinteger_weights_to_uint8(const std::string& model_bytes, Int8RewriteStats* stats) {
  Int8RewriteStats local;
  Int8RewriteStats& st = stats ? *stats : local;
  st = {};
  const auto model = parse(model_bytes);
  const Field& graph_field = wire::message_field(model, kModelGraph);
  const auto graph = parse(graph_field.bytes);
  const GraphView g(graph);

  // An int8 initializer of sam3's to change: not a graph input, in the file, read only in the
  // weight or weight zero-point slots of MatMulInteger nodes whose activations are uint8.
  auto products_of_uint8 = [&](const std::string& name, size_t slot) {
    for (int r : g.readers(name)) {
      if (r < 0) return false;
      const Node& n = g.nodes()[static_cast<size_t>(r)];
      if (!is_op(&n, "MatMulInteger") || !is_op(g.producer(n.inputs[0]), "DynamicQuantizeLinear")) return false;
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        if (n.inputs[i] == name && i != slot) return false;
      }
    }
    return true;
  };
  auto int8_constant = [&](const std::string& name, size_t slot) {
    const auto t = g.constant_tensor(name);
    if (!t || g.producer(name)) return false;  // Constant nodes are left alone
    const TensorHeader h = tensor_header(*t);
    return h.data_type == kInt8 && !h.external && products_of_uint8(name, slot);
  };

  // Weights and zero points joined through the nodes that read them change as a whole.
  ChangeGroups groups;
  std::vector<const Node*> products;
  std::set<std::string> names, weights;
  for (const Node& n : g.nodes()) {
    if (!is_op(&n, "MatMulInteger") || n.inputs.size() < 2) continue;
    const std::string& weight = n.inputs[1];
    const std::string zp = n.inputs.size() >= 4 ? n.inputs[3] : "";
    const auto weight_type = g.constant_tensor(weight) ? tensor_header(*g.constant_tensor(weight)).data_type : 0;
    if (weight_type != kInt8) continue;  // uint8 weights are exact already; activations' types unknown
    products.push_back(&n);
    weights.insert(weight);
    names.insert(weight);
    groups.add(weight, int8_constant(weight, 1));
    if (!zp.empty()) {
      names.insert(zp);
      groups.add(zp, int8_constant(zp, 3));
      groups.join(zp, weight);
    }
  }
  std::set<std::string> rewrite;
  for (const auto& name : names) {
    if (groups.changes(name)) rewrite.insert(name);
  }
  for (const auto& w : weights) (rewrite.contains(w) ? st.weights : st.skipped)++;
  if (st.weights == 0) return model_bytes;

  // Products without a weight zero point get an explicit 128.
  const std::string zp128 = g.unused_prefix("sam3_uint8_") + "zero_point";
  std::map<const Field*, std::string> new_nodes;
  for (const Node* n : products) {
    if (!rewrite.contains(n->inputs[1]) || n->inputs.size() >= 4) continue;
    std::vector<std::string> inputs = n->inputs;
    inputs.resize(3);  // "" for an absent activation zero point
    inputs.push_back(zp128);
    new_nodes[n->field] = with_inputs(*n, inputs);
  }
  std::string new_graph;
  for (const auto& f : graph) {
    if (f.number == kGraphInitializer && f.wire == 2 && rewrite.contains(std::string(tensor_name(f.bytes)))) {
      write_len(new_graph, kGraphInitializer, shifted_by_128(f.bytes, /*to_signed=*/false));
      st.zero_points += weights.contains(std::string(tensor_name(f.bytes))) ? 0 : 1;
    } else if (auto it = new_nodes.find(&f); it != new_nodes.end()) {
      new_graph += it->second;
    } else {
      new_graph.append(f.whole);
    }
  }
  if (!new_nodes.empty()) new_graph += uint8_scalar(zp128, 128);
  return wire::with_payload(model, graph_field, new_graph);
}

}  // namespace sam3::optimize
