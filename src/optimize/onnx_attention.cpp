#include "optimize/onnx_attention.h"

#include <bit>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "optimize/protobuf_wire.h"

namespace sam3::optimize {
namespace {

using wire::Field;
using wire::parse;

// Field numbers from onnx.proto.
constexpr int kModelGraph = 7, kModelOpsetImport = 8;
constexpr int kOpsetDomain = 1, kOpsetVersion = 2;
constexpr int kGraphNode = 1, kGraphInitializer = 5, kGraphInput = 11, kGraphOutput = 12;
constexpr int kValueInfoName = 1;
constexpr int kNodeInput = 1, kNodeOutput = 2, kNodeName = 3, kNodeOpType = 4, kNodeAttribute = 5, kNodeDomain = 7;
constexpr int kAttrName = 1, kAttrF = 2, kAttrI = 3, kAttrT = 5, kAttrInts = 8, kAttrType = 20;
constexpr int kAttrTypeFloat = 1, kAttrTypeInt = 2, kAttrTypeInts = 7;
constexpr int kTensorDims = 1, kTensorDataType = 2, kTensorFloatData = 4, kTensorInt64Data = 7, kTensorName = 8,
              kTensorRawData = 9, kTensorDataLocation = 14;
constexpr int kFloat = 1, kInt64 = 7;

struct Node {
  const Field* field = nullptr;
  std::string op, domain;
  std::vector<std::string> inputs, outputs;
  std::vector<Field> attributes;  // AttributeProto messages
};

Node read_node(const Field& f) {
  Node n;
  n.field = &f;
  for (const auto& nf : parse(f.bytes)) {
    if (nf.wire != 2) continue;
    if (nf.number == kNodeInput) n.inputs.emplace_back(nf.bytes);
    else if (nf.number == kNodeOutput) n.outputs.emplace_back(nf.bytes);
    else if (nf.number == kNodeOpType) n.op = nf.bytes;
    else if (nf.number == kNodeDomain) n.domain = nf.bytes;
    else if (nf.number == kNodeAttribute) n.attributes.push_back(nf);
  }
  if (n.domain == "ai.onnx") n.domain.clear();
  return n;
}

const Field* attribute(const Node& n, std::string_view name, std::vector<Field>& storage) {
  for (const auto& a : n.attributes) {
    storage = parse(a.bytes);
    for (const auto& f : storage) {
      if (f.number == kAttrName && f.wire == 2 && f.bytes == name) return &a;
    }
  }
  return nullptr;
}

std::optional<std::int64_t> int_attribute(const Node& n, std::string_view name) {
  std::vector<Field> fields;
  if (!attribute(n, name, fields)) return std::nullopt;
  for (const auto& f : fields) {
    if (f.number == kAttrI && f.wire == 0) return static_cast<std::int64_t>(f.varint);
  }
  return std::nullopt;
}

std::vector<std::int64_t> ints_attribute(const Node& n, std::string_view name) {
  std::vector<Field> fields;
  std::vector<std::int64_t> out;
  if (!attribute(n, name, fields)) return out;
  for (const auto& f : fields) {
    if (f.number != kAttrInts) continue;
    if (f.wire == 0) {
      out.push_back(static_cast<std::int64_t>(f.varint));
    } else if (f.wire == 2) {
      size_t p = 0;
      while (p < f.bytes.size()) out.push_back(static_cast<std::int64_t>(wire::read_varint(f.bytes, p)));
    }
  }
  return out;
}

float float_from_le(std::string_view b) {
  std::uint32_t u = 0;
  for (int i = 3; i >= 0; --i) u = (u << 8) | static_cast<std::uint8_t>(b[static_cast<size_t>(i)]);
  return std::bit_cast<float>(u);
}

// The value of a float TensorProto with exactly one element stored in the file.
std::optional<float> scalar_tensor(std::string_view tensor) {
  std::int64_t elements = 1;
  int type = 0;
  std::optional<float> value;
  for (const auto& f : parse(tensor)) {
    if (f.number == kTensorDims) {
      if (f.wire == 0) {
        elements *= static_cast<std::int64_t>(f.varint);
      } else if (f.wire == 2) {
        size_t p = 0;
        while (p < f.bytes.size()) elements *= static_cast<std::int64_t>(wire::read_varint(f.bytes, p));
      }
    } else if (f.number == kTensorDataType && f.wire == 0) {
      type = static_cast<int>(f.varint);
    } else if (f.number == kTensorDataLocation && f.wire == 0 && f.varint == 1) {
      return std::nullopt;  // external data
    } else if ((f.number == kTensorRawData || f.number == kTensorFloatData) && f.wire == 2 && f.bytes.size() == 4) {
      value = float_from_le(f.bytes);
    } else if (f.number == kTensorFloatData && f.wire == 5) {
      value = float_from_le(f.bytes);
    }
  }
  if (type != kFloat || elements != 1) return std::nullopt;
  return value;
}

// The value of an int64 TensorProto with exactly one element stored in the file.
std::optional<std::int64_t> int64_scalar_tensor(std::string_view tensor) {
  std::int64_t elements = 1;
  int type = 0;
  std::optional<std::int64_t> value;
  for (const auto& f : parse(tensor)) {
    if (f.number == kTensorDims && f.wire == 0) {
      elements *= static_cast<std::int64_t>(f.varint);
    } else if (f.number == kTensorDataType && f.wire == 0) {
      type = static_cast<int>(f.varint);
    } else if (f.number == kTensorRawData && f.wire == 2 && f.bytes.size() == 8) {
      std::uint64_t u = 0;
      for (int i = 7; i >= 0; --i) u = (u << 8) | static_cast<std::uint8_t>(f.bytes[static_cast<size_t>(i)]);
      value = static_cast<std::int64_t>(u);
    } else if (f.number == kTensorInt64Data && f.wire == 0) {
      value = static_cast<std::int64_t>(f.varint);
    } else if (f.number == kTensorInt64Data && f.wire == 2) {
      size_t p = 0;
      value = static_cast<std::int64_t>(wire::read_varint(f.bytes, p));
      if (p != f.bytes.size()) return std::nullopt;
    }
  }
  if (type != kInt64 || elements != 1) return std::nullopt;
  return value;
}

// ---- writing new nodes and tensors --------------------------------------------------------
std::string int_attr(std::string_view name, std::int64_t v) {
  std::string a;
  wire::write_len(a, kAttrName, name);
  wire::write_varint_field(a, kAttrI, static_cast<std::uint64_t>(v));
  wire::write_varint_field(a, kAttrType, kAttrTypeInt);
  return a;
}

std::string float_attr(std::string_view name, float v) {
  std::string a;
  wire::write_len(a, kAttrName, name);
  wire::write_fixed32_field(a, kAttrF, std::bit_cast<std::uint32_t>(v));
  wire::write_varint_field(a, kAttrType, kAttrTypeFloat);
  return a;
}

std::string node(std::string_view op, const std::vector<std::string>& inputs, const std::string& output,
                 const std::vector<std::string>& attributes = {}, std::string_view domain = {}) {
  std::string n;
  for (const auto& i : inputs) wire::write_len(n, kNodeInput, i);
  wire::write_len(n, kNodeOutput, output);
  wire::write_len(n, kNodeName, output);
  wire::write_len(n, kNodeOpType, op);
  for (const auto& a : attributes) wire::write_len(n, kNodeAttribute, a);
  if (!domain.empty()) wire::write_len(n, kNodeDomain, domain);
  std::string field;
  wire::write_len(field, kGraphNode, n);
  return field;
}

std::string int64_vector_initializer(const std::string& name, std::int64_t value) {
  std::string t;
  wire::write_varint_field(t, kTensorDims, 1);
  wire::write_varint_field(t, kTensorDataType, kInt64);
  wire::write_len(t, kTensorName, name);
  std::string raw;
  for (int i = 0; i < 8; ++i) raw.push_back(static_cast<char>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xFF));
  wire::write_len(t, kTensorRawData, raw);
  std::string field;
  wire::write_len(field, kGraphInitializer, t);
  return field;
}

// ---- the graph ------------------------------------------------------------------------------
class Graph {
 public:
  explicit Graph(const std::vector<Field>& fields) {
    for (const auto& f : fields) {
      if (f.wire != 2) continue;
      if (f.number == kGraphNode) nodes_.push_back(read_node(f));
      else if (f.number == kGraphInitializer) read_initializer(f.bytes);
      else if (f.number == kGraphInput || f.number == kGraphOutput) read_value_info(f);
    }
    for (size_t i = 0; i < nodes_.size(); ++i) {
      by_field_[nodes_[i].field] = static_cast<int>(i);
      for (const auto& in : nodes_[i].inputs) {
        if (!in.empty()) consumers_[in].push_back(static_cast<int>(i));
      }
      for (const auto& out : nodes_[i].outputs) {
        producer_[out] = static_cast<int>(i);
        names_.insert(out);
      }
    }
  }

