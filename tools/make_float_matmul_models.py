#!/usr/bin/env python3
"""Generates float_matmuls.onnx, the float products the browser's own float kernel takes and
leaves (the graph split at them: src/optimize/onnx_split_matmuls.h, apps/web/kernels/float_gemm.c),
shaped as the interactive model's decoder shapes them, with rows known only through its shapes:

  y_image     image [1, 16, 12, 10] -> Reshape [1, 16, 120] -> Transpose [1, 120, 16] -> Expand to
              [objects, 120, 16] (objects read from labels' shape, unknown) -> MatMul [16, 40] +
              bias [40] (the bias first in the Add) -> Relu -> MatMul [40, 24] (no bias, K and N not
              multiples of 8) + a residual read of the first product: two products, each over at
              least 120 rows
  y_flat      image's tokens Reshape [-1, 16] (120 rows, inferred) -> MatMul [16, 33] + bias [1, 1, 33]
              given as a Constant node
  y_tokens    tokens [1, 7, 16] (7 rows: left alone) -> MatMul [16, 40] + bias
  y_dynamic   tokens x image tokens transposed (the second input not a constant: left alone)
  y_symbolic  x ["rows", 16] (rows unknown: left alone) -> MatMul [16, 16]
  y_gated     y_image + a gate made from image alone (Sigmoid, Reshape, Transpose, ReduceSum over
              channels: "gate" [1, 120, 1]), as the decoder's upscaling is made from the image
              embeddings and read only after the products: the split makes the gate in the segment
              reading it, not carried out of the first one
  y_pe        keys + pe (a constant [1, 120, 16], as the decoder adds its positional encoding) read
              by two products [16, 24] alone: the Add taken into both (x_add, one blob)
  y_pe_kept   pe + keys (the constant first) read by a product [16, 24] and by y_relu (Relu): the
              Add stays in the segment (its sum is read elsewhere)

and attention_projected.onnx, attention between products as a decoder has it (what the tab fuses
and chunks into a Loop before it splits): x [1, 120, 16] -> q, k, v projections [16, 16] -> two
heads' attention written op by op -> heads merged -> an output projection [16, 16] + bias, whose
input comes out of the chunks' Loop.

  make_float_matmul_models.py --out DIR
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onnx_graph
from onnx_graph import tensor

rng = np.random.default_rng(45)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    def w(*shape):
        return rng.normal(0, 1 / np.sqrt(shape[0]), shape).astype(np.float32)

    inits = [
        const("w1", w(16, 40)), const("b1", w(40)), const("w2", w(40, 24)), const("w3", w(16, 33)),
        const("w4", w(16, 40)), const("b4", w(40)), const("w5", w(16, 16)),
        const("shape_tokens", np.array([1, 16, 120], np.int64)), const("shape_flat", np.array([-1, 16], np.int64)),
        const("tail", np.array([120, 16], np.int64)), const("one", np.array([1], np.int64)), const("two", np.array([2], np.int64)),
        const("zero", np.array([0], np.int64)), const("w_res", w(40, 24)),
        const("pe", rng.normal(0, 1, (1, 120, 16)).astype(np.float32)), const("wq", w(16, 24)), const("wk", w(16, 24)),
    ]
    nodes = [
        helper.make_node("Reshape", ["image", "shape_tokens"], ["chw"]),
        helper.make_node("Transpose", ["chw"], ["tokens_img"], perm=[0, 2, 1]),
        helper.make_node("Shape", ["labels"], ["labels_shape"]),
        helper.make_node("Slice", ["labels_shape", "one", "two", "zero"], ["objects"]),
        helper.make_node("Concat", ["objects", "tail"], ["expand_shape"], axis=0),
        helper.make_node("Expand", ["tokens_img", "expand_shape"], ["keys"]),
        helper.make_node("MatMul", ["keys", "w1"], ["p1"]),
        helper.make_node("Add", ["b1", "p1"], ["h1"]),
        helper.make_node("Relu", ["h1"], ["r1"]),
        helper.make_node("MatMul", ["r1", "w2"], ["p2"]),
        helper.make_node("MatMul", ["h1", "w_res"], ["p_res"]),
        helper.make_node("Add", ["p2", "p_res"], ["y_image"]),
        helper.make_node("Reshape", ["tokens_img", "shape_flat"], ["flat"]),
        helper.make_node("Constant", [], ["b3"], value=const("b3_value", w(1, 1, 33))),
        helper.make_node("MatMul", ["flat", "w3"], ["p3"]),
        helper.make_node("Add", ["p3", "b3"], ["y_flat"]),
        helper.make_node("MatMul", ["tokens", "w4"], ["p4"]),
        helper.make_node("Add", ["p4", "b4"], ["y_tokens"]),
        helper.make_node("Transpose", ["tokens_img"], ["tokens_img_t"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["tokens", "tokens_img_t"], ["y_dynamic"]),
        helper.make_node("MatMul", ["x", "w5"], ["y_symbolic"]),
        helper.make_node("Sigmoid", ["image"], ["image_gate"]),
        helper.make_node("Reshape", ["image_gate", "shape_tokens"], ["gate_chw"]),
        helper.make_node("Transpose", ["gate_chw"], ["gate_tokens"], perm=[0, 2, 1]),
        helper.make_node("ReduceSum", ["gate_tokens", "two"], ["gate"], keepdims=1),
        helper.make_node("Add", ["y_image", "gate"], ["y_gated"]),
        helper.make_node("Add", ["keys", "pe"], ["keys_pe"]),
        helper.make_node("MatMul", ["keys_pe", "wq"], ["q_pe"]),
        helper.make_node("MatMul", ["keys_pe", "wk"], ["k_pe"]),
        helper.make_node("Add", ["q_pe", "k_pe"], ["y_pe"]),
        helper.make_node("Add", ["pe", "keys"], ["pe_keys"]),
        helper.make_node("MatMul", ["pe_keys", "wq"], ["y_pe_kept"]),
        helper.make_node("Relu", ["pe_keys"], ["y_relu"]),
    ]
    inputs = [
        helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 16, 12, 10]),
        helper.make_tensor_value_info("labels", TensorProto.INT64, [1, "objects", "points"]),
        helper.make_tensor_value_info("tokens", TensorProto.FLOAT, [1, 7, 16]),
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["rows", 16]),
    ]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y_image", "y_flat", "y_tokens", "y_dynamic", "y_symbolic", "y_gated", "y_pe", "y_pe_kept", "y_relu")]
    graph = helper.make_graph(nodes, "float_matmuls", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, os.path.join(args.out, "float_matmuls.onnx"))

    g = onnx_graph.Graph()
    def heads(t):  # [1, T, 16] -> [1, 2, T, 8]
        return g.op("Transpose", [g.op("Reshape", [t, g.ints([0, 0, 2, 8])])], perm=[0, 2, 1, 3])
    def proj(t):
        return g.op("MatMul", [t, g.const(w(16, 16))])
    kt = g.op("Transpose", [heads(proj("x"))], perm=[0, 1, 3, 2])
    scores = g.op("Mul", [g.op("MatMul", [heads(proj("x")), kt]), g.const(np.float32(8 ** -0.5))])
    o = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), heads(proj("x"))])
    merged = g.op("Reshape", [g.op("Transpose", [o], perm=[0, 2, 1, 3]), g.ints([0, 0, 16])])
    g.name(g.op("Add", [proj(merged), g.const(w(16))]), "y")
    g.save(os.path.join(args.out, "attention_projected.onnx"), [tensor("x", TensorProto.FLOAT, [1, 120, 16])],
           [tensor("y", TensorProto.FLOAT, [1, 120, 16])], "attention_projected", "sam3cpp-float-matmul-models")


if __name__ == "__main__":
    main()
