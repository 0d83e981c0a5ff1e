#include "optimize/onnx_split_matmuls.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "optimize/onnx_fields.h"
#include "optimize/protobuf_wire.h"

namespace sam3::optimize {
namespace {

using namespace onnx;
using wire::parse;

constexpr int kGraphValueInfo = 13;
constexpr int kValueInfoType = 2, kTypeTensor = 1, kTensorTypeShape = 2, kShapeDim = 1, kDimValue = 1;

using Dims = std::vector<std::int64_t>;                     // -1: unknown
using Ints = std::vector<std::optional<std::int64_t>>;      // a 1-D int64 value, some entries unknown
using Declared = std::map<std::string, Dims, std::less<>>;  // value -> its declared dimensions

// The declared dimensions of graph inputs and value_info entries (symbolic ones unknown).
Declared declared_shapes(std::string_view model_bytes) {
  Declared out;
  const auto model = parse(model_bytes);
  for (const auto& f : parse(wire::message_field(model, kModelGraph).bytes)) {
    if (f.wire != 2 || (f.number != kGraphInput && f.number != kGraphValueInfo)) continue;
    std::string name;
    std::optional<Dims> dims;
    for (const auto& vf : parse(f.bytes)) {
      if (vf.number == kValueInfoName && vf.wire == 2) name = vf.bytes;
      if (vf.number != kValueInfoType || vf.wire != 2) continue;
      for (const auto& tf : parse(vf.bytes)) {
        if (tf.number != kTypeTensor || tf.wire != 2) continue;
        for (const auto& ef : parse(tf.bytes)) {
          if (ef.number != kTensorTypeShape || ef.wire != 2) continue;
          dims.emplace();
          for (const auto& df : parse(ef.bytes)) {
            if (df.number != kShapeDim || df.wire != 2) continue;
            std::int64_t d = -1;
            for (const auto& dv : parse(df.bytes)) {
              if (dv.number == kDimValue && dv.wire == 0) d = static_cast<std::int64_t>(dv.varint);
            }
            dims->push_back(d);
          }
        }
      }
    }
    if (!name.empty() && dims) out[name] = *dims;
  }
  return out;
}

// The values of a constant int64 tensor (raw_data or int64_data); nullopt for anything else.
std::optional<std::vector<std::int64_t>> int64_values(std::string_view tensor) {
  const auto h = tensor_header(tensor);
  if (h.data_type != kInt64 || h.external) return std::nullopt;
  std::vector<std::int64_t> out;
  for (const auto& f : parse(tensor)) {
    if (f.number == kTensorRawData && f.wire == 2) {
      for (size_t p = 0; p + 8 <= f.bytes.size(); p += 8) {
        std::uint64_t v = 0;
        for (int b = 7; b >= 0; --b) v = (v << 8) | static_cast<std::uint8_t>(f.bytes[p + static_cast<size_t>(b)]);
        out.push_back(static_cast<std::int64_t>(v));
      }
    } else if (f.number == kTensorInt64Data && f.wire == 0) {
      out.push_back(static_cast<std::int64_t>(f.varint));
    } else if (f.number == kTensorInt64Data && f.wire == 2) {
      for (size_t p = 0; p < f.bytes.size();) out.push_back(static_cast<std::int64_t>(wire::read_varint(f.bytes, p)));
    }
  }
  if (static_cast<std::int64_t>(out.size()) != h.elements()) return std::nullopt;
  return out;
}

// The dimensions of a graph's values that can be known without running it: the declared ones,
// then one pass over the nodes (in their topological order) for the operators between an image's
// tokens and its projections (elementwise, Transpose, Reshape, Expand, MatMul, attention, ...).
// Shape tensors (Shape, Concat, Slice, Gather of them) are followed as far as their entries are
// known. Not a full shape inference: a value it cannot follow has no dimensions.
class StaticDims {
 public:
  StaticDims(const GraphView& g, const Declared& declared) : g_(g) {
    for (const auto& [name, d] : declared) dims_[name] = d;
    for (const auto& n : g.nodes()) visit(n);
  }

  const Dims* of(const std::string& v) {
    if (auto it = dims_.find(v); it != dims_.end()) return &it->second;
    if (auto t = g_.constant_tensor(v)) return &(dims_[v] = tensor_header(*t).dims);
    return nullptr;
  }