  const std::vector<Node>& nodes() const { return nodes_; }
  const Node* node_of(const Field& f) const {
    auto it = by_field_.find(&f);
    return it == by_field_.end() ? nullptr : &nodes_[static_cast<size_t>(it->second)];
  }
  const Node* producer(const std::string& tensor) const {
    auto it = producer_.find(tensor);
    return it == producer_.end() ? nullptr : &nodes_[static_cast<size_t>(it->second)];
  }
  int index(const Node* n) const { return static_cast<int>(n - nodes_.data()); }
  // Node indices that read `tensor`; a graph output counts as an outside reader (-1).
  std::vector<int> readers(const std::string& tensor) const {
    auto it = consumers_.find(tensor);
    std::vector<int> r = it == consumers_.end() ? std::vector<int>{} : it->second;
    if (graph_outputs_.contains(tensor)) r.push_back(-1);
    return r;
  }
  bool only_reader(const std::string& tensor, const Node* reader) const {
    const auto r = readers(tensor);
    return r.size() == 1 && r[0] == index(reader);
  }
  bool name_taken(std::string_view prefix) const {
    auto it = names_.lower_bound(std::string(prefix));
    return it != names_.end() && it->compare(0, prefix.size(), prefix) == 0;
  }

  std::optional<float> scalar_constant(const std::string& tensor) const {
    if (auto t = constant_tensor(tensor)) return scalar_tensor(*t);
    const Node* p = producer(tensor);
    if (!p || p->op != "Constant" || !p->domain.empty()) return std::nullopt;
    for (const auto& a : p->attributes) {
      std::string_view name;
      std::optional<float> v;
      for (const auto& f : parse(a.bytes)) {
        if (f.number == kAttrName && f.wire == 2) name = f.bytes;
        else if (f.number == kAttrF && f.wire == 5) v = float_from_le(f.bytes);
      }
      if (name == "value_float") return v;
    }
    return std::nullopt;
  }
  std::optional<std::int64_t> int64_constant(const std::string& tensor) const {
    auto t = constant_tensor(tensor);
    return t ? int64_scalar_tensor(*t) : std::nullopt;
  }

