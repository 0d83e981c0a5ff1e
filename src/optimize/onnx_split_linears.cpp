#include "optimize/onnx_split_linears.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "optimize/graph_pieces.h"
#include "optimize/onnx_fields.h"
#include "optimize/onnx_graph_view.h"
#include "optimize/protobuf_wire.h"

namespace sam3::optimize {
namespace {

using namespace onnx;
using nlohmann::json;
using wire::Field;
using wire::parse;

// onnx.proto field numbers used only here.
constexpr int kGraphName = 2, kGraphValueInfo = 13;
constexpr int kValueInfoType = 2, kTypeTensor = 1, kTensorTypeElem = 1, kTensorTypeShape = 2, kShapeDim = 1, kDimValue = 1;
constexpr int kAttrG = 6, kAttrGraphs = 11, kAttrFloats = 7;
constexpr int kInt32 = 6, kBool = 9;

struct Linear {
  const Node* quantizer = nullptr;
  int first = 0;                 // the MatMulInteger's index: where the linear's inputs are all known
  std::set<int> nodes;           // the pattern's nodes, left out of the segments
  std::string weight, w_zero_point, w_scale, bias, output;
  std::int64_t k = 0, n = 0;
  bool is_signed = false;
  int level = 0;
};

// The values of a constant tensor of `type` with `count` elements, little-endian as raw_data
// stores them (raw_data, float_data or int32_data); nullopt for anything else.
std::optional<std::string> tensor_bytes(std::string_view tensor, int type, std::int64_t count) {
  const auto h = tensor_header(tensor);
  if (h.data_type != type || h.external || h.elements() != count) return std::nullopt;
  const size_t size = static_cast<size_t>(count) * (type == kFloat ? 4 : 1);
  std::string out;
  for (const auto& f : parse(tensor)) {
    if (f.number == kTensorRawData && f.wire == 2) return f.bytes.size() == size ? std::optional(std::string(f.bytes)) : std::nullopt;
    if (type == kFloat && f.number == kTensorFloatData) out.append(f.bytes);  // packed (wire 2) or one value (wire 5)
    if (type != kFloat && f.number == kTensorInt32Data) {
      std::vector<std::uint64_t> values;
      if (f.wire == 0) values.push_back(f.varint);
      for (size_t p = 0; f.wire == 2 && p < f.bytes.size();) values.push_back(wire::read_varint(f.bytes, p));
      for (auto v : values) out.push_back(static_cast<char>(v & 0xFF));
    }
  }
  if (out.size() != size) return std::nullopt;
  return out;
}

std::optional<Linear> match(const GraphView& g, int index) {
  const Node& mm = g.nodes()[static_cast<size_t>(index)];
  if (!is_op(&mm, "MatMulInteger") || mm.inputs.size() < 3 || mm.outputs.size() != 1) return std::nullopt;
  Linear l;
  l.first = index;
  l.quantizer = g.producer(mm.inputs[0]);
  const Node* q = l.quantizer;
  if (!is_op(q, "DynamicQuantizeLinear") || q->outputs.size() != 3 || q->outputs[0] != mm.inputs[0] || q->outputs[2] != mm.inputs[2]) {
    return std::nullopt;
  }
  const auto w = g.constant_tensor(mm.inputs[1]);
  if (!w) return std::nullopt;
  const auto wh = tensor_header(*w);
  if (wh.dims.size() != 2 || (wh.data_type != kUint8 && wh.data_type != kInt8)) return std::nullopt;
  l.is_signed = wh.data_type == kInt8, l.k = wh.dims[0], l.n = wh.dims[1];
  if (l.k < 1 || l.n < 1) return std::nullopt;
  auto weight = tensor_bytes(*w, wh.data_type, l.k * l.n);
  if (!weight) return std::nullopt;
  l.weight = std::move(*weight);
  if (mm.inputs.size() > 3 && !mm.inputs[3].empty()) {
    const auto z = g.constant_tensor(mm.inputs[3]);
    if (!z) return std::nullopt;
    const auto zh = tensor_header(*z);
    auto zp = tensor_bytes(*z, wh.data_type, zh.elements());
    if (!zp || (zh.elements() != 1 && zh.elements() != l.n)) return std::nullopt;
    l.w_zero_point = std::move(*zp);
  }
  // MatMulInteger -> Cast(float) -> Mul(., Mul(x_scale, w_scale)), each read by the next only.
  auto only = [&](const std::string& value) -> const Node* {
    const auto r = g.readers(value);
    return r.size() == 1 && r[0] >= 0 ? &g.nodes()[static_cast<size_t>(r[0])] : nullptr;
  };
  const Node* cast = only(mm.outputs[0]);
  if (!is_op(cast, "Cast") || int_attribute(*cast, "to").value_or(0) != kFloat || cast->outputs.size() != 1) return std::nullopt;
  const Node* mul = only(cast->outputs[0]);
  if (!is_op(mul, "Mul") || mul->inputs.size() != 2 || mul->outputs.size() != 1) return std::nullopt;
  const std::string& scale = mul->inputs[0] == cast->outputs[0] ? mul->inputs[1] : mul->inputs[0];
  const Node* scale_mul = g.producer(scale);
  if (!is_op(scale_mul, "Mul") || scale_mul->inputs.size() != 2 || only(scale) != mul) return std::nullopt;
  const int xs = scale_mul->inputs[0] == q->outputs[1] ? 0 : scale_mul->inputs[1] == q->outputs[1] ? 1 : -1;
  if (xs < 0) return std::nullopt;
  const auto ws = g.constant_tensor(scale_mul->inputs[static_cast<size_t>(1 - xs)]);
  if (!ws) return std::nullopt;
  const auto wsh = tensor_header(*ws);
  if (wsh.elements() != 1 && (wsh.elements() != l.n || wsh.dims.empty() || wsh.dims.back() != l.n)) return std::nullopt;
  auto w_scale = tensor_bytes(*ws, kFloat, wsh.elements());
  if (!w_scale) return std::nullopt;
  l.w_scale = std::move(*w_scale);
  l.nodes = {index, g.index(cast), g.index(mul), g.index(scale_mul)};
  l.output = mul->outputs[0];
  // An optional Add of a constant bias of n floats (ONNX Runtime's fused kernel adds it after the scaling).
  if (const Node* add = only(mul->outputs[0]); is_op(add, "Add") && add->inputs.size() == 2 && add->outputs.size() == 1) {
    const std::string& b = add->inputs[0] == mul->outputs[0] ? add->inputs[1] : add->inputs[0];
    if (const auto bt = b != mul->outputs[0] ? g.constant_tensor(b) : std::nullopt) {
      const auto bh = tensor_header(*bt);
      auto bias = bh.elements() == l.n && !bh.dims.empty() && bh.dims.back() == l.n ? tensor_bytes(*bt, kFloat, l.n) : std::nullopt;
      if (bias) {
        l.bias = std::move(*bias);
        l.nodes.insert(g.index(add));
        l.output = add->outputs[0];
      }
    }
  }
  return l;
}

// Every value name a node's subgraphs read (Loop and If bodies read outer values by name).
void subgraph_reads(const Node& n, std::set<std::string>& out) {
  for (const auto& a : n.attributes) {
    for (const auto& af : parse(a.bytes)) {
      if ((af.number != kAttrG && af.number != kAttrGraphs) || af.wire != 2) continue;
      for (const auto& gf : parse(af.bytes)) {
        if (gf.number != kGraphNode || gf.wire != 2) continue;
        Node inner;
        for (const auto& nf : parse(gf.bytes)) {
          if (nf.number == kNodeInput && nf.wire == 2) out.emplace(nf.bytes);
          else if (nf.number == kNodeAttribute && nf.wire == 2) inner.attributes.push_back(nf);
        }
        subgraph_reads(inner, out);
      }
    }
  }
}

// Element types of a graph's values, from its declarations and the common operators' rules,
// in one pass over the nodes in their (topological) order. 0: unknown.
class ElementTypes {
 public:
  ElementTypes(const std::vector<Field>& graph, const GraphView& g) {
    for (const auto& f : graph) {
      if (f.wire != 2) continue;
      if (f.number == kGraphInput || f.number == kGraphOutput || f.number == kGraphValueInfo) declare(f.bytes);
      if (f.number == kGraphInitializer) {
        std::string name;
        for (const auto& tf : parse(f.bytes)) {
          if (tf.number == kTensorName && tf.wire == 2) name = tf.bytes;
        }
        types_[name] = tensor_header(f.bytes).data_type;
      }
    }
    for (const auto& n : g.nodes()) infer(n, g);
  }

