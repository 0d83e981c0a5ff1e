#include "optimize/onnx_domain_move.h"

#include "optimize/onnx_fields.h"
#include "optimize/protobuf_wire.h"

namespace sam3::optimize {
namespace {

using namespace onnx;
using wire::Field;
using wire::parse;

// The same NodeProto in `domain`, as a graph field.
std::string in_domain(const Field& node_field, std::string_view domain) {
  std::string n;
  for (const auto& f : parse(node_field.bytes)) {
    if (f.number != kNodeDomain) n.append(f.whole);
  }
  wire::write_len(n, kNodeDomain, domain);
  std::string field;
  wire::write_len(field, kGraphNode, n);
  return field;
}

}  // namespace

std::int64_t TensorHeader::elements() const {
  std::int64_t n = 1;
  for (auto d : dims) n *= d;
  return n;
}

TensorHeader read_tensor_header(std::string_view tensor) {
  TensorHeader c;
  for (const auto& f : parse(tensor)) {
    if (f.number == kTensorDataType && f.wire == 0) c.data_type = static_cast<int>(f.varint);
    else if (f.number == kTensorDataLocation && f.wire == 0) c.external = f.varint == 1;
    else if (f.number == kTensorDims && f.wire == 0) c.dims.push_back(static_cast<std::int64_t>(f.varint));
    else if (f.number == kTensorDims && f.wire == 2) {
      size_t p = 0;
      while (p < f.bytes.size()) c.dims.push_back(static_cast<std::int64_t>(wire::read_varint(f.bytes, p)));
    }
  }
  return c;
}

std::vector<std::string> attribute_names(const Node& n) {
  std::vector<std::string> names;
  for (const auto& a : n.attributes) {
    for (const auto& f : parse(a.bytes)) {
      if (f.number == kAttrName && f.wire == 2) names.emplace_back(f.bytes);
    }
  }
  return names;
}

std::string move_nodes_to_domain(const std::string& model_bytes, std::string_view domain,
                                 const std::function<bool(const GraphView&, const Node&)>& movable, int* moved) {
  int count = 0;
  const auto model = parse(model_bytes);
  const Field& graph_field = wire::message_field(model, kModelGraph);
  const auto graph_fields = parse(graph_field.bytes);
  const GraphView g(graph_fields);
  std::string new_graph;
  for (const auto& f : graph_fields) {
    const Node* n = f.number == kGraphNode && f.wire == 2 ? g.node_of(f) : nullptr;
    if (n && n->domain != domain && movable(g, *n)) {
      new_graph += in_domain(f, domain);
      ++count;
    } else {
      new_graph.append(f.whole);
    }
  }
  if (moved) *moved = count;
  if (count == 0) return model_bytes;
  std::string out = wire::with_payload(model, graph_field, new_graph);
  bool imported = false;
  for (const auto& f : model) {
    if (f.number != kModelOpsetImport || f.wire != 2) continue;
    for (const auto& of : parse(f.bytes)) imported = imported || (of.number == kOpsetDomain && of.bytes == domain);
  }
  if (!imported) {
    std::string opset;
    wire::write_len(opset, kOpsetDomain, domain);
    wire::write_varint_field(opset, kOpsetVersion, 1);
    wire::write_len(out, kModelOpsetImport, opset);
  }
  return out;
}

}  // namespace sam3::optimize