 private:
  // The TensorProto of an initializer (not overridable as a graph input) or a Constant node's
  // `value`.
  std::optional<std::string_view> constant_tensor(const std::string& tensor) const {
    if (graph_inputs_.contains(tensor)) return std::nullopt;
    if (auto it = initializers_.find(tensor); it != initializers_.end()) return it->second;
    const Node* p = producer(tensor);
    if (!p || p->op != "Constant" || !p->domain.empty()) return std::nullopt;
    for (const auto& a : p->attributes) {
      std::string_view name, value;
      for (const auto& f : parse(a.bytes)) {
        if (f.number == kAttrName && f.wire == 2) name = f.bytes;
        else if (f.number == kAttrT && f.wire == 2) value = f.bytes;
      }
      if (name == "value" && !value.empty()) return value;
    }
    return std::nullopt;
  }
  void read_initializer(std::string_view tensor) {
    std::string name;
    for (const auto& f : parse(tensor)) {
      if (f.number == kTensorName && f.wire == 2) name = f.bytes;
    }
    names_.insert(name);
    initializers_[name] = tensor;
  }
  void read_value_info(const Field& f) {
    for (const auto& vf : parse(f.bytes)) {
      if (vf.number != kValueInfoName || vf.wire != 2) continue;
      names_.insert(std::string(vf.bytes));
      (f.number == kGraphInput ? graph_inputs_ : graph_outputs_).insert(std::string(vf.bytes));
    }
  }

