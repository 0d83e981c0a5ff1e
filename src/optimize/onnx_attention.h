// Rewrites attention written out op by op (what PyTorch exports for scaled dot-product
// attention):
//     MatMul(Q [* s1], Transpose(K) [* s2]) [* s3 or / s3] -> Softmax(last axis) -> MatMul(., V)
// into ONNX Runtime's com.microsoft.MultiHeadAttention (one head per batch row, the given
// scale). Its CPU kernel computes attention block by block (flash attention), so the
// [heads, queries, keys] score matrix and its softmax are never materialised: for SAM3's global
// ViT blocks that is 2 x 1.7 GB, and it is also faster. Results equal the original within float
// rounding (the softmax is accumulated blockwise).
//
// Attention with a mask or bias added to the scores is left alone (ONNX Runtime's CPU kernel
// would materialise the scores anyway), as is any pattern whose intermediate results are used
// elsewhere. Works on the serialized protobuf, like the int8 rewrite.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sam3::optimize {

struct AttentionFusionStats {
  int fused = 0;  // attention patterns replaced by MultiHeadAttention
};

// Returns the rewritten model bytes (the input unchanged when nothing matched, or when the
// model's default opset is older than 13). Throws sam3::Error(kModelMismatch) on a malformed file.
std::string fuse_attention(std::string_view model_bytes, AttentionFusionStats* stats);

// The same, but nullopt (and no copy of the file) when nothing is fused: the browser's rewrite
// holds a file and its rewrite in a 32-bit memory, and a file with no attention to fuse (the
// text encoder's causal attention is masked) need not be copied at all.
std::optional<std::string> fuse_attention_if_any(std::string_view model_bytes, AttentionFusionStats* stats);

}  // namespace sam3::optimize
