#include "optimize/onnx_attention_chunks.h"

#include <cstdint>
#include <vector>

#include "optimize/graph_pieces.h"
#include "optimize/onnx_build.h"
#include "optimize/onnx_fields.h"
#include "optimize/onnx_graph_view.h"
#include "optimize/protobuf_wire.h"
#include "sam3/error.h"

namespace sam3::optimize {
namespace {

using namespace onnx;
using wire::Field;
using wire::parse;

// onnx.proto field numbers used only here.
constexpr int kGraphName = 2;
constexpr int kValueInfoType = 2, kTypeTensor = 1, kTensorTypeElem = 1, kTensorTypeShape = 2;
constexpr int kAttrG = 6, kAttrTypeGraph = 5;
constexpr int kBool = 9;

// A MultiHeadAttention with query, key and value only (3-D query: [batch, tokens, hidden]).
bool chunkable(const Node& n) {
  if (n.op != "MultiHeadAttention" || n.domain != "com.microsoft" || n.outputs.size() != 1) return false;
  if (n.inputs.size() != 3) return false;  // bias, masks, past state: left alone
  for (const auto& i : n.inputs) {
    if (i.empty()) return false;
  }
  return true;
}

// A scalar graph input or output of `elem_type` (0: the type left to inference).
std::string value_info(int field, const std::string& name, int elem_type) {
  std::string vi;
  wire::write_len(vi, kValueInfoName, name);
  if (elem_type != 0) {
    std::string tensor, type;
    wire::write_varint_field(tensor, kTensorTypeElem, static_cast<std::uint64_t>(elem_type));
    wire::write_len(tensor, kTensorTypeShape, "");  // no dims: a scalar
    wire::write_len(type, kTypeTensor, tensor);
    wire::write_len(vi, kValueInfoType, type);
  }
  std::string out;
  wire::write_len(out, field, vi);
  return out;
}

std::string graph_attr(const std::string& name, const std::string& graph) {
  std::string a;
  wire::write_len(a, kAttrName, name);
  wire::write_len(a, kAttrG, graph);
  wire::write_varint_field(a, kAttrType, kAttrTypeGraph);
  return a;
}

std::string int64_initializer(const std::string& name, const std::vector<std::int64_t>& values) {
  std::string t;
  wire::write_varint_field(t, kTensorDims, values.size());
  wire::write_varint_field(t, kTensorDataType, kInt64);
  wire::write_len(t, kTensorName, name);
  std::string raw;
  for (auto v : values) {
    const auto u = static_cast<std::uint64_t>(v);
    for (int i = 0; i < 8; ++i) raw.push_back(static_cast<char>((u >> (8 * i)) & 0xFF));
  }
  wire::write_len(t, kTensorRawData, raw);
  std::string field;
  wire::write_len(field, kGraphInitializer, t);
  return field;
}

struct Names {
  std::string prefix, one_index, c0, c1, cm1, step, zeros4;
};

// The loop replacing MultiHeadAttention `n` (index `k`): its nodes in the outer graph.
std::string chunked(const Names& c, const Node& n, int k) {
  const std::string p = c.prefix + std::to_string(k) + "_";
  const std::string &q = n.inputs[0], &key = n.inputs[1], &value = n.inputs[2];
  std::string out;
  // T and S (queries and keys), queries per chunk q = step * max(1, step / max(S, 1)) (a chunk
  // holds at most step * max(S, step) scores per head), n = ceil(T / q), chunk = ceil(T / n),
  // all int64 [1].
  out += node("Shape", {q}, p + "shape");
  out += node("Slice", {p + "shape", c.c1, c.one_index, c.c0}, p + "t");  // one_index: [2]
  out += node("Shape", {key}, p + "key_shape");
  out += node("Slice", {p + "key_shape", c.c1, c.one_index, c.c0}, p + "s_raw");
  out += node("Max", {p + "s_raw", c.c1}, p + "s");
  out += node("Div", {c.step, p + "s"}, p + "widen_raw");
  out += node("Max", {p + "widen_raw", c.c1}, p + "widen");
  out += node("Mul", {c.step, p + "widen"}, p + "queries");
  out += node("Add", {p + "t", p + "queries"}, p + "t_q");
  out += node("Sub", {p + "t_q", c.c1}, p + "t_up");
  out += node("Div", {p + "t_up", p + "queries"}, p + "n");
  out += node("Add", {p + "t", p + "n"}, p + "t_n");
  out += node("Sub", {p + "t_n", c.c1}, p + "t_n_1");
  out += node("Div", {p + "t_n_1", p + "n"}, p + "chunk");
  out += node("Mul", {p + "n", p + "chunk"}, p + "padded");
  out += node("Sub", {p + "padded", p + "t"}, p + "pad");
  // Pad the queries to n * chunk rows (at most n - 1 zero rows, dropped again below).
  out += node("Concat", {c.zeros4, p + "pad", c.c0}, p + "pads", {int_attr("axis", 0)});
  out += node("Pad", {q, p + "pads"}, p + "q");
  out += node("Squeeze", {p + "n", c.c0}, p + "trips");

  // The body: queries [i * chunk, (i + 1) * chunk) against every key.
  std::string body;
  wire::write_len(body, kGraphName, p + "body");
  std::vector<std::string> attrs;
  for (const auto& a : n.attributes) attrs.emplace_back(a.bytes);
  body += node("Mul", {p + "i", p + "chunk"}, p + "start");
  body += node("Add", {p + "start", p + "chunk"}, p + "end");
  body += node("Slice", {p + "q", p + "start", p + "end", c.c1}, p + "q_chunk");
  body += node("MultiHeadAttention", {p + "q_chunk", key, value}, p + "o_chunk", attrs, "com.microsoft");
  body += node("Identity", {p + "cond"}, p + "cond_out");
  body += value_info(kGraphInput, p + "i", kInt64);
  body += value_info(kGraphInput, p + "cond", kBool);
  body += value_info(kGraphOutput, p + "cond_out", kBool);
  body += value_info(kGraphOutput, p + "o_chunk", 0);
  out += node("Loop", {p + "trips", ""}, p + "stack", {graph_attr("body", body)});

  // [n, B, chunk, Dv] -> [B, n * chunk, Dv] -> the first T rows, written to the node's output.
  out += node("Transpose", {p + "stack"}, p + "batch_first", {ints_attr("perm", {1, 0, 2, 3})});
  out += node("Concat", {c.c0, p + "padded", c.cm1}, p + "joined_shape", {int_attr("axis", 0)});
  out += node("Reshape", {p + "batch_first", p + "joined_shape"}, p + "joined");
  out += node("Slice", {p + "joined", c.c0, p + "t", c.c1}, n.outputs[0]);
  return out;
}

}  // namespace

std::string chunk_attention_queries(std::string_view model_bytes, std::int64_t max_queries, AttentionChunkStats* stats) {
  AttentionChunkStats local;
  AttentionChunkStats& st = stats ? *stats : local;
  st = {};
  if (max_queries < 1) throw Error(ErrorCode::kInvalidArgument, "attention query chunks must hold at least one query");
  const auto model = parse(model_bytes);
  const Field& graph_field = wire::message_field(model, kModelGraph);
  bool has_microsoft = false;
  // Slice, Pad and Squeeze take their axes as inputs from opset 13 on.
  if (default_opset(model, &has_microsoft) < 13 || !has_microsoft) return std::string(model_bytes);

  const auto graph_fields = parse(graph_field.bytes);
  const GraphView g(graph_fields);
  Names c;
  c.prefix = g.unused_prefix("sam3_attention_chunks_");
  c.one_index = c.prefix + "c2", c.c0 = c.prefix + "c0", c.c1 = c.prefix + "c1", c.cm1 = c.prefix + "cm1";
  c.step = c.prefix + "step", c.zeros4 = c.prefix + "zeros4";

  GraphPieces new_graph;  // (views of the input: the rewrite holds two copies of a file, not three)
  for (const auto& f : graph_fields) {
    const Node* n = f.number == kGraphNode && f.wire == 2 ? g.node_of(f) : nullptr;
    if (n && chunkable(*n)) {
      new_graph.add(chunked(c, *n, st.chunked++));
      continue;
    }
    new_graph.copy(f.whole);
  }
  if (st.chunked == 0) return std::string(model_bytes);
  std::string constants;
  constants += int64_vector_initializer(c.one_index, 2);
  constants += int64_vector_initializer(c.c0, 0);
  constants += int64_vector_initializer(c.c1, 1);
  constants += int64_vector_initializer(c.cm1, -1);
  constants += int64_vector_initializer(c.step, max_queries);
  constants += int64_initializer(c.zeros4, {0, 0, 0, 0});
  new_graph.add(std::move(constants));
  return model_with_graph(model_bytes, model, graph_field, new_graph);
}

}  // namespace sam3::optimize
