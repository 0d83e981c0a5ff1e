#include "optimize/onnx_split_linears.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "optimize/onnx_fields.h"
#include "optimize/protobuf_wire.h"

namespace sam3::optimize {
namespace {

using namespace onnx;
using wire::parse;

struct Linear {
  const Node* quantizer = nullptr;
  int first = 0;        // the MatMulInteger's index: where the linear's inputs are all known
  std::set<int> nodes;  // the pattern's nodes, left out of the segments
  std::string weight, w_zero_point, w_scale, bias, output;
  std::string residual;  // the value added after the bias (an Add of a value made at run time), or empty
  std::int64_t k = 0, n = 0;
  bool is_signed = false;
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
  // Then an optional Add of a value made at run time (a residual connection): taken in, the sum
  // stays in the kernels' memory, where the next product's residual reads it, instead of leaving
  // ONNX Runtime Web as a new array (docs/browser.md, "What a segment costs"). The kernel adds it
  // as ONNX Runtime's Add does, one float addition a value.
  if (const Node* add = only(l.output);
      is_op(add, "Add") && add->inputs.size() == 2 && add->outputs.size() == 1 && !add->outputs[0].empty()) {
    const std::string& r = add->inputs[0] == l.output ? add->inputs[1] : add->inputs[0];
    if (!r.empty() && r != l.output && !g.constant_tensor(r)) {
      l.residual = r;
      l.nodes.insert(g.index(add));
      l.output = add->outputs[0];
      l.first = g.index(add);  // (where r is known too)
    }
  }
  return l;
}

}  // namespace

void match_int8_linears(const onnx::GraphView& g, std::vector<KernelStep>& steps) {
  std::set<int> taken;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (taken.contains(static_cast<int>(i))) continue;
    auto l = match(g, static_cast<int>(i));
    if (!l) continue;
    taken.insert(l->nodes.begin(), l->nodes.end());
    const auto& q = l->quantizer->outputs;
    KernelStep s{.kind = "linear", .first = l->first, .nodes = l->nodes, .inputs = {q[0], q[1], q[2]}, .output = l->output};
    s.fields = {{"x", q[0]}, {"scale", q[1]}, {"zero_point", q[2]}, {"k", l->k}, {"n", l->n}, {"signed", l->is_signed}};
    if (!l->residual.empty()) {
      s.inputs.push_back(l->residual);
      s.fields["residual"] = l->residual;
    }
    s.blobs = {{"weight", std::move(l->weight)},
               {"w_zero_point", std::move(l->w_zero_point)},
               {"w_scale", std::move(l->w_scale)},
               {"bias", std::move(l->bias)}};
    steps.push_back(std::move(s));
  }
}

std::string split_at_int8_linears(std::string_view model_bytes, SplitLinearsStats* stats) {
  SplitStats split;
  std::string bundle = split_graph(model_bytes, {match_int8_linears}, &split);
  if (stats) *stats = {split.kernel_steps["linear"], split.segments, split.refused};
  return bundle;
}

}  // namespace sam3::optimize