  int of(const std::string& v) const {
    auto it = types_.find(v);
    return it == types_.end() ? 0 : it->second;
  }

 private:
  void declare(std::string_view value_info) {
    std::string name;
    int type = 0;
    for (const auto& f : parse(value_info)) {
      if (f.number == kValueInfoName && f.wire == 2) name = f.bytes;
      if (f.number != kValueInfoType || f.wire != 2) continue;
      for (const auto& tf : parse(f.bytes)) {
        if (tf.number != kTypeTensor || tf.wire != 2) continue;
        for (const auto& ef : parse(tf.bytes)) {
          if (ef.number == kTensorTypeElem && ef.wire == 0) type = static_cast<int>(ef.varint);
        }
      }
    }
    if (type != 0) types_[name] = type;
  }

  void infer(const Node& n, const GraphView& g) {
    static const std::set<std::string> kSameAsFirst = {
        "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Neg", "Abs", "Relu", "Sigmoid", "Tanh", "Erf", "Softmax",
        "LayerNormalization", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "Clip", "Min", "Max",
        "MatMul", "Gemm", "Conv", "ConvTranspose", "Floor", "Ceil", "Round", "Sin", "Cos", "Reciprocal", "Gelu", "FastGelu",
        "BiasGelu", "SkipLayerNormalization", "MultiHeadAttention", "Attention", "Einsum", "Mod", "Trilu", "CumSum",
        "InstanceNormalization", "BatchNormalization", "GroupNormalization", "HardSigmoid", "HardSwish", "LeakyRelu", "Elu",
        "Selu", "Softplus", "PRelu", "AveragePool", "MaxPool", "GlobalAveragePool", "DepthToSpace", "SpaceToDepth", "ScatterND",
        "ScatterElements", "Sign", "Dropout", "Gather", "GatherElements", "GatherND", "Reshape", "Transpose", "Squeeze",
        "Unsqueeze", "Slice", "Concat", "Split", "Expand", "Tile", "Pad", "Flatten", "Identity", "Resize", "Range", "MatMulNBits",
        "RotaryEmbedding", "SimplifiedLayerNormalization", "FusedMatMul", "BiasAdd", "QuickGelu"};
    static const std::set<std::string> kBoolean = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And",
                                                   "Or", "Xor", "IsNaN", "IsInf"};
    auto first = [&] {
      for (const auto& i : n.inputs) {
        if (!i.empty()) return of(i);
      }
      return 0;
    };
    auto set = [&](size_t output, int type) {
      if (output < n.outputs.size() && !n.outputs[output].empty() && type != 0 && !types_.contains(n.outputs[output])) {
        types_[n.outputs[output]] = type;
      }
    };
    const std::string& op = n.op;
    if (op == "Shape" || op == "Size" || op == "NonZero" || op == "ArgMax" || op == "ArgMin") set(0, kInt64);
    else if (op == "Cast") set(0, static_cast<int>(int_attribute(n, "to").value_or(0)));
    else if (op == "CastLike" && n.inputs.size() > 1) set(0, of(n.inputs[1]));
    else if (kBoolean.contains(op)) set(0, kBool);
    else if (op == "DynamicQuantizeLinear") set(0, kUint8), set(1, kFloat), set(2, kUint8);
    else if (op == "MatMulInteger" || op == "ConvInteger") set(0, kInt32);
    else if (op == "DequantizeLinear") set(0, kFloat);
    else if (op == "Where" && n.inputs.size() > 1) set(0, of(n.inputs[1]));
    else if (op == "TopK") set(0, first()), set(1, kInt64);
    else if (op == "Constant") {
      if (auto t = g.constant_tensor(n.outputs.empty() ? std::string() : n.outputs[0])) set(0, tensor_header(*t).data_type);
    } else if (kSameAsFirst.contains(op)) {
      for (size_t o = 0; o < n.outputs.size(); ++o) {
        if (o == 0 || op == "Split" || op == "SkipLayerNormalization") set(o, first());
      }
    }
  }

