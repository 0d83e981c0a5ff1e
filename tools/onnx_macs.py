#!/usr/bin/env python3
"""Multiply-accumulates of each graph of a bundle, from its ONNX files alone (the weights are not
read): MatMul, Gemm, Conv and ConvTranspose after shape inference, with the dynamic dimensions
given their bench values. For docs/video.md's "where the time goes" on the SAM 3.1-shaped bench
bundle (tools/make_sam31_bench_bundle.py).

  onnx_macs.py BUNDLE_DIR [--memory-frames 7] [--pointer-frames 16] [--boxes 0]
"""
import argparse
import glob
import os

import numpy as np
import onnx
from onnx import shape_inference


def dims_of(value_info):
    return [d.dim_value if d.HasField("dim_value") else None for d in value_info.type.tensor_type.shape.dim]


def macs(model, fixed):
    g = model.graph
    for i in g.input:
        for d in i.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param in fixed:
                value = fixed[d.dim_param]
                d.ClearField("dim_param")
                d.dim_value = value
    inferred = shape_inference.infer_shapes(model, data_prop=True)
    shapes = {v.name: dims_of(v) for v in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output)}
    for t in inferred.graph.initializer:
        shapes[t.name] = list(t.dims)
    total, unknown = 0, 0
    for n in inferred.graph.node:
        if n.op_type in ("MatMul", "Gemm"):
            a, b = shapes.get(n.input[0]), shapes.get(n.input[1])
            out = shapes.get(n.output[0])
            if not a or not b or not out or None in a or None in out or None in b:
                unknown += 1
                continue
            total += int(np.prod(out)) * a[-1]
        elif n.op_type in ("Conv", "ConvTranspose"):
            w, out = shapes.get(n.input[1]), shapes.get(n.output[0])
            if not w or not out or None in out or None in w:
                unknown += 1
                continue
            if n.op_type == "Conv":
                total += int(np.prod(out)) * int(np.prod(w[1:]))          # out pixels x (cin/groups x k x k)
            else:
                total += int(np.prod(shapes[n.input[0]])) * int(np.prod(w[1:]))  # in pixels x (cout x k x k)
    return total, unknown


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle")
    ap.add_argument("--memory-frames", type=int, default=7)
    ap.add_argument("--pointer-frames", type=int, default=16)
    ap.add_argument("--boxes", type=int, default=1)
    args = ap.parse_args()
    ti = args.memory_frames * 72 * 72
    fixed = {"T": ti + 16 * args.pointer_frames, "Ti": ti, "N": args.boxes, "B": 1, "P": 2}
    print("| graph | G multiply-accumulates a call |")
    print("|---|---:|")
    for path in sorted(glob.glob(os.path.join(args.bundle, "*.onnx"))):
        model = onnx.load(path, load_external_data=False)
        total, unknown = macs(model, fixed)
        note = f" ({unknown} products of unknown shape)" if unknown else ""
        print(f"| {os.path.basename(path)} | {total / 1e9:.1f}{note} |")


if __name__ == "__main__":
    main()
