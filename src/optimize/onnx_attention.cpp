#include "optimize/onnx_attention.h"

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
  float mha_scale = 0.0f;              // MultiHeadAttention's attribute; 0: 1 / sqrt(head size)
  std::vector<const Node*> core;       // replaced: both MatMuls, the scaling, the Softmax
  std::vector<const Node*> periphery;  // removed too when nothing else reads them
  const Node* last = nullptr;          // the second MatMul: the fused nodes go where it was
};

// Follows `tensor` through the producer `op` (and an optional Cast before it): the producer.
const Node* through(const GraphView& g, const std::string& tensor, std::string_view op, std::vector<const Node*>& nodes) {
  const Node* p = g.producer(tensor);
  if (is_op(p, "Cast") && p->inputs.size() == 1) {
    nodes.push_back(p);
    p = g.producer(p->inputs[0]);
  }
  if (!is_op(p, op) || p->inputs.empty()) return nullptr;  // callers read its first input
  nodes.push_back(p);
  return p;
}

// `tensor` = Sqrt(Cast?(Div(1, Sqrt(Cast(Slice(Shape(x), [-1], [big])))))): PyTorch's SDPA
// export of sqrt(default scale). Returns x and records the nodes.
std::optional<std::string> sdpa_half_scale(const GraphView& g, const std::string& tensor, std::vector<const Node*>& nodes) {
  const Node* sqrt = through(g, tensor, "Sqrt", nodes);
  const Node* div = sqrt ? through(g, sqrt->inputs[0], "Div", nodes) : nullptr;
  if (!div || div->inputs.size() != 2 || g.scalar_constant(div->inputs[0]) != 1.0f) return std::nullopt;
  const Node* root = through(g, div->inputs[1], "Sqrt", nodes);
  const Node* slice = root ? through(g, root->inputs[0], "Slice", nodes) : nullptr;
  if (!slice || slice->inputs.size() < 3 || slice->inputs.size() > 4) return std::nullopt;
  if (g.int64_constant(slice->inputs[1]) != -1 || g.int64_constant(slice->inputs[2]).value_or(0) < (1LL << 31)) return std::nullopt;
  if (slice->inputs.size() == 4 && g.int64_constant(slice->inputs[3]).value_or(-1) != 0) return std::nullopt;
  const Node* shape = g.producer(slice->inputs[0]);
  if (!is_op(shape, "Shape") || shape->inputs.size() != 1 || !shape->attributes.empty()) return std::nullopt;
  nodes.push_back(shape);
  return shape->inputs[0];
}

// `tensor` = Mul(x, c), Mul(c, x) or Div(x, c) with a scalar constant c or an SDPA half
// scale: returns x, folds c into `scale`, and records the nodes.
std::optional<std::string> peel_scale(const GraphView& g, const std::string& tensor, Scale& scale, std::vector<const Node*>& nodes) {
  const Node* p = g.producer(tensor);
  if (!p || p->inputs.size() != 2 || !(is_op(p, "Mul") || is_op(p, "Div"))) return std::nullopt;
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
std::string peel_scales(const GraphView& g, std::string tensor, Scale& scale, std::vector<const Node*>& periphery) {
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

std::optional<Match> match_at(const GraphView& g, const Node& softmax) {
  if (!is_op(&softmax, "Softmax") || softmax.inputs.size() != 1 || softmax.outputs.size() != 1) return std::nullopt;
  Match m;
  // Softmax -> MatMul(probabilities, V), read by nothing else.
  const auto readers = g.readers(softmax.outputs[0]);
  if (readers.size() != 1 || readers[0] < 0) return std::nullopt;
  const Node& second = g.nodes()[static_cast<size_t>(readers[0])];
  if (!is_op(&second, "MatMul") || second.inputs.size() != 2 || second.outputs.size() != 1 || second.inputs[0] != softmax.outputs[0] ||
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
  if (!is_op(first, "MatMul") || first->inputs.size() != 2) return std::nullopt;
  m.core.push_back(first);
  // Q side: scalings; K side: scalings, the transpose of the last two axes, scalings.
  m.q = peel_scales(g, first->inputs[0], m.scale, m.periphery);
  const std::string kt = peel_scales(g, first->inputs[1], m.scale, m.periphery);
  const Node* transpose = g.producer(kt);
  if (!is_op(transpose, "Transpose") || transpose->inputs.size() != 1) return std::nullopt;
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

}  // namespace

std::string fuse_attention(std::string_view model_bytes, AttentionFusionStats* stats) {
  auto fused = fuse_attention_if_any(model_bytes, stats);
  return fused ? std::move(*fused) : std::string(model_bytes);
}

std::optional<std::string> fuse_attention_if_any(std::string_view model_bytes, AttentionFusionStats* stats) {
  AttentionFusionStats local;
  AttentionFusionStats& st = stats ? *stats : local;
  st = {};
  const auto model = parse(model_bytes);
  const Field& graph_field = wire::message_field(model, kModelGraph);
  bool has_microsoft = false;
  // Older opsets define Softmax over flattened trailing axes; such files are left alone.
  if (default_opset(model, &has_microsoft) < 13) return std::nullopt;

  const auto graph_fields = parse(graph_field.bytes);
  const GraphView g(graph_fields);
  std::vector<Match> matches;
  std::set<const Node*> removed;
  for (const auto& n : g.nodes()) {
    auto m = match_at(g, n);
    if (!m) continue;
    for (const Node* c : m->core) removed.insert(c);
    matches.push_back(std::move(*m));
  }
  if (matches.empty()) return std::nullopt;
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
  names.prefix = g.unused_prefix("sam3_fused_attention_");
  names.c0 = names.prefix + "c0", names.c2 = names.prefix + "c2", names.c3 = names.prefix + "c3";
  names.c4 = names.prefix + "c4", names.cm1 = names.prefix + "cm1";
  std::map<const Node*, int> replaced;  // the last MatMul of each match -> match index
  for (size_t i = 0; i < matches.size(); ++i) replaced[matches[i].last] = static_cast<int>(i);

  GraphPieces new_graph;  // (views of the input: the rewrite holds two copies of a file, not three)
  for (const auto& f : graph_fields) {
    if (f.number == kGraphNode && f.wire == 2) {
      const Node* n = g.node_of(f);
      if (auto it = replaced.find(n); it != replaced.end()) {
        new_graph.add(fused_nodes(names, matches[static_cast<size_t>(it->second)], it->second));
        continue;
      }
      if (removed.contains(n)) continue;
    }
    new_graph.copy(f.whole);
  }
  std::string constants;
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::int64_t>>{{names.c0, 0}, {names.c2, 2}, {names.c3, 3}, {names.c4, 4}, {names.cm1, -1}}) {
    constants += int64_vector_initializer(name, value);
  }
  new_graph.add(std::move(constants));
  st.fused = static_cast<int>(matches.size());

  std::string opset_import;
  if (!has_microsoft) {
    std::string opset;
    wire::write_len(opset, kOpsetDomain, "com.microsoft");
    wire::write_varint_field(opset, kOpsetVersion, 1);
    wire::write_len(opset_import, kModelOpsetImport, opset);
  }
  return model_with_graph(model_bytes, model, graph_field, new_graph, opset_import);
}

}  // namespace sam3::optimize