  std::map<std::string, int> types_;
};

// {name, type, shape} of a graph input or output.
json io_entry(std::string_view value_info) {
  json e = {{"name", ""}, {"type", 0}, {"shape", json::array()}};
  for (const auto& f : parse(value_info)) {
    if (f.number == kValueInfoName && f.wire == 2) e["name"] = std::string(f.bytes);
    if (f.number != kValueInfoType || f.wire != 2) continue;
    for (const auto& tf : parse(f.bytes)) {
      if (tf.number != kTypeTensor || tf.wire != 2) continue;
      for (const auto& ef : parse(tf.bytes)) {
        if (ef.number == kTensorTypeElem && ef.wire == 0) e["type"] = ef.varint;
        if (ef.number != kTensorTypeShape || ef.wire != 2) continue;
        for (const auto& df : parse(ef.bytes)) {
          if (df.number != kShapeDim || df.wire != 2) continue;
          std::int64_t d = -1;
          for (const auto& vf : parse(df.bytes)) {
            if (vf.number == kDimValue && vf.wire == 0) d = static_cast<std::int64_t>(vf.varint);
          }
          e["shape"].push_back(d);
        }
      }
    }
  }
  return e;
}

// A graph input or output field: the name and, when known, the element type (no shape).
std::string value_info_field(int field, const std::string& name, int type) {
  std::string vi;
  wire::write_len(vi, kValueInfoName, name);
  if (type != 0) {
    std::string tensor, t;
    wire::write_varint_field(tensor, kTensorTypeElem, static_cast<std::uint64_t>(type));
    wire::write_len(t, kTypeTensor, tensor);
    wire::write_len(vi, kValueInfoType, t);
  }
  std::string out;
  wire::write_len(out, field, vi);
  return out;
}

}  // namespace

