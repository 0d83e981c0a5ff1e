#!/usr/bin/env python3
"""Generates small ONNX graphs with attention written out op by op, in the forms exports use,
for the tests of the attention fusion (src/optimize/onnx_attention.h). Each file's name says
how many attention blocks the fusion must replace:

  scaled_4d.fuse1.onnx         Transpose(K) -> MatMul -> Mul(scale) -> Softmax -> MatMul, [B, H, T, D]
  torch_sqrt_scale.fuse1.onnx  PyTorch's SDPA export: Q * sqrt(s) and K^T * sqrt(s) (Constant nodes)
  torch_sdpa_default_scale.fuse1.onnx  the same with the default scale computed from Shape(Q)
  div_scale_3d.fuse1.onnx      [B * H, T, D], Div(scores, sqrt(D)), Softmax(axis=2)
  projected.fuse2.onnx         two heads-split blocks from one input, K^T shared by both
  masked.fuse0.onnx            a mask added to the scores: left alone
  scores_read_twice.fuse0.onnx the scores are also a graph output: left alone
  external/projected.onnx      projected.fuse2 with its weights in projected.onnx.data

  make_attention_models.py --out DIR
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

import onnx_graph
from onnx_graph import tensor

rng = np.random.default_rng(7)
F = TensorProto.FLOAT


def attention_tail(g, q, kt, scale_op=("Mul", 0.25), axis=-1, mask=None, extra_scores=False):
    scores = g.op("MatMul", [q, kt])
    if extra_scores:
        g.name(scores, "scores")
    if scale_op:
        scores = g.op(scale_op[0], [scores, g.const(np.float32(scale_op[1]))])
    if mask is not None:
        scores = g.op("Add", [scores, mask])
    return g.op("Softmax", [scores], axis=axis)


def save(g, path, inputs, outputs):
    g.save(path, inputs, outputs, os.path.basename(path), "sam3cpp-attention-models")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    out = ap.parse_args().out
    os.makedirs(out, exist_ok=True)
    qkv4 = [tensor("q", F, [2, 3, 7, 8]), tensor("k", F, [2, 3, 5, 8]), tensor("v", F, [2, 3, 5, 6])]

    g = onnx_graph.Graph()
    p = attention_tail(g, "q", g.op("Transpose", ["k"], perm=[0, 1, 3, 2]))
    g.name(g.op("MatMul", [p, "v"]), "out")
    save(g, os.path.join(out, "scaled_4d.fuse1.onnx"), qkv4, [tensor("out", F, [2, 3, 7, 6])])

    g = onnx_graph.Graph()
    half = g.op("Constant", [], value=helper.make_tensor("v", F, [], [8 ** -0.25]))
    q = g.op("Mul", ["q", half])
    kt = g.op("Mul", [g.op("Transpose", ["k"], perm=[0, 1, 3, 2]), half])
    p = attention_tail(g, q, kt, scale_op=None)
    g.name(g.op("MatMul", [p, "v"]), "out")
    save(g, os.path.join(out, "torch_sqrt_scale.fuse1.onnx"), qkv4, [tensor("out", F, [2, 3, 7, 6])])

    # As torch.onnx (opset 14+ symbolic) writes scaled_dot_product_attention without a scale:
    # 1 / sqrt(Q's last dimension) from Shape, a Sqrt of it on each side.
    g = onnx_graph.Graph()
    def constant(value, dtype):
        return g.op("Constant", [], value=helper.make_tensor("c", dtype, [1], [value]))
    last = g.op("Slice", [g.op("Shape", ["q"]), constant(-1, TensorProto.INT64), constant(2 ** 63 - 1, TensorProto.INT64)])
    scale = g.op("Div", [constant(1.0, F), g.op("Sqrt", [g.op("Cast", [last], to=F)])])
    scale = g.op("Cast", [scale], to=F)
    q = g.op("Mul", ["q", g.op("Sqrt", [scale])])
    kt = g.op("Mul", [g.op("Transpose", ["k"], perm=[0, 1, 3, 2]), g.op("Sqrt", [scale])])
    p = attention_tail(g, q, kt, scale_op=None)
    g.name(g.op("MatMul", [p, "v"]), "out")
    save(g, os.path.join(out, "torch_sdpa_default_scale.fuse1.onnx"), qkv4, [tensor("out", F, [2, 3, 7, 6])])

    g = onnx_graph.Graph()
    p = attention_tail(g, "q", g.op("Transpose", ["k"], perm=[0, 2, 1]), scale_op=("Div", np.sqrt(8)), axis=2)
    g.name(g.op("MatMul", [p, "v"]), "out")
    save(g, os.path.join(out, "div_scale_3d.fuse1.onnx"),
         [tensor("q", F, [6, 7, 8]), tensor("k", F, [6, 5, 8]), tensor("v", F, [6, 5, 8])], [tensor("out", F, [6, 7, 8])])

    # Projections and head splits before, the merge of heads after; one K^T read by two blocks.
    g = onnx_graph.Graph()
    def heads(t):  # [1, T, 16] -> [1, 2, T, 8]
        return g.op("Transpose", [g.op("Reshape", [t, g.ints([0, 0, 2, 8])])], perm=[0, 2, 1, 3])
    def proj(t):
        return g.op("MatMul", [t, g.const(rng.normal(0, 0.3, (16, 16)).astype(np.float32))])
    kt = g.op("Transpose", [heads(proj("x"))], perm=[0, 1, 3, 2])
    v = heads(proj("x"))
    outs = []
    for i in range(2):
        p = attention_tail(g, heads(proj("x")), kt, scale_op=("Mul", 8 ** -0.5))
        merged = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [p, v])], perm=[0, 2, 1, 3]), g.ints([0, 0, 16])])
        outs.append(g.name(merged, f"out{i}"))
    save(g, os.path.join(out, "projected.fuse2.onnx"), [tensor("x", F, [1, 9, 16])],
         [tensor("out0", F, [1, 9, 16]), tensor("out1", F, [1, 9, 16])])
    # The same graph with its projection weights in an external data file (as large exports are).
    os.makedirs(os.path.join(out, "external"), exist_ok=True)
    onnx.save(onnx.load(os.path.join(out, "projected.fuse2.onnx")), os.path.join(out, "external", "projected.onnx"),
              save_as_external_data=True, location="projected.onnx.data", size_threshold=512)

    # Many queries over a few keys, as the tracker decoder's image tokens attend to its prompt
    # tokens: the query chunks widen to hold as many scores as chunks over many keys would.
    g = onnx_graph.Graph()
    p = attention_tail(g, "q", g.op("Transpose", ["k"], perm=[0, 1, 3, 2]))
    g.name(g.op("MatMul", [p, "v"]), "out")
    save(g, os.path.join(out, "few_keys.fuse1.onnx"),
         [tensor("q", F, [1, 2, 40, 8]), tensor("k", F, [1, 2, 3, 8]), tensor("v", F, [1, 2, 3, 6])],
         [tensor("out", F, [1, 2, 40, 6])])

    g = onnx_graph.Graph()
    mask = g.const(np.triu(np.full((7, 5), -1e4, np.float32), 1).reshape(1, 1, 7, 5))
    p = attention_tail(g, "q", g.op("Transpose", ["k"], perm=[0, 1, 3, 2]), mask=mask)
    g.name(g.op("MatMul", [p, "v"]), "out")
    save(g, os.path.join(out, "masked.fuse0.onnx"), qkv4, [tensor("out", F, [2, 3, 7, 6])])

    g = onnx_graph.Graph()
    p = attention_tail(g, "q", g.op("Transpose", ["k"], perm=[0, 1, 3, 2]), extra_scores=True)
    g.name(g.op("MatMul", [p, "v"]), "out")
    save(g, os.path.join(out, "scores_read_twice.fuse0.onnx"), qkv4,
         [tensor("out", F, [2, 3, 7, 6]), tensor("scores", F, [2, 3, 7, 5])])


if __name__ == "__main__":
    main()
