// Splits a graph at its com.microsoft.MultiHeadAttention nodes, for the browser's own attention
// kernel (apps/web/kernels/attention.c, docs/browser.md "The tab's own attention kernel"): ONNX
// Runtime Web's WASM kernel has no flash path (it holds every score of a chunk of queries), the
// tab's kernel streams the softmax over blocks of keys. Taken: the nodes the attention fusion
// writes (optimize/onnx_attention.h), query, key and value alone (3-D, no bias, mask or past
// state) with num_heads and an optional scale; any other form stays in the segments.
//
// Its bundle steps (optimize/onnx_split_graph.h): {"attention": {q, k, v, output, heads, scale
// (0: 1 / sqrt(head size))}}.
#pragma once

#include <vector>

#include "optimize/onnx_split_graph.h"

namespace sam3::optimize {

void match_attention(const onnx::GraphView& g, std::vector<KernelStep>& steps);

}  // namespace sam3::optimize