 private:
  std::optional<Ints> ints(const std::string& v) {
    if (auto it = ints_.find(v); it != ints_.end()) return it->second;
    if (auto t = g_.constant_tensor(v)) {
      if (auto values = int64_values(*t)) return Ints(values->begin(), values->end());
    }
    return std::nullopt;
  }

  static Dims broadcast(Dims a, Dims b) {
    if (a.size() < b.size()) std::swap(a, b);
    b.insert(b.begin(), a.size() - b.size(), 1);
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] == 1 || (a[i] < 0 && b[i] > 1)) a[i] = b[i];
    }
    return a;
  }

  // An axis attribute or input in [-rank, rank) -> [0, rank); nullopt outside.
  static std::optional<size_t> axis(std::int64_t a, size_t rank) {
    const auto r = static_cast<std::int64_t>(rank);
    if (a < -r || a >= r) return std::nullopt;
    return static_cast<size_t>(a < 0 ? a + r : a);
  }

  void set(const Node& n, size_t output, Dims d) {
    if (output < n.outputs.size() && !n.outputs[output].empty() && !dims_.contains(n.outputs[output]))
      dims_[n.outputs[output]] = std::move(d);
  }

  void visit(const Node& n) {
    static const std::set<std::string> kSame = {"Relu",
                                                "Gelu",
                                                "Sigmoid",
                                                "Tanh",
                                                "Erf",
                                                "Sqrt",
                                                "Exp",
                                                "Log",
                                                "Neg",
                                                "Abs",
                                                "Softmax",
                                                "Cast",
                                                "Identity",
                                                "Sin",
                                                "Cos",
                                                "Dropout",
                                                "Reciprocal",
                                                "Floor",
                                                "Ceil",
                                                "Round",
                                                "Clip",
                                                "FastGelu",
                                                "QuickGelu",
                                                "LayerNormalization",
                                                "SimplifiedLayerNormalization",
                                                "SkipLayerNormalization"};
    static const std::set<std::string> kBroadcast = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Where", "Equal", "Less", "Greater"};
    const std::string& op = n.op;
    if (n.inputs.empty() || n.outputs.empty()) return;
    const Dims* x = of(n.inputs[0]);
    if (op == "Shape" && x) {
      Ints s;
      for (auto d : *x) s.push_back(d >= 0 ? std::optional(d) : std::nullopt);
      ints_[n.outputs[0]] = s;
      set(n, 0, {static_cast<std::int64_t>(x->size())});
      return;
    }
    if (op == "Concat") {
      follow_ints_concat(n);
      concat(n);
      return;
    }
    if (op == "Slice" || op == "Gather" || op == "Unsqueeze" || op == "Squeeze" || op == "Cast") follow_ints(n);
    if (kSame.contains(op) && x) {
      set(n, 0, *x);
    } else if (kBroadcast.contains(op)) {
      std::optional<Dims> d;
      for (const auto& in : n.inputs) {
        const Dims* di = in.empty() ? nullptr : of(in);
        if (!di) return;
        d = d ? broadcast(*d, *di) : *di;
      }
      if (d) set(n, 0, *d);
    } else if (op == "Transpose" && x) {
      auto perm = ints_attribute(n, "perm");
      if (perm.empty())
        for (size_t i = x->size(); i-- > 0;) perm.push_back(static_cast<std::int64_t>(i));
      if (perm.size() != x->size()) return;
      Dims d;
      for (auto p : perm) {
        if (p < 0 || static_cast<size_t>(p) >= x->size()) return;
        d.push_back((*x)[static_cast<size_t>(p)]);
      }
      set(n, 0, d);
    } else if (op == "Reshape" && n.inputs.size() > 1) {
      reshape(n, x);
    } else if (op == "Expand" && x && n.inputs.size() > 1) {
      if (auto s = ints(n.inputs[1])) {
        Dims shape;
        for (const auto& v : *s) shape.push_back(v.value_or(-1));
        set(n, 0, broadcast(*x, shape));
      }
    } else if (op == "MatMul" && x && n.inputs.size() > 1) {
      const Dims* w = of(n.inputs[1]);
      if (!w || x->size() < 2 || w->size() < 2) return;
      Dims d = broadcast(Dims(x->begin(), x->end() - 2), Dims(w->begin(), w->end() - 2));
      d.push_back((*x)[x->size() - 2]);
      d.push_back(w->back());
      set(n, 0, d);
    } else if (op == "MultiHeadAttention" && n.domain == "com.microsoft" && x && x->size() == 3 && n.inputs.size() > 2) {
      const Dims* v = n.inputs[2].empty() ? nullptr : of(n.inputs[2]);
      set(n, 0, {(*x)[0], (*x)[1], v && v->size() == 3 ? (*v)[2] : -1});
    } else if ((op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax") && x) {
      auto axes = ints_attribute(n, "axes");
      if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
        auto a = ints(n.inputs[1]);
        if (!a) return;
        axes.clear();
        for (const auto& v : *a) {
          if (!v) return;
          axes.push_back(*v);
        }
      }
      if (int_attribute(n, "keepdims").value_or(1) != 1 || axes.empty()) return;
      Dims d = *x;
      for (auto a : axes) {
        auto i = axis(a, d.size());
        if (!i) return;
        d[*i] = 1;
      }
      set(n, 0, d);
    } else if (op == "Unsqueeze" && x) {
      auto axes = ints_attribute(n, "axes");
      if (n.inputs.size() > 1) {
        auto a = ints(n.inputs[1]);
        if (!a) return;
        for (const auto& v : *a) {
          if (!v) return;
          axes.push_back(*v);
        }
      }
      Dims d = *x;
      std::sort(axes.begin(), axes.end());
      for (auto a : axes) {
        auto i = axis(a, d.size() + 1);
        if (!i) return;
        d.insert(d.begin() + static_cast<std::ptrdiff_t>(*i), 1);
      }
      set(n, 0, d);
    } else if (op == "Slice" && x && n.inputs.size() > 3) {
      // The sliced axes' sizes unknown, the others as they were.
      auto axes = ints(n.inputs[3]);
      if (!axes) return;
      Dims d = *x;
      for (const auto& a : *axes) {
        auto i = a ? axis(*a, d.size()) : std::nullopt;
        if (!i) return;
        d[*i] = -1;
      }
      set(n, 0, d);
    }
  }

  void reshape(const Node& n, const Dims* x) {
    auto s = ints(n.inputs[1]);
    if (!s) return;
    const bool allowzero = int_attribute(n, "allowzero").value_or(0) != 0;
    Dims d;
    int infer = -1;
    for (size_t i = 0; i < s->size(); ++i) {
      const auto& v = (*s)[i];
      if (!v) {
        d.push_back(-1);
      } else if (*v == 0 && !allowzero) {
        d.push_back(x && i < x->size() ? (*x)[i] : -1);
      } else if (*v == -1) {
        infer = static_cast<int>(i);
        d.push_back(-1);
      } else {
        d.push_back(*v);
      }
    }
    if (infer >= 0 && x) {
      std::int64_t total = 1, rest = 1;
      bool known = true;
      for (auto v : *x) known = known && v >= 0, total *= std::max<std::int64_t>(v, 1);
      for (size_t i = 0; i < d.size(); ++i) {
        if (static_cast<int>(i) != infer) known = known && d[i] >= 0, rest *= std::max<std::int64_t>(d[i], 1);
      }
      if (known && rest > 0 && total % rest == 0) d[static_cast<size_t>(infer)] = total / rest;
    }
    set(n, 0, d);
  }

  void concat(const Node& n) {
    std::optional<Dims> d;
    std::optional<size_t> at;
    for (const auto& in : n.inputs) {
      const Dims* di = of(in);
      if (!di) return;
      if (!d) {
        d = *di;
        at = axis(int_attribute(n, "axis").value_or(0), d->size());
        if (!at) return;
        continue;
      }
      if (di->size() != d->size()) return;
      auto& a = (*d)[*at];
      a = a >= 0 && (*di)[*at] >= 0 ? a + (*di)[*at] : -1;
      for (size_t i = 0; i < d->size(); ++i) {
        if (i != *at && (*d)[i] < 0) (*d)[i] = (*di)[i];
      }
    }
    if (d) set(n, 0, *d);
  }

  // Shape tensors: Concat of 1-D int values, Slice with constant bounds, Gather of constant
  // indices, Unsqueeze and Squeeze (one element), Cast.
  void follow_ints_concat(const Node& n) {
    Ints out;
    for (const auto& in : n.inputs) {
      auto v = ints(in);
      if (!v) return;
      out.insert(out.end(), v->begin(), v->end());
    }
    ints_[n.outputs[0]] = out;
  }

  void follow_ints(const Node& n) {
    auto v = ints(n.inputs[0]);
    if (!v) return;
    if (n.op == "Cast" || n.op == "Unsqueeze" || n.op == "Squeeze") {
      if (n.op == "Cast" || v->size() == 1) ints_[n.outputs[0]] = *v;
      return;
    }
    auto constant = [&](size_t i) -> std::optional<std::vector<std::int64_t>> {
      if (i >= n.inputs.size() || n.inputs[i].empty()) return std::nullopt;
      auto t = g_.constant_tensor(n.inputs[i]);
      return t ? int64_values(*t) : std::nullopt;
    };
    const auto size = static_cast<std::int64_t>(v->size());
    if (n.op == "Gather") {
      auto idx = constant(1);
      if (!idx || int_attribute(n, "axis").value_or(0) != 0) return;
      Ints out;
      for (auto i : *idx) {
        if (i < -size || i >= size) return;
        out.push_back((*v)[static_cast<size_t>(i < 0 ? i + size : i)]);
      }
      ints_[n.outputs[0]] = out;
    } else if (n.op == "Slice") {
      auto starts = constant(1), ends = constant(2);
      auto axes = constant(3), steps = constant(4);
      if (!starts || !ends || starts->size() != 1 || ends->size() != 1) return;
      if ((axes && (axes->size() != 1 || (*axes)[0] != 0)) || (steps && (steps->size() != 1 || (*steps)[0] != 1))) return;
      auto clamp = [&](std::int64_t i) { return std::clamp<std::int64_t>(i < 0 ? i + size : i, 0, size); };
      const std::int64_t b = clamp((*starts)[0]), e = clamp((*ends)[0]);
      ints_[n.outputs[0]] = b < e ? Ints(v->begin() + b, v->begin() + e) : Ints();
    }
  }

  const GraphView& g_;
  std::map<std::string, Dims> dims_;
  std::map<std::string, Ints> ints_;
};