std::string split_at_int8_linears(std::string_view model_bytes, SplitLinearsStats* stats) {
  SplitLinearsStats local;
  SplitLinearsStats& st = stats ? *stats : local;
  st = {};
  const auto model = parse(model_bytes);
  const Field& graph_field = wire::message_field(model, kModelGraph);
  const auto graph = parse(graph_field.bytes);
  const GraphView g(graph);
  const auto& nodes = g.nodes();

  std::vector<Linear> linears;
  std::map<int, size_t> linear_at;  // a pattern node's index -> its linear
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (linear_at.contains(static_cast<int>(i))) continue;
    if (auto l = match(g, static_cast<int>(i))) {
      for (int n : l->nodes) linear_at[n] = linears.size();
      linears.push_back(std::move(*l));
    }
  }
  if (linears.empty()) return {};
  auto refuse = [&](std::string why) {
    st = {};
    st.refused = std::move(why);
    return std::string();
  };

  std::map<std::string, std::string_view> inputs, outputs, initializers;
  std::vector<std::string> input_order, output_order;
  for (const auto& f : graph) {
    if (f.wire != 2) continue;
    if (f.number == kGraphInput || f.number == kGraphOutput) {
      const std::string name = io_entry(f.bytes)["name"];
      (f.number == kGraphInput ? inputs : outputs)[name] = f.whole;
      (f.number == kGraphInput ? input_order : output_order).push_back(name);
    } else if (f.number == kGraphInitializer) {
      std::string name;
      for (const auto& tf : parse(f.bytes)) {
        if (tf.number == kTensorName && tf.wire == 2) name = tf.bytes;
      }
      initializers[name] = f.whole;
    }
  }
  auto is_constant_node = [&](const Node* p) { return is_op(p, "Constant"); };

  // Levels: a node runs in the segment after the last linear it depends on.
  std::map<std::string, int> level;  // values made by nodes or linears
  std::vector<int> node_level(nodes.size(), -1);
  std::vector<std::set<std::string>> reads(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    if (auto it = linear_at.find(static_cast<int>(i)); it != linear_at.end()) {
      Linear& l = linears[it->second];
      if (l.first != static_cast<int>(i)) continue;
      int at = 0;
      for (const auto& o : l.quantizer->outputs) at = std::max(at, level.contains(o) ? level[o] : 0);
      l.level = at;
      level[l.output] = at + 1;
      continue;
    }
    for (const auto& in : n.inputs) {
      if (!in.empty()) reads[i].insert(in);
    }
    subgraph_reads(n, reads[i]);
    if (is_constant_node(&n)) continue;  // copied into every segment that reads it
    int at = 0;
    for (const auto& v : reads[i]) {
      if (auto it = level.find(v); it != level.end() && !(inputs.contains(v))) at = std::max(at, it->second);
    }
    node_level[i] = at;
    for (const auto& o : n.outputs) level[o] = at;
  }
  const int last = *std::max_element(node_level.begin(), node_level.end());
  const int levels = std::max(last, std::max_element(linears.begin(), linears.end(), [](auto& a, auto& b) { return a.level < b.level; })->level) + 1;

  // Who needs each value: segments (by level) and linears (their quantizer's outputs).
  std::map<std::string, std::set<int>> needed_in;  // value -> levels of the segments reading it
  std::set<std::string> needed_by_linear;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (node_level[i] < 0) continue;
    for (const auto& v : reads[i]) needed_in[v].insert(node_level[i]);
  }
  for (const auto& l : linears) {
    for (const auto& o : l.quantizer->outputs) needed_by_linear.insert(o);
  }
  std::map<std::string, int> made_in;  // value -> the level of the segment making it
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (node_level[i] < 0) continue;
    for (const auto& o : nodes[i].outputs) made_in[o] = node_level[i];
  }
  std::set<std::string> linear_outputs;
  for (const auto& l : linears) linear_outputs.insert(l.output);
  for (const auto& name : output_order) {
    if (!made_in.contains(name) && !linear_outputs.contains(name)) return refuse("a graph output '" + name + "' is no node's output");
  }

  const ElementTypes types(graph, g);
  std::string blobs;
  auto blob = [&](std::string_view bytes) {
    while (blobs.size() % 16) blobs.push_back('\0');
    json b = {{"offset", blobs.size()}, {"bytes", bytes.size()}};
    blobs.append(bytes);
    return b;
  };
  json steps = json::array();
  for (int s = 0; s < levels; ++s) {
    // The segment of level s.
    GraphPieces seg;
    std::string name_field;
    wire::write_len(name_field, kGraphName, "sam3_segment_" + std::to_string(s));
    seg.add(std::move(name_field));
    std::set<std::string> seg_inputs, seg_initializers, made_here;
    std::set<int> constants;
    std::vector<std::string> seg_outputs;
    bool any = false;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (node_level[i] != s) continue;
      any = true;
      for (const auto& v : reads[i]) {
        const Node* p = g.producer(v);
        if (initializers.contains(v)) seg_initializers.insert(v);  // (also when a graph input may override it: not fed)
        else if (inputs.contains(v)) seg_inputs.insert(v);
        else if (made_here.contains(v)) continue;
        else if (p && is_constant_node(p)) constants.insert(g.index(p));
        else if (made_in.contains(v) || linear_outputs.contains(v)) seg_inputs.insert(v);
        // else: a name the node's subgraph makes itself
      }
      for (const auto& o : nodes[i].outputs) made_here.insert(o);
    }
    if (any) {
      for (int c : constants) seg.copy(nodes[static_cast<size_t>(c)].field->whole);
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (node_level[i] == s) seg.copy(nodes[i].field->whole);
      }
      for (const auto& v : seg_initializers) seg.copy(initializers[v]);
      json in = json::array(), out = json::array();
      for (const auto& v : seg_inputs) {
        if (inputs.contains(v)) {
          seg.copy(inputs[v]);
        } else {
          const int t = types.of(v);
          if (t == 0) return refuse("the element type of '" + v + "' is not known");
          seg.add(value_info_field(kGraphInput, v, t));
        }
        in.push_back(v);
      }
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (node_level[i] != s) continue;
        for (const auto& o : nodes[i].outputs) {
          if (o.empty()) continue;
          const auto& users = needed_in[o];
          const bool elsewhere = std::any_of(users.begin(), users.end(), [&](int l) { return l != s; });
          if (elsewhere || needed_by_linear.contains(o) || outputs.contains(o)) seg_outputs.push_back(o);
        }
      }
      for (const auto& o : seg_outputs) {
        seg.add(value_info_field(kGraphOutput, o, types.of(o)));
        out.push_back(o);
      }
      const std::string bytes = model_with_graph(model_bytes, model, graph_field, seg);
      json b = blob(bytes);
      steps.push_back({{"segment", {{"offset", b["offset"]}, {"bytes", b["bytes"]}, {"inputs", in}, {"outputs", out}}}});
      ++st.segments;
    }
    for (const auto& l : linears) {
      if (l.level != s) continue;
      json lj = {{"x", l.quantizer->outputs[0]}, {"scale", l.quantizer->outputs[1]}, {"zero_point", l.quantizer->outputs[2]},
                 {"output", l.output}, {"k", l.k}, {"n", l.n}, {"signed", l.is_signed}, {"weight", blob(l.weight)},
                 {"w_zero_point", l.w_zero_point.empty() ? json(nullptr) : blob(l.w_zero_point)}, {"w_scale", blob(l.w_scale)},
                 {"bias", l.bias.empty() ? json(nullptr) : blob(l.bias)}};
      steps.push_back({{"linear", lj}});
      ++st.linears;
    }
  }
  json header = {{"version", 1}, {"inputs", json::array()}, {"outputs", json::array()}, {"steps", steps}};
  for (const auto& n : input_order) {
    if (!initializers.contains(n)) header["inputs"].push_back(io_entry(parse(inputs[n])[0].bytes));
  }
  for (const auto& n : output_order) header["outputs"].push_back(io_entry(parse(outputs[n])[0].bytes));
  const std::string text = header.dump();
  std::string out(kSplitBundleMagic);
  const auto length = static_cast<std::uint32_t>(text.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((length >> (8 * i)) & 0xFF));
  out += text;
  while (out.size() % 16) out.push_back(' ');
  out += blobs;
  return out;
}

}  // namespace sam3::optimize