  std::vector<Node> nodes_;
  std::map<std::string, std::vector<int>> consumers_;
  std::map<std::string, int> producer_;
  std::map<const Field*, int> by_field_;
  std::map<std::string, std::string_view> initializers_;
  std::set<std::string> graph_inputs_, graph_outputs_, names_;
};

// ---- matching ---------------------------------------------------------------------------------
// The scale applied to the scores: constant factors, and factors sqrt(1 / sqrt(d)) with d the
// last dimension of a tensor, as PyTorch's export of scaled_dot_product_attention computes
// its default scale (once on Q, once on K^T).
struct Scale {
  float constant = 1.0f;
  std::vector<std::string> sdpa_halves;  // per such factor: the tensor whose last dimension is d
};

struct Match {
  std::string q, k, v, output;
  int rank = 0;  // 4: [batch, heads, tokens, head size]; 3: [batch * heads, tokens, head size]
  Scale scale;
  float mha_scale = 0.0f;  // MultiHeadAttention's attribute; 0: 1 / sqrt(head size)
  std::vector<const Node*> core;       // replaced: both MatMuls, the scaling, the Softmax
  std::vector<const Node*> periphery;  // removed too when nothing else reads them
  const Node* last = nullptr;          // the second MatMul: the fused nodes go where it was
};

bool plain(const Node* n, std::string_view op) { return n && n->op == op && n->domain.empty(); }

// Follows `tensor` through the producer `op` (and an optional Cast before it): the producer.
const Node* through(const Graph& g, const std::string& tensor, std::string_view op, std::vector<const Node*>& nodes) {
  const Node* p = g.producer(tensor);
  if (plain(p, "Cast") && p->inputs.size() == 1) {
    nodes.push_back(p);
    p = g.producer(p->inputs[0]);
  }
  if (!plain(p, op)) return nullptr;
  nodes.push_back(p);
  return p;
}

// `tensor` = Sqrt(Cast?(Div(1, Sqrt(Cast(Slice(Shape(x), [-1], [big])))))): PyTorch's SDPA
// export of sqrt(default scale). Returns x and records the nodes.
std::optional<std::string> sdpa_half_scale(const Graph& g, const std::string& tensor, std::vector<const Node*>& nodes) {
  const Node* sqrt = through(g, tensor, "Sqrt", nodes);
  const Node* div = sqrt ? through(g, sqrt->inputs[0], "Div", nodes) : nullptr;
  if (!div || div->inputs.size() != 2 || g.scalar_constant(div->inputs[0]) != 1.0f) return std::nullopt;
  const Node* root = through(g, div->inputs[1], "Sqrt", nodes);
  const Node* slice = root ? through(g, root->inputs[0], "Slice", nodes) : nullptr;
  if (!slice || slice->inputs.size() < 3 || slice->inputs.size() > 4) return std::nullopt;
  if (g.int64_constant(slice->inputs[1]) != -1 || g.int64_constant(slice->inputs[2]).value_or(0) < (1LL << 31)) return std::nullopt;
  if (slice->inputs.size() == 4 && g.int64_constant(slice->inputs[3]).value_or(-1) != 0) return std::nullopt;
  const Node* shape = g.producer(slice->inputs[0]);
  if (!plain(shape, "Shape") || shape->inputs.size() != 1 || !shape->attributes.empty()) return std::nullopt;
  nodes.push_back(shape);
  return shape->inputs[0];
}

// `tensor` = Mul(x, c), Mul(c, x) or Div(x, c) with a scalar constant c or an SDPA half
// scale: returns x, folds c into `scale`, and records the nodes.
std::optional<std::string> peel_scale(const Graph& g, const std::string& tensor, Scale& scale,
                                      std::vector<const Node*>& nodes) {
  const Node* p = g.producer(tensor);
  if (!p || p->inputs.size() != 2 || !(plain(p, "Mul") || plain(p, "Div"))) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    if (p->op == "Div" && i == 0) continue;  // c / x is not a scaling
    const std::string& factor = p->inputs[static_cast<size_t>(i)];
    std::vector<const Node*> chain;
    if (auto c = g.scalar_constant(factor)) {
      if (*c == 0.0f) return std::nullopt;
      scale.constant *= p->op == "Div" ? 1.0f / *c : *c;
    } else if (auto of = p->op == "Mul" ? sdpa_half_scale(g, factor, chain) : std::nullopt) {
      scale.sdpa_halves.push_back(*of);
    } else {
      continue;
    }
    nodes.push_back(p);  // first: the scaling node itself
    nodes.insert(nodes.end(), chain.begin(), chain.end());
    return p->inputs[static_cast<size_t>(1 - i)];
  }
  return std::nullopt;
}

