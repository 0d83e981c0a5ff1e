#!/usr/bin/env python3
"""Generates a small ONNX graph of MatMulInteger nodes in the forms the int8 kernels must
reproduce exactly, for the tests of the oneDNN int8 products (src/kernels/onednn_int8.h). Every
node reads DynamicQuantizeLinear's output and writes a graph output (int32), so a test compares
the raw integer products:

  y_published   [2, 37, 64] x uint8 [64, 48], uint8 scalar zero point (what quantize_dynamic writes)
  y_per_column  [2, 37, 64] x uint8 [64, 48], one uint8 zero point per column
  y_no_b_zp     [5, 19] x int8 [19, 33], no weight zero point (K not a multiple of 4)
  y_no_zp       [5, 19] x int8 [19, 1], neither zero point (one column)
  y_extreme     [3, 4736] x int8 [4736, 40], weights -128 and 127, zero point -128: the largest
                sums (16-bit intermediate sums would saturate)
  y_shared      [2, 37, 64] x y_published's weights again (a weight read by two nodes)

and linears.onnx, the whole quantized patterns (DynamicQuantizeLinear -> MatMulInteger or
ConvInteger -> Cast -> Mul by the scales, float outputs) for the rewrite into float operators
(src/optimize/onnx_int8_as_float.h):

  y_published   x_a [2, 37, 64] x uint8 [64, 48], scalar zero point
  y_per_column  x_a again (one quantizer, two products), one uint8 zero point per column
  y_no_b_zp     x_b [5, 19] x int8 [19, 33], no weight zero point
  y_extreme     x_c [3, 4736] x int8 extremes, zero point -128
  y_conv        x_img [1, 3, 12, 10] ConvInteger, uint8 [6, 3, 3, 3], scalar zero point (ONNX
                Runtime's ConvInteger takes no other), stride 2, padding 1
  y_kept        x_b again, its int32 product read by an Add: left alone, and x_b's quantizer with it

and linears_bias.onnx, the patterns the browser's own int8 kernel takes (the graph split at its
linear layers, src/optimize/onnx_split_linears.h) chained over three segments:

  y_bias        x_d [2, 9, 40] x uint8 [40, 24], scalar zero point, + bias [24]
  y_columns     x_d again, uint8 [40, 24], one zero point and one scale per column, bias [1, 1, 24] added first
  y_chain       GELU(y_bias) quantized again x int8 [24, 33] (no zero point), + x_e [33], read with a
                residual: y_chain = that + x_e (x_e crosses two segments)
  y_odd         x_f [7, 301] x int8 [301, 5] (K not a multiple of 4), zero point -3

and int8_blocks.onnx, four residual blocks alike (x [2, 9, 24] -> x + linear(Relu(x)), uint8
[24, 24] each): segments of the same size, whose bytes the split must not mistake for one another
(it did: a blob-sharing map kept views of freed segments).

  make_int8_models.py --out DIR
"""
import argparse
import os

import numpy as np
from onnx import TensorProto

import onnx_graph
from onnx_graph import tensor

rng = np.random.default_rng(26)
F, I32 = TensorProto.FLOAT, TensorProto.INT32


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    g = onnx_graph.Graph()
    q = {}
    for x in ("x_a", "x_b", "x_c"):
        q[x] = g.op("DynamicQuantizeLinear", [x], outputs=3)
    w_u8 = g.const(rng.integers(0, 256, (64, 48)), np.uint8)
    outs = {}
    outs["y_published"] = g.op("MatMulInteger", [q["x_a"][0], w_u8, q["x_a"][2], g.const(np.uint8(131), np.uint8)])
    outs["y_per_column"] = g.op("MatMulInteger", [q["x_a"][0], g.const(rng.integers(0, 256, (64, 48)), np.uint8),
                                                  q["x_a"][2], g.const(rng.integers(0, 256, 48), np.uint8)])
    outs["y_no_b_zp"] = g.op("MatMulInteger", [q["x_b"][0], g.const(rng.integers(-128, 128, (19, 33)), np.int8),
                                               q["x_b"][2]])
    outs["y_no_zp"] = g.op("MatMulInteger", [q["x_b"][0], g.const(rng.integers(-128, 128, (19, 1)), np.int8)])
    extreme = np.where(rng.random((4736, 40)) < 0.5, -128, 127).astype(np.int8)
    outs["y_extreme"] = g.op("MatMulInteger", [q["x_c"][0], g.const(extreme, np.int8), q["x_c"][2],
                                               g.const(np.int8(-128), np.int8)])
    outs["y_shared"] = g.op("MatMulInteger", [q["x_a"][0], w_u8, q["x_a"][2], g.const(np.uint8(131), np.uint8)])
    for name, t in outs.items():
        g.name(t, name)
    inputs = [tensor("x_a", F, [2, 37, 64]), tensor("x_b", F, [5, 19]), tensor("x_c", F, [3, 4736])]
    shapes = {"y_published": [2, 37, 48], "y_per_column": [2, 37, 48], "y_no_b_zp": [5, 33], "y_no_zp": [5, 1],
              "y_extreme": [3, 40], "y_shared": [2, 37, 48]}
    g.save(os.path.join(args.out, "matmulinteger.onnx"), inputs, [tensor(n, I32, shapes[n]) for n in outs],
           "int8 products", "sam3cpp make_int8_models.py")
    linears(os.path.join(args.out, "linears.onnx"))
    linears_bias(os.path.join(args.out, "linears_bias.onnx"))
    int8_blocks(os.path.join(args.out, "int8_blocks.onnx"))


