#include "optimize/onnx_split_graph.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "optimize/graph_pieces.h"
#include "optimize/onnx_fields.h"
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
constexpr int kAttrG = 6, kAttrGraphs = 11;
constexpr int kInt32 = 6, kBool = 9;

// Every value name a node's subgraphs read (Loop and If bodies read outer values by name).
void subgraph_reads(const Node& n, std::set<std::string>& out) {
  for (const auto& a : n.attributes) {
    for (const auto& af : parse(a.bytes)) {
      if ((af.number != kAttrG && af.number != kAttrGraphs) || af.wire != 2) continue;
      for (const auto& gf : parse(af.bytes)) {
        if (gf.number != kGraphNode || gf.wire != 2) continue;
        Node inner;
        for (const auto& nf : parse(gf.bytes)) {
          if (nf.number == kNodeInput && nf.wire == 2)
            out.emplace(nf.bytes);
          else if (nf.number == kNodeAttribute && nf.wire == 2)
            inner.attributes.push_back(nf);
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
    static const std::set<std::string> kSameAsFirst = {"Add",
                                                       "Sub",
                                                       "Mul",
                                                       "Div",
                                                       "Pow",
                                                       "Sqrt",
                                                       "Exp",
                                                       "Log",
                                                       "Neg",
                                                       "Abs",
                                                       "Relu",
                                                       "Sigmoid",
                                                       "Tanh",
                                                       "Erf",
                                                       "Softmax",
                                                       "LayerNormalization",
                                                       "ReduceMean",
                                                       "ReduceSum",
                                                       "ReduceMax",
                                                       "ReduceMin",
                                                       "ReduceProd",
                                                       "ReduceL2",
                                                       "Clip",
                                                       "Min",
                                                       "Max",
                                                       "MatMul",
                                                       "Gemm",
                                                       "Conv",
                                                       "ConvTranspose",
                                                       "Floor",
                                                       "Ceil",
                                                       "Round",
                                                       "Sin",
                                                       "Cos",
                                                       "Reciprocal",
                                                       "Gelu",
                                                       "FastGelu",
                                                       "BiasGelu",
                                                       "SkipLayerNormalization",
                                                       "MultiHeadAttention",
                                                       "Attention",
                                                       "Einsum",
                                                       "Mod",
                                                       "Trilu",
                                                       "CumSum",
                                                       "InstanceNormalization",
                                                       "BatchNormalization",
                                                       "GroupNormalization",
                                                       "HardSigmoid",
                                                       "HardSwish",
                                                       "LeakyRelu",
                                                       "Elu",
                                                       "Selu",
                                                       "Softplus",
                                                       "PRelu",
                                                       "AveragePool",
                                                       "MaxPool",
                                                       "GlobalAveragePool",
                                                       "DepthToSpace",
                                                       "SpaceToDepth",
                                                       "ScatterND",
                                                       "ScatterElements",
                                                       "Sign",
                                                       "Dropout",
                                                       "Gather",
                                                       "GatherElements",
                                                       "GatherND",
                                                       "Reshape",
                                                       "Transpose",
                                                       "Squeeze",
                                                       "Unsqueeze",
                                                       "Slice",
                                                       "Concat",
                                                       "Split",
                                                       "Expand",
                                                       "Tile",
                                                       "Pad",
                                                       "Flatten",
                                                       "Identity",
                                                       "Resize",
                                                       "Range",
                                                       "MatMulNBits",
                                                       "RotaryEmbedding",
                                                       "SimplifiedLayerNormalization",
                                                       "FusedMatMul",
                                                       "BiasAdd",
                                                       "QuickGelu"};
    static const std::set<std::string> kBoolean = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not",
                                                   "And",   "Or",   "Xor",     "IsNaN",       "IsInf"};
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
    if (op == "Loop") {
      loop(n);
      return;
    }
    if (op == "Shape" || op == "Size" || op == "NonZero" || op == "ArgMax" || op == "ArgMin")
      set(0, kInt64);
    else if (op == "Cast")
      set(0, static_cast<int>(int_attribute(n, "to").value_or(0)));
    else if (op == "CastLike" && n.inputs.size() > 1)
      set(0, of(n.inputs[1]));
    else if (kBoolean.contains(op))
      set(0, kBool);
    else if (op == "DynamicQuantizeLinear")
      set(0, kUint8), set(1, kFloat), set(2, kUint8);
    else if (op == "MatMulInteger" || op == "ConvInteger")
      set(0, kInt32);
    else if (op == "DequantizeLinear")
      set(0, kFloat);
    else if (op == "Where" && n.inputs.size() > 1)
      set(0, of(n.inputs[1]));
    else if (op == "TopK")
      set(0, first()), set(1, kInt64);
    else if (op == "Constant") {
      if (auto t = g.constant_tensor(n.outputs.empty() ? std::string() : n.outputs[0])) set(0, tensor_header(*t).data_type);
    } else if (kSameAsFirst.contains(op)) {
      for (size_t o = 0; o < n.outputs.size(); ++o) {
        if (o == 0 || op == "Split" || op == "SkipLayerNormalization") set(o, first());
      }
    }
  }

  // A Loop's outputs (its body's outputs after the condition): their declared types, else what
  // the body's nodes make of the types they read (the attention chunks' Loop, onnx_attention_chunks.h,
  // declares none).
  void loop(const Node& n) {
    for (const auto& a : n.attributes) {
      std::string_view name, body;
      for (const auto& af : parse(a.bytes)) {
        if (af.number == kAttrName && af.wire == 2) name = af.bytes;
        if (af.number == kAttrG && af.wire == 2) body = af.bytes;
      }
      if (name != "body" || body.empty()) continue;
      const auto fields = parse(body);
      std::vector<std::string> outs;
      for (const auto& f : fields) {
        if (f.wire != 2 || (f.number != kGraphInput && f.number != kGraphOutput && f.number != kGraphValueInfo)) continue;
        declare(f.bytes);
        if (f.number == kGraphOutput) {
          for (const auto& vf : parse(f.bytes)) {
            if (vf.number == kValueInfoName && vf.wire == 2) outs.emplace_back(vf.bytes);
          }
        }
      }
      const GraphView inner(fields);
      for (const auto& bn : inner.nodes()) infer(bn, inner);
      for (size_t o = 0; o < n.outputs.size() && o + 1 < outs.size(); ++o) {
        if (!n.outputs[o].empty() && !types_.contains(n.outputs[o]) && of(outs[o + 1]) != 0) types_[n.outputs[o]] = of(outs[o + 1]);
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

std::string split_graph(std::string_view model_bytes, const std::vector<KernelMatcher>& matchers, SplitStats* stats) {
  SplitStats local;
  SplitStats& st = stats ? *stats : local;
  st = {};
  const auto model = parse(model_bytes);
  const Field& graph_field = wire::message_field(model, kModelGraph);
  const auto graph = parse(graph_field.bytes);
  const GraphView g(graph);
  const auto& nodes = g.nodes();

  std::vector<KernelStep> kernels;
  for (const auto& m : matchers) m(g, kernels);
  std::map<int, size_t> kernel_at;  // a pattern node's index -> its step
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (int n : kernels[k].nodes) kernel_at[n] = k;
  }
  if (kernels.empty()) return {};
  std::vector<int> kernel_level(kernels.size(), 0);
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

  // Levels: a node runs in the segment after the last kernel step it depends on.
  std::map<std::string, int> level;  // values made by nodes or kernel steps
  std::vector<int> node_level(nodes.size(), -1);
  std::vector<std::set<std::string>> reads(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    if (auto it = kernel_at.find(static_cast<int>(i)); it != kernel_at.end()) {
      const KernelStep& k = kernels[it->second];
      if (k.first != static_cast<int>(i)) continue;
      int at = 0;
      for (const auto& v : k.inputs) at = std::max(at, level.contains(v) && !inputs.contains(v) ? level[v] : 0);
      kernel_level[it->second] = at;
      level[k.output] = at + 1;
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
  const int levels = std::max(last, *std::max_element(kernel_level.begin(), kernel_level.end())) + 1;
  const ElementTypes types(graph, g);

  // Then each node as late as its readers allow: in the segment of its first reader, or the one
  // before the first kernel step reading it. A value made in one segment and read in a later one
  // leaves ONNX Runtime Web as a new JavaScript array (fresh memory, first touched on every run:
  // docs/browser.md, "What a segment costs"), so only what a kernel step reads (and the graph's
  // outputs) should cross: the decoder's upscaling, computed from the image embeddings in the
  // segment after the transformer's first products, carried its 10.6 MB output to the last one.
  // Nodes making only integer or boolean values (shapes, indices: small) stay where they are,
  // so that a Shape of a large value does not hold that value back in an early segment; so do
  // nodes making a graph output (it leaves ONNX Runtime wherever it is made, and made late it
  // would have its inputs carried there).
  {
    std::map<std::string, std::vector<int>> node_readers;  // value -> the nodes reading it
    std::map<std::string, int> kernel_reader;              // value -> the level of the first kernel step reading it
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (node_level[i] < 0) continue;
      for (const auto& v : reads[i]) node_readers[v].push_back(static_cast<int>(i));
    }
    for (size_t k = 0; k < kernels.size(); ++k) {
      for (const auto& v : kernels[k].inputs) {
        auto [it, fresh] = kernel_reader.emplace(v, kernel_level[k]);
        if (!fresh) it->second = std::min(it->second, kernel_level[k]);
      }
    }
    auto small = [&](const std::string& v) {
      const int t = types.of(v);
      return t == kInt64 || t == kInt32 || t == kBool;
    };
    for (size_t i = nodes.size(); i-- > 0;) {
      if (node_level[i] < 0) continue;
      const auto& outs = nodes[i].outputs;
      if (std::all_of(outs.begin(), outs.end(), [&](const std::string& o) { return o.empty() || small(o); })) continue;
      int late = levels;
      for (const auto& o : outs) {
        if (o.empty()) continue;
        if (outputs.contains(o)) late = std::min(late, node_level[i]);  // (leaves ONNX Runtime wherever it is made)
        if (auto it = kernel_reader.find(o); it != kernel_reader.end()) late = std::min(late, it->second);
        if (auto it = node_readers.find(o); it != node_readers.end()) {
          for (int j : it->second) late = std::min(late, node_level[static_cast<size_t>(j)]);
        }
      }
      if (late < levels) node_level[i] = std::max(node_level[i], late);
    }
  }

  // Who needs each value: segments (by level) and kernel steps.
  std::map<std::string, std::set<int>> needed_in;  // value -> levels of the segments reading it
  std::set<std::string> needed_by_kernel;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (node_level[i] < 0) continue;
    for (const auto& v : reads[i]) needed_in[v].insert(node_level[i]);
  }
  for (const auto& k : kernels) needed_by_kernel.insert(k.inputs.begin(), k.inputs.end());
  std::map<std::string, int> made_in;  // value -> the level of the segment making it
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (node_level[i] < 0) continue;
    for (const auto& o : nodes[i].outputs) made_in[o] = node_level[i];
  }
  std::set<std::string> kernel_outputs;
  for (const auto& k : kernels) kernel_outputs.insert(k.output);
  for (const auto& name : output_order) {
    if (!made_in.contains(name) && !kernel_outputs.contains(name)) return refuse("a graph output '" + name + "' is no node's output");
  }
  for (const auto& k : kernels) {
    for (const auto& v : k.inputs) {
      if (!made_in.contains(v) && !inputs.contains(v) && !kernel_outputs.contains(v))
        return refuse("a kernel's input '" + v + "' is no node's output");
    }
  }

  std::string blobs;
  // Blobs written, by their bytes' hash -> their offsets: steps sharing a constant share its blob
  // (compared with what `blobs` holds, which outlives every step's and segment's own bytes).
  std::unordered_multimap<size_t, size_t> written;
  auto blob = [&](std::string_view bytes) {
    const size_t hash = std::hash<std::string_view>{}(bytes);
    for (auto [it, end] = written.equal_range(hash); it != end; ++it) {
      if (std::string_view(blobs).substr(it->second, bytes.size()) == bytes) return json{{"offset", it->second}, {"bytes", bytes.size()}};
    }
    while (blobs.size() % 16) blobs.push_back('\0');
    json b = {{"offset", blobs.size()}, {"bytes", bytes.size()}};
    written.emplace(hash, blobs.size());
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
        if (initializers.contains(v))
          seg_initializers.insert(v);  // (also when a graph input may override it: not fed)
        else if (inputs.contains(v))
          seg_inputs.insert(v);
        else if (made_here.contains(v))
          continue;
        else if (p && is_constant_node(p))
          constants.insert(g.index(p));
        else if (made_in.contains(v) || kernel_outputs.contains(v))
          seg_inputs.insert(v);
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
          if (elsewhere || needed_by_kernel.contains(o) || outputs.contains(o)) seg_outputs.push_back(o);
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
    for (size_t k = 0; k < kernels.size(); ++k) {
      if (kernel_level[k] != s) continue;
      json fields = kernels[k].fields;
      fields["output"] = kernels[k].output;
      for (const auto& [name, bytes] : kernels[k].blobs) fields[name] = bytes.empty() ? json(nullptr) : blob(bytes);
      steps.push_back({{kernels[k].kind, fields}});
      ++st.kernel_steps[kernels[k].kind];
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