// The values of a constant float tensor of `count` elements, little-endian (raw_data or float_data).
std::optional<std::string> float_bytes(std::string_view tensor, std::int64_t count) {
  const auto h = tensor_header(tensor);
  if (h.data_type != kFloat || h.external || h.elements() != count) return std::nullopt;
  std::string out;
  for (const auto& f : parse(tensor)) {
    if (f.number == kTensorRawData && f.wire == 2)
      return f.bytes.size() == static_cast<size_t>(count) * 4 ? std::optional(std::string(f.bytes)) : std::nullopt;
    if (f.number == kTensorFloatData) out.append(f.bytes);  // packed (wire 2) or one value (wire 5)
  }
  if (out.size() != static_cast<size_t>(count) * 4) return std::nullopt;
  return out;
}

// Products whose activation is Add(a, C), C a constant, read by these products alone (the
// decoder's keys plus their positional encoding, made for each product reading them): each
// product takes a and adds C itself (x_add, right-aligned as ONNX broadcasts it: C without its
// leading 1s must be a's last dimensions, known). The sum then never leaves ONNX Runtime Web (a
// new array on every run, docs/browser.md "What a segment costs"): a, which the graph goes on
// reading, crosses in its place. The kernel's float addition is ONNX Runtime's, bit for bit.
void fold_constant_adds(const GraphView& g, StaticDims& dims, std::vector<KernelStep>& steps, size_t first) {
  std::map<std::string, std::vector<size_t>> by_x;  // an activation -> the new steps reading it
  for (size_t i = first; i < steps.size(); ++i) by_x[steps[i].inputs[0]].push_back(i);
  for (const auto& [x, readers] : by_x) {
    const Node* add = g.producer(x);
    if (!is_op(add, "Add") || add->inputs.size() != 2 || add->outputs.size() != 1) continue;
    const bool c_first = static_cast<bool>(g.constant_tensor(add->inputs[0]));
    const std::string& a = add->inputs[c_first ? 1 : 0];
    const auto c = g.constant_tensor(add->inputs[c_first ? 0 : 1]);
    if (!c || a.empty() || g.constant_tensor(a) || a == add->inputs[c_first ? 0 : 1]) continue;
    // Every reader of x is one of these products (no graph output, no other node).
    const auto r = g.readers(x);
    std::set<int> products;
    for (size_t i : readers) products.insert(steps[i].first);
    if (r.size() != readers.size() || !std::all_of(r.begin(), r.end(), [&](int i) { return products.contains(i); })) continue;
    const auto ch = tensor_header(*c);
    std::vector<std::int64_t> cd(ch.dims.begin(), ch.dims.end());
    while (!cd.empty() && cd.front() == 1) cd.erase(cd.begin());
    const Dims* ad = dims.of(a);
    if (!ad || ad->size() < ch.dims.size() || ad->size() < cd.size()) continue;
    if (!std::equal(cd.begin(), cd.end(), ad->end() - static_cast<std::ptrdiff_t>(cd.size())))
      continue;  // (an unknown size: -1, never equal)
    auto values = float_bytes(*c, ch.elements());
    if (!values) continue;
    for (size_t i : readers) {
      KernelStep& s = steps[i];
      s.inputs = {a};
      s.fields["x"] = a;
      s.fields["x_add_shape"] = cd;
      s.blobs.emplace_back("x_add", *values);
    }
    // The Add is left out of the segments, with the first product (the one it comes before).
    KernelStep& owner = steps[readers.front()];
    owner.nodes.insert(g.index(add));
    owner.first = g.index(add);
  }
}

