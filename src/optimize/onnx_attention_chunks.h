// Bounds the memory of com.microsoft.MultiHeadAttention nodes (what onnx_attention.h writes) on
// ONNX Runtime builds without its flash path: ONNX Runtime Web's WASM build reports no L2 cache
// size, so its CPU kernel takes the unfused path and materialises the whole
// [batch * heads, queries, keys] score matrix (16 x 5184 x 5184 floats, 1.7 GB, in each global
// block of SAM3's ViT). Each node with separate query, key and value (3-D query) becomes a Loop
// over chunks of at most `max_queries` queries, each chunk one MultiHeadAttention over all keys:
//
//   n = ceil(T / max_queries), chunk = ceil(T / n)    (T, the query count, read at run time)
//   Loop i < n: MultiHeadAttention(Pad(Q)[:, i * chunk : (i + 1) * chunk], K, V)
//   -> [n, B, chunk, Dv] -> [B, n * chunk, Dv] -> the first T rows
//
// The chunks split nothing the softmax runs over (each query attends to every key), so the
// results equal the unchunked node's; a node with T <= max_queries runs once, unpadded. The
// shapes are read at run time, so the rewrite needs no shape inference. Nodes with a mask,
// bias or packed inputs are left alone. Works on the serialized protobuf, like the others here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sam3::optimize {

struct AttentionChunkStats {
  int chunked = 0;  // MultiHeadAttention nodes turned into loops over query chunks
};

// Returns the rewritten model bytes (the input unchanged when no node qualifies). Throws
// sam3::Error(kModelMismatch) on a malformed file, kInvalidArgument for max_queries < 1.
std::string chunk_attention_queries(std::string_view model_bytes, std::int64_t max_queries, AttentionChunkStats* stats);

}  // namespace sam3::optimize
