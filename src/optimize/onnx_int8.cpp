#include "optimize/onnx_int8.h"

#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "optimize/change_groups.h"
#include "optimize/onnx_fields.h"
#include "optimize/onnx_int8_sign.h"
#include "optimize/protobuf_wire.h"

namespace sam3::optimize {
namespace {

using namespace onnx;
using wire::Field;
using wire::parse;
using wire::write_len;

// ---- the rewrite --------------------------------------------------------------------------
struct TensorInfo {
  std::string name;
  int data_type = 0;
  bool external = false;
};

TensorInfo tensor_info(std::string_view tensor) {
  TensorInfo t;
  for (const auto& f : parse(tensor)) {
    if (f.number == kTensorName && f.wire == 2)
      t.name = f.bytes;
    else if (f.number == kTensorDataType && f.wire == 0)
      t.data_type = static_cast<int>(f.varint);
    else if (f.number == kTensorDataLocation && f.wire == 0)
      t.external = f.varint == 1;
  }
  return t;
}

}  // namespace

std::string rewrite_matmulinteger_weights_to_int8(const std::string& model_bytes, Int8RewriteStats* stats) {
  Int8RewriteStats local;
  Int8RewriteStats& st = stats ? *stats : local;
  st = {};
  const auto model = parse(model_bytes);
  const Field& graph_field = wire::message_field(model, kModelGraph);
  const auto graph = parse(graph_field.bytes);

  // Which initializers are MatMulInteger weights / weight zero points (a weight may be read by
  // several nodes, each with its own zero point), and who else uses them.
  std::map<std::string, std::set<std::string>> weight_to_zps;  // B -> its b_zero_points
  std::set<std::string> other_uses;
  for (const auto& f : graph) {
    if (f.number != kGraphNode || f.wire != 2) continue;
    std::string op;
    std::vector<std::string> inputs;
    for (const auto& nf : parse(f.bytes)) {
      if (nf.number == kNodeOpType && nf.wire == 2) op = nf.bytes;
      if (nf.number == kNodeInput && nf.wire == 2) inputs.emplace_back(nf.bytes);
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      const bool weight_slot = op == "MatMulInteger" && (i == 1 || i == 3);
      if (!weight_slot) other_uses.insert(inputs[i]);
    }
    if (op == "MatMulInteger" && inputs.size() >= 2) {
      weight_to_zps[inputs[1]].insert(inputs.size() >= 4 ? inputs[3] : "");
    }
  }
  std::map<std::string, const Field*> initializers;
  for (const auto& f : graph) {
    if (f.number == kGraphInitializer && f.wire == 2) initializers[tensor_info(f.bytes).name] = &f;
  }
  auto rewritable = [&](const std::string& name) {
    auto it = initializers.find(name);
    if (it == initializers.end() || other_uses.contains(name)) return false;
    const TensorInfo t = tensor_info(it->second->bytes);
    return t.data_type == kUint8 && !t.external;
  };
  // A weight and all its zero points change together, or not at all; a zero point shared with
  // a weight that stays uint8 stays uint8, and so does every weight it belongs to: weights and
  // zero points joined through shared zero points form groups that change as a whole (a
  // union-find over the names, linear in the graph however the zero points are chained).
  ChangeGroups groups;
  for (const auto& [weight, zps] : weight_to_zps) {
    groups.add(weight, rewritable(weight));
    for (const auto& zp : zps) {
      groups.add(zp, rewritable(zp));
      groups.join(zp, weight);
    }
  }
  std::set<std::string> rewrite;
  for (const auto& [weight, zps] : weight_to_zps) {
    if (!groups.changes(weight)) {
      ++st.skipped;
      continue;
    }
    rewrite.insert(weight);
    rewrite.insert(zps.begin(), zps.end());
  }
  std::string new_graph;
  for (const auto& f : graph) {
    if (f.number == kGraphInitializer && f.wire == 2) {
      const std::string name = tensor_info(f.bytes).name;
      if (rewrite.contains(name)) {
        write_len(new_graph, kGraphInitializer, shifted_by_128(f.bytes, /*to_signed=*/true));
        (weight_to_zps.contains(name) ? st.weights : st.zero_points)++;
        continue;
      }
    }
    new_graph.append(f.whole);
  }
  return wire::with_payload(model, graph_field, new_graph);
}

}  // namespace sam3::optimize