// Peels scalings off `tensor` (at most two, as exports write them) into `scale`.
std::string peel_scales(const Graph& g, std::string tensor, Scale& scale, std::vector<const Node*>& periphery) {
  for (int i = 0; i < 2; ++i) {
    std::vector<const Node*> nodes;
    auto inner = peel_scale(g, tensor, scale, nodes);
    if (!inner) break;
    periphery.insert(periphery.end(), nodes.begin(), nodes.end());
    tensor = *inner;
  }
  return tensor;
}

bool swaps_last_two(const std::vector<std::int64_t>& perm) {
  const size_t r = perm.size();
  if (r != 3 && r != 4) return false;
  for (size_t i = 0; i + 2 < r; ++i) {
    if (perm[i] != static_cast<std::int64_t>(i)) return false;
  }
  return perm[r - 2] == static_cast<std::int64_t>(r - 1) && perm[r - 1] == static_cast<std::int64_t>(r - 2);
}

std::optional<Match> match_at(const Graph& g, const Node& softmax) {
  if (!plain(&softmax, "Softmax") || softmax.inputs.size() != 1 || softmax.outputs.size() != 1) return std::nullopt;
  Match m;
  // Softmax -> MatMul(probabilities, V), read by nothing else.
  const auto readers = g.readers(softmax.outputs[0]);
  if (readers.size() != 1 || readers[0] < 0) return std::nullopt;
  const Node& second = g.nodes()[static_cast<size_t>(readers[0])];
  if (!plain(&second, "MatMul") || second.inputs.size() != 2 || second.inputs[0] != softmax.outputs[0] ||
      second.inputs[1] == softmax.outputs[0]) {
    return std::nullopt;
  }
  m.v = second.inputs[1];
  m.output = second.outputs[0];
  m.last = &second;
  m.core = {&softmax, &second};
  // Scores: MatMul, optionally scaled, read only by this chain.
  std::string scores = softmax.inputs[0];
  if (!g.only_reader(scores, &softmax)) return std::nullopt;
  std::vector<const Node*> scaling;
  if (auto inner = peel_scale(g, scores, m.scale, scaling)) {
    if (!g.only_reader(*inner, scaling.front())) return std::nullopt;
    m.core.push_back(scaling.front());
    m.periphery.insert(m.periphery.end(), scaling.begin() + 1, scaling.end());
    scores = *inner;
  }
  const Node* first = g.producer(scores);
  if (!plain(first, "MatMul") || first->inputs.size() != 2) return std::nullopt;
  m.core.push_back(first);
  // Q side: scalings; K side: scalings, the transpose of the last two axes, scalings.
  m.q = peel_scales(g, first->inputs[0], m.scale, m.periphery);
  const std::string kt = peel_scales(g, first->inputs[1], m.scale, m.periphery);
  const Node* transpose = g.producer(kt);
  if (!plain(transpose, "Transpose") || transpose->inputs.size() != 1) return std::nullopt;
  const auto perm = ints_attribute(*transpose, "perm");
  if (!swaps_last_two(perm)) return std::nullopt;
  m.rank = static_cast<int>(perm.size());
  m.periphery.push_back(transpose);
  m.k = peel_scales(g, transpose->inputs[0], m.scale, m.periphery);
  const auto axis = int_attribute(softmax, "axis").value_or(-1);
  if (axis != -1 && axis != m.rank - 1) return std::nullopt;
  // PyTorch's default scale, half on Q and half on K^T: MultiHeadAttention's own default.
  if (m.scale.sdpa_halves.empty()) {
    m.mha_scale = m.scale.constant;
  } else if (m.scale.sdpa_halves != std::vector<std::string>{m.q, m.q} || m.scale.constant != 1.0f) {
    return std::nullopt;
  }
  return m;
}

