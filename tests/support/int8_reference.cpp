#include "support/int8_reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "optimize/onnx_fields.h"
#include "optimize/onnx_graph_view.h"
#include "optimize/protobuf_wire.h"

namespace sam3::test {
namespace {

using namespace sam3::optimize::onnx;
namespace wire = sam3::optimize::wire;

struct Value {
  RefTensor t;
  bool is_float = false;  // float32 values (rounded as float32 by every operator)
};

[[noreturn]] void unsupported(const Node& n, const std::string& what) {
  throw std::runtime_error("int8 reference: " + n.op + " (" + (n.outputs.empty() ? "" : n.outputs[0]) + "): " + what);
}

double f32(double v) { return static_cast<float>(v); }

// The values of a TensorProto as doubles (raw_data, or the typed repeated fields).
Value decode_tensor(std::string_view tensor) {
  const TensorHeader h = tensor_header(tensor);
  Value v;
  v.t.shape = h.dims;
  v.is_float = h.data_type == kFloat;
  const std::int64_t n = h.elements();
  for (const auto& f : wire::parse(tensor)) {
    if (f.number == kTensorRawData && f.wire == 2) {
      const char* p = f.bytes.data();
      for (std::int64_t i = 0; i < n; ++i) {
        switch (h.data_type) {
          case kUint8:
            v.t.values.push_back(static_cast<std::uint8_t>(p[i]));
            break;
          case kInt8:
            v.t.values.push_back(static_cast<std::int8_t>(p[i]));
            break;
          case kFloat: {
            float x;
            std::memcpy(&x, p + 4 * i, 4);
            v.t.values.push_back(x);
            break;
          }
          case 6: {
            std::int32_t x;
            std::memcpy(&x, p + 4 * i, 4);
            v.t.values.push_back(x);
            break;
          }
          case kInt64: {
            std::int64_t x;
            std::memcpy(&x, p + 8 * i, 8);
            v.t.values.push_back(static_cast<double>(x));
            break;
          }
          default:
            throw std::runtime_error("int8 reference: element type " + std::to_string(h.data_type));
        }
      }
    } else if (f.number == kTensorInt32Data || f.number == kTensorInt64Data) {
      size_t p = 0;
      auto push = [&](std::uint64_t raw) {
        const auto s = static_cast<std::int64_t>(raw);
        v.t.values.push_back(h.data_type == kUint8  ? double(raw & 0xFF)
                             : h.data_type == kInt8 ? double(std::int8_t(raw & 0xFF))
                                                    : double(s));
      };
      if (f.wire == 2)
        while (p < f.bytes.size()) push(wire::read_varint(f.bytes, p));
      else
        push(f.varint);
    } else if (f.number == kTensorFloatData) {
      for (size_t p = 0; p + 4 <= f.bytes.size(); p += 4) {
        float x;
        std::memcpy(&x, f.bytes.data() + p, 4);
        v.t.values.push_back(x);
      }
    }
  }
  if (static_cast<std::int64_t>(v.t.values.size()) != n) throw std::runtime_error("int8 reference: a constant's size");
  return v;
}

std::int64_t count(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

// DynamicQuantizeLinear: the range widened to include 0, scale (max - min) / 255 (1 when the range
// is empty, as ONNX Runtime does), zero point and values rounded half to even and saturated.
std::vector<Value> dynamic_quantize(const Value& x) {
  float lo = 0, hi = 0;
  for (double v : x.t.values) lo = std::min(lo, float(v)), hi = std::max(hi, float(v));
  const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  const float zp = std::nearbyint(std::clamp(0.0f - lo / scale, 0.0f, 255.0f));
  Value q{{x.t.shape, {}}, false};
  for (double v : x.t.values) q.t.values.push_back(std::clamp(std::nearbyint(float(v) / scale) + zp, 0.0f, 255.0f));
  return {q, Value{{{}, {scale}}, true}, Value{{{}, {zp}}, false}};
}

double zero_point(const std::vector<const Value*>& in, size_t slot, std::int64_t index) {
  if (slot >= in.size() || !in[slot]) return 0;
  const auto& z = in[slot]->t.values;
  return z.size() == 1 ? z[0] : z.at(index);
}

Value matmul_integer(const Node& n, const std::vector<const Value*>& in) {
  const auto& a = in[0]->t;
  const auto& b = in[1]->t;
  if (b.shape.size() != 2 || a.shape.empty() || a.shape.back() != b.shape[0]) unsupported(n, "shapes");
  if (in.size() > 2 && in[2] && in[2]->t.values.size() != 1) unsupported(n, "a per-row activation zero point");
  const std::int64_t k = b.shape[0], cols = b.shape[1], rows = count(a.shape) / k;
  const auto za = static_cast<std::int64_t>(zero_point(in, 2, 0));
  Value y{{a.shape, std::vector<double>(rows * cols)}, false};
  y.t.shape.back() = cols;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      const auto zb = static_cast<std::int64_t>(zero_point(in, 3, c));
      std::int64_t sum = 0;
      for (std::int64_t i = 0; i < k; ++i) {
        sum += (static_cast<std::int64_t>(a.values[r * k + i]) - za) * (static_cast<std::int64_t>(b.values[i * cols + c]) - zb);
      }
      y.t.values[r * cols + c] = static_cast<double>(sum);
    }
  }
  return y;
}

Value conv_integer(const Node& n, const std::vector<const Value*>& in) {
  const auto& x = in[0]->t;
  const auto& w = in[1]->t;
  if (x.shape.size() != 4 || w.shape.size() != 4 || x.shape[1] != w.shape[1]) unsupported(n, "shapes");
  if (int_attribute(n, "group").value_or(1) != 1) unsupported(n, "groups");
  auto strides = ints_attribute(n, "strides"), pads = ints_attribute(n, "pads"), dil = ints_attribute(n, "dilations");
  if (strides.empty()) strides = {1, 1};
  if (pads.empty()) pads = {0, 0, 0, 0};
  if (dil.empty()) dil = {1, 1};
  const std::int64_t batch = x.shape[0], ch = x.shape[1], h = x.shape[2], wd = x.shape[3];
  const std::int64_t m = w.shape[0], kh = w.shape[2], kw = w.shape[3];
  const std::int64_t oh = (h + pads[0] + pads[2] - dil[0] * (kh - 1) - 1) / strides[0] + 1;
  const std::int64_t ow = (wd + pads[1] + pads[3] - dil[1] * (kw - 1) - 1) / strides[1] + 1;
  const auto zx = static_cast<std::int64_t>(zero_point(in, 2, 0)), zw = static_cast<std::int64_t>(zero_point(in, 3, 0));
  Value y{{{batch, m, oh, ow}, std::vector<double>(batch * m * oh * ow)}, false};
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t o = 0; o < m; ++o)
      for (std::int64_t i = 0; i < oh; ++i)
        for (std::int64_t j = 0; j < ow; ++j) {
          std::int64_t sum = 0;  // padding contributes zero (x - zero point = 0 there)
          for (std::int64_t c = 0; c < ch; ++c)
            for (std::int64_t u = 0; u < kh; ++u)
              for (std::int64_t v = 0; v < kw; ++v) {
                const std::int64_t yy = i * strides[0] - pads[0] + u * dil[0], xx = j * strides[1] - pads[1] + v * dil[1];
                if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
                const auto xv = static_cast<std::int64_t>(x.values[((b * ch + c) * h + yy) * wd + xx]);
                const auto wv = static_cast<std::int64_t>(w.values[((o * ch + c) * kh + u) * kw + v]);
                sum += (xv - zx) * (wv - zw);
              }
          y.t.values[((b * m + o) * oh + i) * ow + j] = static_cast<double>(sum);
        }
  return y;
}

