#!/usr/bin/env python3
"""Generates an ONNX graph of the float work that precision "fast" hands to oneDNN's bf16
kernels (src/kernels/onednn_bf16.h), for their tests: the same file run by ONNX Runtime as
written is the reference. Every node writes a graph output; dimensions are free.

  y_attention      com.microsoft MultiHeadAttention(q, k, v), one head, scale 0.3     (moved)
  y_default_scale  the same without a scale: 1 / sqrt(width)                          (moved)
  y_two_heads      the same with two heads                                            (stays)
  y_large          x [.., 512] @ W [512, 640], 327,680 weights >= kBf16MinWeights     (moved)
  y_small          x [.., 512] @ W [512, 16], below the threshold                     (stays)

  make_bf16_models.py --out DIR
"""
import argparse
import os

import numpy as np
from onnx import TensorProto

import onnx_graph
from onnx_graph import tensor

rng = np.random.default_rng(16)
F = TensorProto.FLOAT


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    g = onnx_graph.Graph()
    outs = {
        "y_attention": g.op("MultiHeadAttention", ["q", "k", "v"], domain="com.microsoft", num_heads=1, scale=0.3),
        "y_default_scale": g.op("MultiHeadAttention", ["q", "k", "v"], domain="com.microsoft", num_heads=1),
        "y_two_heads": g.op("MultiHeadAttention", ["q", "k", "v"], domain="com.microsoft", num_heads=2),
        "y_large": g.op("MatMul", ["x", g.const(rng.normal(0, 512 ** -0.5, (512, 640)).astype(np.float32))]),
        "y_small": g.op("MatMul", ["x", g.const(rng.normal(0, 512 ** -0.5, (512, 16)).astype(np.float32))]),
    }
    for name, t in outs.items():
        g.name(t, name)
    inputs = [tensor("q", F, ["b", "s", "d"]), tensor("k", F, ["b", "l", "d"]), tensor("v", F, ["b", "l", "dv"]),
              tensor("x", F, ["n", "m", 512])]
    shapes = {"y_attention": ["b", "s", "dv"], "y_default_scale": ["b", "s", "dv"], "y_two_heads": ["b", "s", "dv"],
              "y_large": ["n", "m", 640], "y_small": ["n", "m", 16]}
    g.save(os.path.join(args.out, "float_work.onnx"), inputs, [tensor(n, F, shapes[n]) for n in outs],
           "bf16 float work", "sam3cpp make_bf16_models.py")


if __name__ == "__main__":
    main()