// ---- rewriting ------------------------------------------------------------------------------
struct Names {
  std::string prefix;
  std::string c0, c2, c3, c4, cm1;
};

// Nodes computing x reshaped from [B, H, T, D] to [B * H, T, D]; returns the new name.
std::string flatten_heads(const Names& n, const std::string& x, const std::string& tag, std::string& out,
                          std::string* shape_name = nullptr) {
  const std::string shape = n.prefix + tag + "_shape";
  out += node("Shape", {x}, shape);
  out += node("Slice", {shape, n.c2, n.c4, n.c0}, n.prefix + tag + "_tail");
  out += node("Concat", {n.cm1, n.prefix + tag + "_tail"}, n.prefix + tag + "_flat_shape", {int_attr("axis", 0)});
  out += node("Reshape", {x, n.prefix + tag + "_flat_shape"}, n.prefix + tag + "_flat");
  if (shape_name) *shape_name = shape;
  return n.prefix + tag + "_flat";
}

std::string fused_nodes(const Names& base, const Match& m, int index) {
  Names n = base;
  n.prefix = base.prefix + std::to_string(index) + "_";
  std::string out;
  std::vector<std::string> attrs = {int_attr("num_heads", 1)};
  if (m.mha_scale != 0.0f) attrs.push_back(float_attr("scale", m.mha_scale));
  if (m.rank == 3) {
    out += node("MultiHeadAttention", {m.q, m.k, m.v}, m.output, attrs, "com.microsoft");
    return out;
  }
  std::string q_shape;
  const std::string q = flatten_heads(n, m.q, "q", out, &q_shape);
  const std::string k = flatten_heads(n, m.k, "k", out);
  const std::string v = flatten_heads(n, m.v, "v", out);
  out += node("MultiHeadAttention", {q, k, v}, n.prefix + "mha", attrs, "com.microsoft");
  // Back to [B, H, T, Dv]: Q's first three dimensions, then whatever is left.
  out += node("Slice", {q_shape, n.c0, n.c3, n.c0}, n.prefix + "head");
  out += node("Concat", {n.prefix + "head", n.cm1}, n.prefix + "out_shape", {int_attr("axis", 0)});
  out += node("Reshape", {n.prefix + "mha", n.prefix + "out_shape"}, m.output);
  return out;
}

