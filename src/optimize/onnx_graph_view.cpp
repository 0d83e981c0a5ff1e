#include "optimize/onnx_graph_view.h"

#include <cstring>

#include "optimize/onnx_fields.h"

namespace sam3::optimize::onnx {
namespace {

using wire::Field;
using wire::parse;

Node read_node(const Field& f) {
  Node n;
  n.field = &f;
  for (const auto& nf : parse(f.bytes)) {
    if (nf.wire != 2) continue;
    if (nf.number == kNodeInput)
      n.inputs.emplace_back(nf.bytes);
    else if (nf.number == kNodeOutput)
      n.outputs.emplace_back(nf.bytes);
    else if (nf.number == kNodeOpType)
      n.op = nf.bytes;
    else if (nf.number == kNodeDomain)
      n.domain = nf.bytes;
    else if (nf.number == kNodeAttribute)
      n.attributes.push_back(nf);
  }
  if (n.domain == "ai.onnx") n.domain.clear();
  return n;
}

// The fields of the attribute called `name` (empty when the node has none).
std::vector<Field> attribute_fields(const Node& n, std::string_view name) {
  for (const auto& a : n.attributes) {
    auto fields = parse(a.bytes);
    for (const auto& f : fields) {
      if (f.number == kAttrName && f.wire == 2 && f.bytes == name) return fields;
    }
  }
  return {};
}

// The values of a repeated integer field occurrence, packed or not.
std::vector<std::uint64_t> varints(const Field& f) {
  if (f.wire == 0) return {f.varint};
  std::vector<std::uint64_t> out;
  if (f.wire != 2) return out;
  size_t p = 0;
  while (p < f.bytes.size()) out.push_back(wire::read_varint(f.bytes, p));
  return out;
}

std::int64_t product(const std::vector<std::uint64_t>& dims, std::int64_t start) {
  for (auto d : dims) start *= static_cast<std::int64_t>(d);
  return start;
}

float float_from_le(std::string_view b) {
  std::uint32_t u = 0;
  for (int i = 3; i >= 0; --i) u = (u << 8) | static_cast<std::uint8_t>(b[static_cast<size_t>(i)]);
  float f;
  std::memcpy(&f, &u, sizeof f);  // (Emscripten's libc++ has no std::bit_cast)
  return f;
}

// The value of a float TensorProto with exactly one element stored in the file.
std::optional<float> scalar_tensor(std::string_view tensor) {
  std::int64_t elements = 1;
  int type = 0;
  std::optional<float> value;
  for (const auto& f : parse(tensor)) {
    if (f.number == kTensorDims) {
      elements = product(varints(f), elements);
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
    if (f.number == kTensorDims) {
      elements = product(varints(f), elements);
    } else if (f.number == kTensorDataType && f.wire == 0) {
      type = static_cast<int>(f.varint);
    } else if (f.number == kTensorRawData && f.wire == 2 && f.bytes.size() == 8) {
      std::uint64_t u = 0;
      for (int i = 7; i >= 0; --i) u = (u << 8) | static_cast<std::uint8_t>(f.bytes[static_cast<size_t>(i)]);
      value = static_cast<std::int64_t>(u);
    } else if (f.number == kTensorInt64Data) {
      const auto v = varints(f);
      if (v.size() != 1) return std::nullopt;
      value = static_cast<std::int64_t>(v[0]);
    }
  }
  if (type != kInt64 || elements != 1) return std::nullopt;
  return value;
}

}  // namespace

std::int64_t TensorHeader::elements() const {
  std::int64_t n = 1;
  for (auto d : dims) n *= d;
  return n;
}

TensorHeader tensor_header(std::string_view tensor) {
  TensorHeader t;
  for (const auto& f : parse(tensor)) {
    if (f.number == kTensorDataType && f.wire == 0)
      t.data_type = static_cast<int>(f.varint);
    else if (f.number == kTensorDataLocation && f.wire == 0)
      t.external = f.varint == 1;
    else if (f.number == kTensorDims) {
      for (auto d : varints(f)) t.dims.push_back(static_cast<std::int64_t>(d));
    }
  }
  return t;
}

bool is_op(const Node* n, std::string_view op) { return n && n->op == op && n->domain.empty(); }

std::optional<std::int64_t> int_attribute(const Node& n, std::string_view name) {
  for (const auto& f : attribute_fields(n, name)) {
    if (f.number == kAttrI && f.wire == 0) return static_cast<std::int64_t>(f.varint);
  }
  return std::nullopt;
}

std::vector<std::int64_t> ints_attribute(const Node& n, std::string_view name) {
  std::vector<std::int64_t> out;
  for (const auto& f : attribute_fields(n, name)) {
    if (f.number != kAttrInts) continue;
    for (auto v : varints(f)) out.push_back(static_cast<std::int64_t>(v));
  }
  return out;
}

int default_opset(const std::vector<Field>& model, bool* has_microsoft) {
  int version = 0;
  for (const auto& f : model) {
    if (f.number != kModelOpsetImport || f.wire != 2) continue;
    std::string_view domain;
    int v = 0;
    for (const auto& of : parse(f.bytes)) {
      if (of.number == kOpsetDomain && of.wire == 2)
        domain = of.bytes;
      else if (of.number == kOpsetVersion && of.wire == 0)
        v = static_cast<int>(of.varint);
    }
    if (domain.empty() || domain == "ai.onnx") version = v;
    if (domain == "com.microsoft") *has_microsoft = true;
  }
  return version;
}

GraphView::GraphView(const std::vector<Field>& fields) {
  for (const auto& f : fields) {
    if (f.wire != 2) continue;
    if (f.number == kGraphNode)
      nodes_.push_back(read_node(f));
    else if (f.number == kGraphInitializer)
      read_initializer(f.bytes);
    else if (f.number == kGraphInput || f.number == kGraphOutput)
      read_value_info(f);
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

const Node* GraphView::node_of(const Field& f) const {
  auto it = by_field_.find(&f);
  return it == by_field_.end() ? nullptr : &nodes_[static_cast<size_t>(it->second)];
}

const Node* GraphView::producer(const std::string& tensor) const {
  auto it = producer_.find(tensor);
  return it == producer_.end() ? nullptr : &nodes_[static_cast<size_t>(it->second)];
}

std::vector<int> GraphView::readers(const std::string& tensor) const {
  auto it = consumers_.find(tensor);
  std::vector<int> r = it == consumers_.end() ? std::vector<int>{} : it->second;
  if (graph_outputs_.contains(tensor)) r.push_back(-1);
  return r;
}

bool GraphView::only_reader(const std::string& tensor, const Node* reader) const {
  const auto r = readers(tensor);
  return r.size() == 1 && r[0] == index(reader);
}

bool GraphView::name_taken(std::string_view prefix) const {
  auto it = names_.lower_bound(std::string(prefix));
  return it != names_.end() && it->compare(0, prefix.size(), prefix) == 0;
}

std::string GraphView::unused_prefix(std::string_view base) const {
  if (!name_taken(base)) return std::string(base);
  // The prefixes "<base><k>_" are prefix-free: each name blocks at most one k, so one of
  // 0..count is free.
  const auto first = names_.lower_bound(std::string(base));
  auto starts = [&](const std::string& n) { return n.compare(0, base.size(), base) == 0; };
  size_t count = 0;
  for (auto it = first; it != names_.end() && starts(*it); ++it) ++count;
  std::vector<bool> blocked(count + 1, false);
  for (auto it = first; it != names_.end() && starts(*it); ++it) {
    size_t k = 0, p = base.size();
    for (; p < it->size() && p - base.size() < 19 && (*it)[p] >= '0' && (*it)[p] <= '9'; ++p) k = k * 10 + size_t((*it)[p] - '0');
    const bool number = p > base.size() && p < it->size() && (*it)[p] == '_' && ((*it)[base.size()] != '0' || p == base.size() + 1);
    if (number && k <= count) blocked[k] = true;
  }
  size_t k = 0;
  while (blocked[k]) ++k;
  return std::string(base) + std::to_string(k) + "_";
}

std::optional<float> GraphView::scalar_constant(const std::string& tensor) const {
  if (auto t = constant_tensor(tensor)) return scalar_tensor(*t);
  const Node* p = producer(tensor);
  if (!is_op(p, "Constant")) return std::nullopt;
  for (const auto& a : p->attributes) {
    std::string_view name;
    std::optional<float> v;
    for (const auto& f : parse(a.bytes)) {
      if (f.number == kAttrName && f.wire == 2)
        name = f.bytes;
      else if (f.number == kAttrF && f.wire == 5)
        v = float_from_le(f.bytes);
    }
    if (name == "value_float") return v;
  }
  return std::nullopt;
}

std::optional<std::int64_t> GraphView::int64_constant(const std::string& tensor) const {
  auto t = constant_tensor(tensor);
  return t ? int64_scalar_tensor(*t) : std::nullopt;
}

// The TensorProto of an initializer (not overridable as a graph input) or a Constant node's
// `value`.
std::optional<std::string_view> GraphView::constant_tensor(const std::string& tensor) const {
  if (graph_inputs_.contains(tensor)) return std::nullopt;
  if (auto it = initializers_.find(tensor); it != initializers_.end()) return it->second;
  const Node* p = producer(tensor);
  if (!is_op(p, "Constant")) return std::nullopt;
  for (const auto& a : p->attributes) {
    std::string_view name, value;
    for (const auto& f : parse(a.bytes)) {
      if (f.number == kAttrName && f.wire == 2)
        name = f.bytes;
      else if (f.number == kAttrT && f.wire == 2)
        value = f.bytes;
    }
    if (name == "value" && !value.empty()) return value;
  }
  return std::nullopt;
}

void GraphView::read_initializer(std::string_view tensor) {
  std::string name;
  for (const auto& f : parse(tensor)) {
    if (f.number == kTensorName && f.wire == 2) name = f.bytes;
  }
  names_.insert(name);
  initializers_[name] = tensor;
}

void GraphView::read_value_info(const Field& f) {
  for (const auto& vf : parse(f.bytes)) {
    if (vf.number != kValueInfoName || vf.wire != 2) continue;
    names_.insert(std::string(vf.bytes));
    (f.number == kGraphInput ? graph_inputs_ : graph_outputs_).insert(std::string(vf.bytes));
  }
}

}  // namespace sam3::optimize::onnx