// Mul and Add with one operand of one element or both of one shape: what the test graphs use.
Value elementwise(const Node& n, const Value& a, const Value& b) {
  const bool a_scalar = a.t.values.size() == 1, b_scalar = b.t.values.size() == 1;
  if (!a_scalar && !b_scalar && a.t.values.size() != b.t.values.size()) unsupported(n, "broadcasting");
  Value y{{a_scalar && !b_scalar ? b.t.shape : a.t.shape, {}}, a.is_float || b.is_float};
  const size_t size = std::max(a.t.values.size(), b.t.values.size());
  for (size_t i = 0; i < size; ++i) {
    const double l = a.t.values[a_scalar ? 0 : i], r = b.t.values[b_scalar ? 0 : i];
    const double v = n.op == "Mul" ? (y.is_float ? f32(f32(l) * f32(r)) : l * r) : (y.is_float ? f32(f32(l) + f32(r)) : l + r);
    y.t.values.push_back(v);
  }
  return y;
}

}  // namespace

std::map<std::string, RefTensor> evaluate_int8_graph(const std::string& model_bytes, const std::map<std::string, RefTensor>& inputs) {
  const auto model = wire::parse(model_bytes);
  const auto graph = wire::parse(wire::message_field(model, kModelGraph).bytes);
  const GraphView view(graph);
  std::map<std::string, Value> values;
  for (const auto& [name, t] : inputs) values[name] = Value{t, true};
  auto input = [&](const Node& n, size_t i) -> const Value* {
    if (i >= n.inputs.size() || n.inputs[i].empty()) return nullptr;
    const std::string& name = n.inputs[i];
    if (auto it = values.find(name); it != values.end()) return &it->second;
    if (auto t = view.constant_tensor(name)) return &(values[name] = decode_tensor(*t));
    unsupported(n, "input " + name + " has no value");
  };
  for (const Node& n : view.nodes()) {
    std::vector<const Value*> in;
    for (size_t i = 0; i < n.inputs.size(); ++i) in.push_back(input(n, i));
    std::vector<Value> out;
    if (n.op == "Constant") continue;  // read through constant_tensor
    if (n.op == "Identity")
      out = {*in[0]};
    else if (n.op == "DynamicQuantizeLinear")
      out = dynamic_quantize(*in[0]);
    else if (n.op == "MatMulInteger")
      out = {matmul_integer(n, in)};
    else if (n.op == "ConvInteger")
      out = {conv_integer(n, in)};
    else if (n.op == "Mul" || n.op == "Add")
      out = {elementwise(n, *in[0], *in[1])};
    else if (n.op == "Cast") {
      Value y = *in[0];
      y.is_float = int_attribute(n, "to").value_or(0) == kFloat;
      if (y.is_float)
        for (double& v : y.t.values) v = f32(v);
      out = {y};
    } else {
      unsupported(n, "not an operator of the int8 test graphs");
    }
    for (size_t i = 0; i < out.size() && i < n.outputs.size(); ++i) values[n.outputs[i]] = std::move(out[i]);
  }
  std::map<std::string, RefTensor> result;
  for (const auto& f : graph) {
    if (f.number != kGraphOutput || f.wire != 2) continue;
    for (const auto& vf : wire::parse(f.bytes)) {
      if (vf.number == kValueInfoName && vf.wire == 2) result[std::string(vf.bytes)] = values.at(std::string(vf.bytes)).t;
    }
  }
  return result;
}

}  // namespace sam3::test
