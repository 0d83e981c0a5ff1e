// A rewritten GraphProto kept as pieces (views of the original bytes and new fields) and written
// into the model once: a rewrite of a large file then holds the input and the output, not a
// third copy of the graph in between (what the browser's memory needs).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "optimize/onnx_fields.h"
#include "optimize/protobuf_wire.h"

namespace sam3::optimize {

struct GraphPieces {
  std::vector<std::string_view> views;
  std::deque<std::string> owned;  // (a deque: views of its strings stay valid)
  size_t size = 0;
  void copy(std::string_view v) {
    views.push_back(v);
    size += v.size();
  }
  void add(std::string s) {
    owned.push_back(std::move(s));
    copy(owned.back());
  }
};

// `model` (its parsed fields) with `graph_field`'s payload replaced by the pieces and `tail`
// appended after the last field, written in one allocation.
inline std::string model_with_graph(std::string_view model_bytes, const std::vector<wire::Field>& model, const wire::Field& graph_field,
                                    const GraphPieces& graph, std::string_view tail = {}) {
  std::string out;
  out.reserve(model_bytes.size() - graph_field.bytes.size() + graph.size + tail.size() + 16);
  for (const auto& f : model) {
    if (&f != &graph_field) {
      out.append(f.whole);
      continue;
    }
    wire::write_varint(out, (static_cast<std::uint64_t>(onnx::kModelGraph) << 3) | 2);
    wire::write_varint(out, graph.size);
    for (auto v : graph.views) out.append(v);
  }
  out.append(tail);
  return out;
}

}  // namespace sam3::optimize
