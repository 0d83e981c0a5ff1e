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