def linears(path):
    g = onnx_graph.Graph()
    q = {x: g.op("DynamicQuantizeLinear", [x], outputs=3) for x in ("x_a", "x_b", "x_c", "x_img")}

    def scaled(x, acc, w_scale):  # Cast -> Mul(activation scale * weight scale), as quantize_dynamic writes it
        return g.op("Mul", [g.op("Cast", [acc], to=TensorProto.FLOAT), g.op("Mul", [q[x][1], g.const(np.float32(w_scale))])])

    def product(x, op, weight, dtype, zp=None, **attrs):
        inputs = [q[x][0], g.const(weight, dtype), q[x][2]] + ([g.const(zp, dtype)] if zp is not None else [])
        return g.op(op, inputs, **attrs)

    outs = {
        "y_published": scaled("x_a", product("x_a", "MatMulInteger", rng.integers(0, 256, (64, 48)), np.uint8, np.uint8(131)), 0.02),
        "y_per_column": scaled("x_a", product("x_a", "MatMulInteger", rng.integers(0, 256, (64, 48)), np.uint8,
                                              rng.integers(0, 256, 48)), 0.03),
        "y_no_b_zp": scaled("x_b", product("x_b", "MatMulInteger", rng.integers(-128, 128, (19, 33)), np.int8), 0.05),
        "y_extreme": scaled("x_c", product("x_c", "MatMulInteger", np.where(rng.random((4736, 40)) < 0.5, -128, 127), np.int8,
                                           np.int8(-128)), 1e-3),
        "y_conv": scaled("x_img", product("x_img", "ConvInteger", rng.integers(0, 256, (6, 3, 3, 3)), np.uint8,
                                          np.uint8(120), strides=[2, 2], pads=[1, 1, 1, 1]), 0.01),
    }
    acc = product("x_b", "MatMulInteger", rng.integers(0, 256, (19, 7)), np.uint8, np.uint8(128))
    outs["y_kept"] = g.op("Cast", [g.op("Add", [acc, g.const(np.int32(1), np.int32)])], to=TensorProto.FLOAT)
    for name, t in outs.items():
        g.name(t, name)
    inputs = [tensor("x_a", F, [2, 37, 64]), tensor("x_b", F, [5, 19]), tensor("x_c", F, [3, 4736]),
              tensor("x_img", F, [1, 3, 12, 10])]
    shapes = {"y_published": [2, 37, 48], "y_per_column": [2, 37, 48], "y_no_b_zp": [5, 33], "y_extreme": [3, 40],
              "y_conv": [1, 6, 6, 5], "y_kept": [5, 7]}
    g.save(path, inputs, [tensor(n, F, shapes[n]) for n in outs], "quantized linears", "sam3cpp make_int8_models.py")


def linears_bias(path):
    g = onnx_graph.Graph()

    def linear(x, weight, dtype, zp, w_scale, bias=None, bias_first=False):
        xq, xs, xzp = g.op("DynamicQuantizeLinear", [x], outputs=3)
        inputs = [xq, g.const(weight, dtype), xzp] + ([g.const(zp, dtype)] if zp is not None else [])
        acc = g.op("MatMulInteger", inputs)
        y = g.op("Mul", [g.op("Cast", [acc], to=TensorProto.FLOAT), g.op("Mul", [xs, g.const(np.asarray(w_scale, np.float32))])])
        if bias is not None:
            b = g.const(np.asarray(bias, np.float32))
            y = g.op("Add", [b, y] if bias_first else [y, b])
        return y

    outs = {}
    outs["y_bias"] = linear("x_d", rng.integers(0, 256, (40, 24)), np.uint8, np.uint8(120), 0.02, rng.normal(0, 0.5, 24))
    outs["y_columns"] = linear("x_d", rng.integers(0, 256, (40, 24)), np.uint8, rng.integers(0, 256, 24).astype(np.uint8),
                               rng.uniform(0.01, 0.03, 24), rng.normal(0, 0.5, (1, 1, 24)), bias_first=True)
    erf = g.op("Erf", [g.op("Div", [outs["y_bias"], g.const(np.float32(np.sqrt(2)))])])
    gelu = g.op("Mul", [g.op("Mul", [outs["y_bias"], g.op("Add", [erf, g.const(np.float32(1.0))])]), g.const(np.float32(0.5))])
    chained = linear(gelu, rng.integers(-128, 128, (24, 33)), np.int8, None, 0.05, rng.normal(0, 0.5, 33))
    outs["y_chain"] = g.op("Add", [chained, "x_e"])
    outs["y_odd"] = linear("x_f", rng.integers(-128, 128, (301, 5)), np.int8, np.int8(-3), 0.004)
    for name, t in outs.items():
        g.name(t, name)
    inputs = [tensor("x_d", F, [2, 9, 40]), tensor("x_e", F, [33]), tensor("x_f", F, [7, 301])]
    shapes = {"y_bias": [2, 9, 24], "y_columns": [2, 9, 24], "y_chain": [2, 9, 33], "y_odd": [7, 5]}
    g.save(path, inputs, [tensor(n, F, shapes[n]) for n in outs], "quantized linears with biases", "sam3cpp make_int8_models.py")


def int8_blocks(path):
    g = onnx_graph.Graph()
    x = "x"
    for _ in range(4):
        xq, xs, xzp = g.op("DynamicQuantizeLinear", [g.op("Relu", [x])], outputs=3)
        acc = g.op("MatMulInteger", [xq, g.const(rng.integers(0, 256, (24, 24)), np.uint8), xzp])
        y = g.op("Mul", [g.op("Cast", [acc], to=TensorProto.FLOAT), g.op("Mul", [xs, g.const(np.float32(0.01))])])
        x = g.op("Add", [x, y])
    g.name(x, "y")
    g.save(path, [tensor("x", F, [2, 9, 24])], [tensor("y", F, [2, 9, 24])], "residual int8 blocks alike", "sam3cpp make_int8_models.py")


if __name__ == "__main__":
    main()