void match(const GraphView& g, const Declared& declared, const FloatMatMulOptions& options, std::vector<KernelStep>& steps) {
  StaticDims dims(g, declared);
  const size_t first = steps.size();
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& mm = g.nodes()[i];
    if (!is_op(&mm, "MatMul") || mm.inputs.size() != 2 || mm.outputs.size() != 1 || mm.inputs[0].empty() || mm.outputs[0].empty()) continue;
    const auto w = g.constant_tensor(mm.inputs[1]);
    if (!w || g.constant_tensor(mm.inputs[0])) continue;
    const auto wh = tensor_header(*w);
    if (wh.data_type != kFloat || wh.dims.size() != 2 || wh.dims[0] < 1 || wh.dims[1] < 1) continue;
    const std::int64_t k = wh.dims[0], n = wh.dims[1];
    if (k * n < options.min_weight) continue;
    const Dims* x = dims.of(mm.inputs[0]);
    if (!x || x->size() < 2 || x->back() != k) continue;  // (a 1-D x, or one whose depth is not known to be k: left alone)
    std::int64_t rows = 1;
    for (size_t d = 0; d + 1 < x->size(); ++d) rows *= std::max<std::int64_t>((*x)[d], 1);
    if (rows < options.min_rows) continue;
    auto weight = float_bytes(*w, k * n);
    if (!weight) continue;
    KernelStep s{
        .kind = "matmul", .first = static_cast<int>(i), .nodes = {static_cast<int>(i)}, .inputs = {mm.inputs[0]}, .output = mm.outputs[0]};
    std::string bias;
    // An Add of a constant bias of n floats, the product's only reader.
    const auto r = g.readers(mm.outputs[0]);
    if (const Node* add = r.size() == 1 && r[0] >= 0 ? &g.nodes()[static_cast<size_t>(r[0])] : nullptr;
        is_op(add, "Add") && add->inputs.size() == 2 && add->outputs.size() == 1 && !add->outputs[0].empty()) {
      const std::string& b = add->inputs[0] == mm.outputs[0] ? add->inputs[1] : add->inputs[0];
      if (const auto bt = b != mm.outputs[0] ? g.constant_tensor(b) : std::nullopt) {
        const auto bh = tensor_header(*bt);
        const bool row = bh.elements() == n && !bh.dims.empty() && bh.dims.back() == n && bh.dims.size() <= x->size();
        if (auto values = row ? float_bytes(*bt, n) : std::nullopt) {
          bias = std::move(*values);
          s.nodes.insert(g.index(add));
          s.output = add->outputs[0];
        }
      }
    }
    s.fields = {{"x", mm.inputs[0]}, {"k", k}, {"n", n}, {"rows", rows}};
    s.blobs = {{"weight", std::move(*weight)}, {"bias", std::move(bias)}};
    steps.push_back(std::move(s));
  }
  fold_constant_adds(g, dims, steps, first);
}

}  // namespace

KernelMatcher float_matmul_matcher(std::string_view model_bytes, FloatMatMulOptions options) {
  auto declared = std::make_shared<const Declared>(declared_shapes(model_bytes));
  return [declared, options](const GraphView& g, std::vector<KernelStep>& steps) { match(g, *declared, options, steps); };
}

}  // namespace sam3::optimize
