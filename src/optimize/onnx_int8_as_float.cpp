#include "optimize/onnx_int8_as_float.h"

#include <cfloat>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "optimize/graph_pieces.h"
#include "optimize/onnx_build.h"
#include "optimize/onnx_fields.h"
#include "optimize/onnx_graph_view.h"
#include "optimize/protobuf_wire.h"

namespace sam3::optimize {
namespace {

using namespace onnx;
using wire::Field;
using wire::parse;

struct Product {
  const Node* node = nullptr;      // MatMulInteger or ConvInteger
  const Node* quantize = nullptr;  // the DynamicQuantizeLinear of its activation
  const Node* cast = nullptr;      // the Cast to float of its result: the float product writes its output
  bool conv = false;
  bool centered = false;                           // subtracts the activation's zero point (else reads the raw values)
  std::string weight_zp;                           // "" when none
  std::vector<std::int64_t> weight_dims, zp_dims;  // of the constant weight and its zero point
};

std::optional<Product> match(const GraphView& g, const Node& n) {
  Product p;
  p.node = &n;
  p.conv = is_op(&n, "ConvInteger");
  if (n.inputs.size() < 2 || n.inputs.size() > 4 || n.outputs.size() != 1) return std::nullopt;
  p.quantize = g.producer(n.inputs[0]);
  if (!is_op(p.quantize, "DynamicQuantizeLinear") || p.quantize->inputs.size() != 1 || p.quantize->outputs.size() != 3 ||
      p.quantize->outputs[0] != n.inputs[0]) {
    return std::nullopt;
  }
  const std::string activation_zp = n.inputs.size() >= 3 ? n.inputs[2] : "";
  if (!activation_zp.empty() && activation_zp != p.quantize->outputs[2]) return std::nullopt;
  p.centered = !activation_zp.empty();
  const auto w = g.constant_tensor(n.inputs[1]);
  if (!w) return std::nullopt;
  p.weight_dims = tensor_header(*w).dims;
  if (p.conv ? p.weight_dims.size() < 3 : p.weight_dims.size() != 2) return std::nullopt;
  for (auto d : p.weight_dims) {
    if (d < 1 || d > (1 << 24)) return std::nullopt;  // (the scales of ones are made this long)
  }
  const auto readers = g.readers(n.outputs[0]);
  if (readers.size() != 1 || readers[0] < 0) return std::nullopt;
  p.cast = &g.nodes()[static_cast<size_t>(readers[0])];
  if (!is_op(p.cast, "Cast") || p.cast->outputs.size() != 1 || int_attribute(*p.cast, "to") != kFloat) return std::nullopt;
  if (n.inputs.size() == 4 && !n.inputs[3].empty()) {
    p.weight_zp = n.inputs[3];
    const auto zp = g.constant_tensor(p.weight_zp);
    if (!zp) return std::nullopt;
    p.zp_dims = tensor_header(*zp).dims;
    // A scalar, or one per column of the MatMul weight (ConvInteger takes only a scalar).
    if (p.zp_dims.size() > 1 || (p.conv && !p.zp_dims.empty())) return std::nullopt;
    if (p.zp_dims.size() == 1 && p.zp_dims[0] != p.weight_dims[1]) return std::nullopt;
  }
  return p;
}

struct Names {
  std::string prefix;
  std::string zero, one, c255, lowest, highest, smallest, magic;
};

// The float twin of a DynamicQuantizeLinear: `scale` (under the node's own output name when the
// twin replaces it); `values` the quantized activation (0..255); `centered` them minus the zero
// point.
struct Twin {
  std::string scale, values, centered;
};

// ONNX Runtime Web's WebGPU provider has no Round: x + 1.5 * 2^23 - 1.5 * 2^23 rounds to the
// nearest integer, ties to even, for |x| < 2^22 (float32 addition rounds so; here |x| <= 256).
// Two nodes, so nothing folds them into one expression.
std::string round_half_even(const Names& c, const std::string& x, const std::string& out, std::string& graph) {
  graph += node("Add", {x, c.magic}, out + "_biased");
  graph += node("Sub", {out + "_biased", c.magic}, out);
  return out;
}

Twin quantizer_twin(const Names& c, const Node& q, int index, bool replaces, std::string& graph) {
  const std::string p = c.prefix + "q" + std::to_string(index) + "_";
  const std::string& x = q.inputs[0];
  Twin t;
  t.scale = replaces ? q.outputs[1] : p + "scale";
  t.values = p + "values";
  t.centered = p + "centered";
  const std::vector<std::string> all = {int_attr("keepdims", 0)};
  graph += node("ReduceMin", {x}, p + "min", all);
  graph += node("ReduceMax", {x}, p + "max", all);
  // The range includes 0; scale (max - min) / 255, kept finite for an all-zero tensor (whose
  // quantized values are 0 whatever the scale).
  graph += node("Clip", {p + "min", c.lowest, c.zero}, p + "lo");
  graph += node("Clip", {p + "max", c.zero, c.highest}, p + "hi");
  graph += node("Sub", {p + "hi", p + "lo"}, p + "range");
  graph += node("Div", {p + "range", c.c255}, p + "scale_raw");
  graph += node("Clip", {p + "scale_raw", c.smallest, c.highest}, t.scale);
  // Zero point: round(clamp(0 - min / scale, 0, 255)).
  graph += node("Div", {p + "lo", t.scale}, p + "lo_steps");
  graph += node("Neg", {p + "lo_steps"}, p + "zp_raw");
  graph += node("Clip", {p + "zp_raw", c.zero, c.c255}, p + "zp_clipped");
  const std::string zp = round_half_even(c, p + "zp_clipped", p + "zp", graph);
  // Values: clamp(round(x / scale) + zero point, 0, 255).
  graph += node("Div", {x, t.scale}, p + "steps");
  const std::string rounded = round_half_even(c, p + "steps", p + "rounded", graph);
  graph += node("Add", {rounded, zp}, p + "shifted");
  graph += node("Clip", {p + "shifted", c.zero, c.c255}, t.values);
  graph += node("Sub", {t.values, zp}, t.centered);
  return t;
}

// DequantizeLinear(x, 1): x's integers as floats. Two bugs of ONNX Runtime Web 1.30's WebGPU
// DequantizeLinear shape this: with a zero point it subtracts uint8 values in unsigned integers
// (100 - 131 wraps to 4294967265), so the zero point is subtracted afterwards in float; and with
// one scale for the whole tensor it unpacks four values per thread from the wrong word when the
// size is a multiple of 4, and caches its shader by input types and ranks only, so one node's
// variant runs the next's. Scales of ones along an axis longer than 1 (one value per thread, the
// same shader for every size) avoid both. `ones` collects the lengths used.
std::string integers_as_float(const Names& c, const std::string& x, const std::vector<std::int64_t>& dims, const std::string& out,
                              std::set<std::int64_t>& ones, std::string& graph) {
  for (size_t axis = dims.size(); axis-- > 0;) {
    if (dims[axis] <= 1) continue;
    ones.insert(dims[axis]);
    graph += node("DequantizeLinear", {x, c.prefix + "ones" + std::to_string(dims[axis])}, out,
                  {int_attr("axis", static_cast<std::int64_t>(axis))});
    return out;
  }
  graph += node("DequantizeLinear", {x, c.one}, out);  // one element: one thread, one value
  return out;
}

std::string float_product(const Names& c, const Product& p, const Twin& twin, int index, std::set<std::int64_t>& ones, std::string& graph) {
  const Node& n = *p.node;
  const std::string w = c.prefix + "w" + std::to_string(index);
  std::string weight = integers_as_float(c, n.inputs[1], p.weight_dims, w + "_raw", ones, graph);
  if (!p.weight_zp.empty()) {
    integers_as_float(c, p.weight_zp, p.zp_dims, w + "_zp", ones, graph);
    graph += node("Sub", {weight, w + "_zp"}, w);  // a zero point per column broadcasts over the rows
    weight = w;
  }
  const std::string& activation = p.centered ? twin.centered : twin.values;
  if (!p.conv) {
    graph += node("MatMul", {activation, weight}, p.cast->outputs[0]);
  } else {
    std::vector<std::string> attrs;  // ConvInteger's attributes are Conv's
    for (const auto& a : n.attributes) attrs.emplace_back(a.bytes);
    // WebGPU's Conv wants the kernel shape and dilations written out when its weight is computed.
    const size_t spatial = p.weight_dims.size() - 2;
    if (ints_attribute(n, "kernel_shape").empty()) {
      attrs.push_back(ints_attr("kernel_shape", {p.weight_dims.begin() + 2, p.weight_dims.end()}));
    }
    if (ints_attribute(n, "dilations").empty()) attrs.push_back(ints_attr("dilations", std::vector<std::int64_t>(spatial, 1)));
    graph += node("Conv", {activation, weight}, p.cast->outputs[0], attrs);
  }
  return weight;
}

}  // namespace

std::string int8_products_as_float(std::string_view model_bytes, Int8AsFloatStats* stats) {
  Int8AsFloatStats local;
  Int8AsFloatStats& st = stats ? *stats : local;
  st = {};
  const auto model = parse(model_bytes);
  const Field& graph_field = wire::message_field(model, kModelGraph);
  bool has_microsoft = false;
  // Clip takes its bounds as inputs from opset 11 on, ReduceMin/Max reduce all axes alike from 13 on.
  if (default_opset(model, &has_microsoft) < 13) return std::string(model_bytes);

  const auto graph_fields = parse(graph_field.bytes);
  const GraphView g(graph_fields);
  std::vector<Product> products;
  for (const auto& n : g.nodes()) {
    if (!is_op(&n, "MatMulInteger") && !is_op(&n, "ConvInteger")) continue;
    auto p = match(g, n);
    // (The quantizer's float twin is written where it stood, so it must come first in the file.)
    if (p && g.index(p->quantize) < g.index(&n))
      products.push_back(*p);
    else
      ++st.skipped;
  }
  if (products.empty()) return std::string(model_bytes);

  std::map<const Node*, int> product_at, quantizer_index;
  std::set<const Node*> removed;
  for (size_t i = 0; i < products.size(); ++i) {
    product_at[products[i].node] = static_cast<int>(i);
    removed.insert(products[i].cast);
    quantizer_index.emplace(products[i].quantize, static_cast<int>(quantizer_index.size()));
  }
  // A DynamicQuantizeLinear goes when only rewritten products read its values and zero point.
  std::set<const Node*> replaced_quantizers;
  for (const auto& [q, index] : quantizer_index) {
    bool only_products = true;
    for (const auto& out : {q->outputs[0], q->outputs[2]}) {
      for (int r : g.readers(out)) only_products = only_products && r >= 0 && product_at.contains(&g.nodes()[static_cast<size_t>(r)]);
    }
    if (only_products) replaced_quantizers.insert(q);
  }

  Names c;
  c.prefix = g.unused_prefix("sam3_int8_as_float_");
  c.zero = c.prefix + "zero", c.one = c.prefix + "one", c.c255 = c.prefix + "255";
  c.lowest = c.prefix + "lowest", c.highest = c.prefix + "highest", c.smallest = c.prefix + "smallest";
  c.magic = c.prefix + "round";

  std::map<const Node*, Twin> twins;
  std::set<std::int64_t> ones;
  GraphPieces graph;
  for (const auto& f : graph_fields) {
    const Node* n = f.number == kGraphNode && f.wire == 2 ? g.node_of(f) : nullptr;
    if (n && removed.contains(n)) continue;
    if (auto it = quantizer_index.find(n); n && it != quantizer_index.end()) {
      const bool replaces = replaced_quantizers.contains(n);
      if (!replaces) graph.copy(f.whole);
      std::string nodes;
      twins[n] = quantizer_twin(c, *n, it->second, replaces, nodes);
      graph.add(std::move(nodes));
      continue;
    }
    if (auto it = product_at.find(n); n && it != product_at.end()) {
      const Product& p = products[static_cast<size_t>(it->second)];
      std::string nodes;
      float_product(c, p, twins.at(p.quantize), it->second, ones, nodes);
      graph.add(std::move(nodes));
      (p.conv ? st.convs : st.matmuls)++;
      continue;
    }
    graph.copy(f.whole);
  }
  std::string constants;
  constants += float_initializer(c.zero, 0.0f);
  constants += float_initializer(c.one, 1.0f);
  constants += float_initializer(c.c255, 255.0f);
  constants += float_initializer(c.lowest, -FLT_MAX);
  constants += float_initializer(c.highest, FLT_MAX);
  constants += float_initializer(c.smallest, FLT_MIN);
  constants += float_initializer(c.magic, 12582912.0f);
  for (auto n : ones) constants += float_vector_initializer(c.prefix + "ones" + std::to_string(n), n, 1.0f);
  graph.add(std::move(constants));
  st.quantizers = static_cast<int>(twins.size());
  // The model with the new graph, written once (the browser holds a model twice, not three times).
  return model_with_graph(model_bytes, model, graph_field, graph);
}

}  // namespace sam3::optimize
