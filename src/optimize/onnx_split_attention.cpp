#include "optimize/onnx_split_attention.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "optimize/onnx_fields.h"
#include "optimize/protobuf_wire.h"

namespace sam3::optimize {
namespace {

using namespace onnx;
using wire::parse;

// The node's attributes as {name: int or float}; nullopt when one is of another kind.
struct Attributes {
  std::optional<std::int64_t> num_heads, unidirectional;
  float scale = 0.0f;
  bool other = false;  // an attribute this kernel does not know
};

Attributes attributes_of(const Node& n) {
  Attributes a;
  for (const auto& attr : n.attributes) {
    std::string name;
    std::optional<std::int64_t> i;
    std::optional<float> f;
    for (const auto& af : parse(attr.bytes)) {
      if (af.number == kAttrName && af.wire == 2) name = af.bytes;
      if (af.number == kAttrI && af.wire == 0) i = static_cast<std::int64_t>(af.varint);
      if (af.number == kAttrF && af.wire == 5 && af.bytes.size() == 4) {
        float v;
        std::memcpy(&v, af.bytes.data(), 4);  // little-endian, as wasm32 and x86
        f = v;
      }
    }
    if (name == "num_heads" && i)
      a.num_heads = i;
    else if (name == "scale" && f)
      a.scale = *f;
    else if (name == "unidirectional" && i)
      a.unidirectional = i;
    else if (name == "mask_filter_value")
      continue;  // (no mask: not read)
    else
      a.other = true;
  }
  return a;
}

}  // namespace

void match_attention(const onnx::GraphView& g, std::vector<KernelStep>& steps) {
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    if (n.op != "MultiHeadAttention" || n.domain != "com.microsoft" || n.inputs.size() != 3 || n.outputs.size() != 1) continue;
    if (n.inputs[0].empty() || n.inputs[1].empty() || n.inputs[2].empty() || n.outputs[0].empty()) continue;
    // (a constant key or value would have to be fed from the file: left to ONNX Runtime)
    if (g.constant_tensor(n.inputs[0]) || g.constant_tensor(n.inputs[1]) || g.constant_tensor(n.inputs[2])) continue;
    const Attributes a = attributes_of(n);
    if (a.other || !a.num_heads || *a.num_heads < 1 || a.unidirectional.value_or(0) != 0) continue;
    KernelStep s{.kind = "attention",
                 .first = static_cast<int>(i),
                 .nodes = {static_cast<int>(i)},
                 .inputs = {n.inputs[0], n.inputs[1], n.inputs[2]},
                 .output = n.outputs[0]};
    s.fields = {{"q", n.inputs[0]}, {"k", n.inputs[1]}, {"v", n.inputs[2]}, {"heads", *a.num_heads}, {"scale", a.scale}};
    steps.push_back(std::move(s));
  }
}

}  // namespace sam3::optimize