int default_opset(const std::vector<Field>& model, bool* has_microsoft) {
  int version = 0;
  for (const auto& f : model) {
    if (f.number != kModelOpsetImport || f.wire != 2) continue;
    std::string_view domain;
    int v = 0;
    for (const auto& of : parse(f.bytes)) {
      if (of.number == kOpsetDomain && of.wire == 2) domain = of.bytes;
      else if (of.number == kOpsetVersion && of.wire == 0) v = static_cast<int>(of.varint);
    }
    if (domain.empty() || domain == "ai.onnx") version = v;
    if (domain == "com.microsoft") *has_microsoft = true;
  }
  return version;
}

}  // namespace

std::string fuse_attention(const std::string& model_bytes, AttentionFusionStats* stats) {
  AttentionFusionStats local;
  AttentionFusionStats& st = stats ? *stats : local;
  st = {};
  const auto model = parse(model_bytes);
  const Field& graph_field = wire::message_field(model, kModelGraph);
  bool has_microsoft = false;
  // Older opsets define Softmax over flattened trailing axes; such files are left alone.
  if (default_opset(model, &has_microsoft) < 13) return model_bytes;

  const auto graph_fields = parse(graph_field.bytes);
  const Graph g(graph_fields);
  std::vector<Match> matches;
  std::set<const Node*> removed;
  for (const auto& n : g.nodes()) {
    auto m = match_at(g, n);
    if (!m) continue;
    for (const Node* c : m->core) removed.insert(c);
    matches.push_back(std::move(*m));
  }
  if (matches.empty()) return model_bytes;
  // Scalings and transposes go too once nothing left in the graph reads them.
  std::set<std::string> fused_inputs;
  for (const auto& m : matches) fused_inputs.insert({m.q, m.k, m.v});
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& m : matches) {
      for (const Node* p : m.periphery) {
        if (removed.contains(p)) continue;
        bool unread = true;
        for (const auto& out : p->outputs) {
          unread = unread && !fused_inputs.contains(out);
          for (int r : g.readers(out)) unread = unread && r >= 0 && removed.contains(&g.nodes()[static_cast<size_t>(r)]);
        }
        if (unread) changed = removed.insert(p).second || changed;
      }
    }
  }

  Names names;
  names.prefix = "sam3_fused_attention_";
  while (g.name_taken(names.prefix)) names.prefix += "x_";
  names.c0 = names.prefix + "c0", names.c2 = names.prefix + "c2", names.c3 = names.prefix + "c3";
  names.c4 = names.prefix + "c4", names.cm1 = names.prefix + "cm1";
  std::map<const Node*, int> replaced;  // the last MatMul of each match -> match index
  for (size_t i = 0; i < matches.size(); ++i) replaced[matches[i].last] = static_cast<int>(i);

  std::string new_graph;
  for (const auto& f : graph_fields) {
    if (f.number == kGraphNode && f.wire == 2) {
      const Node* n = g.node_of(f);
      if (auto it = replaced.find(n); it != replaced.end()) {
        new_graph += fused_nodes(names, matches[static_cast<size_t>(it->second)], it->second);
        continue;
      }
      if (removed.contains(n)) continue;
    }
    new_graph.append(f.whole);
  }
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::int64_t>>{
           {names.c0, 0}, {names.c2, 2}, {names.c3, 3}, {names.c4, 4}, {names.cm1, -1}}) {
    new_graph += int64_vector_initializer(name, value);
  }
  st.fused = static_cast<int>(matches.size());

  std::string out = wire::with_payload(model, graph_field, new_graph);
  if (!has_microsoft) {
    std::string opset;
    wire::write_len(opset, kOpsetDomain, "com.microsoft");
    wire::write_varint_field(opset, kOpsetVersion, 1);
    wire::write_len(out, kModelOpsetImport, opset);
  }
  return out;
}

}  // namespace sam3::optimize
