// Bounds the memory of com.microsoft.MultiHeadAttention nodes (what onnx_attention.h writes) on
// ONNX Runtime builds without its flash path: ONNX Runtime Web's WASM build reports no L2 cache
// size, so its CPU kernel takes the unfused path and materialises the whole
// [batch * heads, queries, keys] score matrix (16 x 5184 x 5184 floats, 1.7 GB, in each global
// block of SAM3's ViT). Each node with separate query, key and value (3-D query) becomes a Loop
// over chunks of queries, each chunk one MultiHeadAttention over all keys, holding at most
// max_queries x max(S, max_queries) scores per head:
//
//   q = max_queries * max(1, max_queries / S)     (T queries, S keys, read at run time)
//   n = ceil(T / q), chunk = ceil(T / n)
//   Loop i < n: MultiHeadAttention(Pad(Q)[:, i * chunk : (i + 1) * chunk], K, V)
//   -> [n, B, chunk, Dv] -> [B, n * chunk, Dv] -> the first T rows
//
// So a global block of SAM3's ViT (5184 queries and keys) runs in ceil(5184 / max_queries)
// chunks, and attention over a few keys (the tracker decoder's image tokens attending to its
// 7 or so prompt tokens: 5184 x 8 scores per head) in one: chunks there only cost loop trips.
//
// The chunks split nothing the softmax runs over (each query attends to every key), so the
// results equal the unchunked node's; a node with T <= q runs once, unpadded. The
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
