#!/usr/bin/env python3
"""Generates a SAM3-shaped interactive (tracker) model with random weights for speed work, in the
hub layout of onnx-community/sam3-tracker-ONNX (sam3-facts.md section 1): outputs are meaningless,
costs are real.

  vision_encoder.onnx: the benchmark models' ViT trunk (tools/make_bench_models.py: 32 blocks,
      width 1024, 5184 tokens, uint8 weights as the public int8 files), then a neck to
      image_embeddings.0 [1,32,288,288], .1 [1,64,144,144], .2 [1,256,72,72]
  prompt_encoder_mask_decoder.onnx: SAM2's prompt encoder and mask decoder at their size (float
      weights): random-Fourier point encoding with label embeddings; a two-way transformer of 2
      layers (width 256, 8 heads, MLP 2048, cross-attention at 128) between the 6 + points
      tokens and the 5184 image tokens, repeated per object as SAM2 runs it; the final
      token-to-image attention; the upscaling (two 2x2 transposed convolutions with the 144 and
      288 skip features, LayerNorm2d, GELU) to 32 x 288 x 288 per object; four hypernetwork MLPs
      for the mask tokens, the IoU head (sigmoid) and the object-score head
      -> iou_scores [1,O,3], pred_masks [1,O,3,288,288], object_score_logits [1,O,1].
  The heads' biases make every candidate pass "segment everything"'s IoU and object-score
  filters (about 0.9 and a positive logit), so its post-processing does its full work.

  make_bench_tracker.py --out DIR [--quick]     (--quick: 4 vision blocks, as make_bench_models.py)
"""
import argparse
import json
import os

import numpy as np
from onnx import TensorProto, helper

import make_bench_models as bench
from make_bench_models import Graph, rng
from onnx_graph import tensor

D, HEADS, INNER, MLP = 256, 8, 128, 2048
TOKENS = 6  # object score, IoU, 4 mask tokens


def w(*shape, std=None):
    return rng.normal(0, std if std is not None else 1.0 / np.sqrt(shape[0]), shape).astype(np.float32)


class TrackerGraph(Graph):
    def flinear(self, x, k, n, bias=None):
        y = self.op("MatMul", [x, self.const(w(k, n))])
        return self.op("Add", [y, self.const(bias if bias is not None else np.zeros(n, np.float32))])

    def mlp3(self, x, out, last_bias=None, last_std=None):
        h = self.op("Relu", [self.flinear(x, D, D)])
        h = self.op("Relu", [self.flinear(h, D, D)])
        y = self.op("MatMul", [h, self.const(w(D, out, std=last_std))])
        return self.op("Add", [y, self.const(last_bias if last_bias is not None else np.zeros(out, np.float32))])

    def attend(self, q_in, k_in, v_in, inner):
        d = inner // HEADS
        q, k, v = self.flinear(q_in, D, inner), self.flinear(k_in, D, inner), self.flinear(v_in, D, inner)

        def split(t):  # [O, T, inner] -> [O, heads, T, d]
            return self.op("Transpose", [self.op("Reshape", [t, self.ints([0, 0, HEADS, d])])], perm=[0, 2, 1, 3])

        scores = self.op("Mul", [self.op("MatMul", [split(q), self.op("Transpose", [split(k)], perm=[0, 1, 3, 2])]),
                                 self.f(1 / np.sqrt(d))])
        out = self.op("MatMul", [self.op("Softmax", [scores], axis=-1), split(v)])
        out = self.op("Reshape", [self.op("Transpose", [out], perm=[0, 2, 1, 3]), self.ints([0, 0, inner])])
        return self.flinear(out, inner, D)

    def f(self, value):
        return self.const(np.float32(value))

    def norm(self, x):
        return self.layer_norm(x, D)

    def layer_norm_2d(self, x, channels):  # over the channel axis of [O, C, H, W]
        mean = self.op("ReduceMean", [x], axes=[1], keepdims=1)
        centred = self.op("Sub", [x, mean])
        var = self.op("ReduceMean", [self.op("Mul", [centred, centred])], axes=[1], keepdims=1)
        y = self.op("Div", [centred, self.op("Sqrt", [self.op("Add", [var, self.f(1e-6)])])])
        return self.op("Add", [self.op("Mul", [y, self.const(np.ones((1, channels, 1, 1), np.float32))]),
                               self.const(np.zeros((1, channels, 1, 1), np.float32))])


def vision_encoder(path, blocks, global_blocks):
    g = TrackerGraph()
    x = bench.vit_trunk(g, "pixel_values", blocks, global_blocks)
    neck = g.linear(g.layer_norm(x, 1024), 1024, D)                                     # [1, 5184, 256]
    e2 = g.op("Reshape", [g.op("Transpose", [neck], perm=[0, 2, 1]), g.ints([1, D, 72, 72])])
    levels = [(e2, 1, D)]
    for scale, channels in ((2, 64), (4, 32)):
        up = g.op("Resize", [e2, "", g.const([1, 1, scale, scale])], mode="linear")
        levels.append((g.op("Conv", [up, g.const(w(channels, D, 1, 1, std=0.05))]), scale, channels))
    outputs = []
    for k, (t, scale, channels) in zip((2, 1, 0), levels):
        g.name(t, f"image_embeddings.{k}")
    for k, (channels, side) in enumerate(((32, 288), (64, 144), (D, 72))):
        outputs.append(tensor(f"image_embeddings.{k}", TensorProto.FLOAT, [1, channels, side, side]))
    g.save(path, [tensor("pixel_values", TensorProto.FLOAT, [1, 3, 1008, 1008])], outputs, "vision_encoder")


def decoder(path):
    g = TrackerGraph()
    # Prompt encoder: points [1,O,P,2] in 1008 pixels, labels [1,O,P] (1, 0, -1 padding).
    pts = g.op("Squeeze", ["input_points", g.ints([0])])                                 # [O,P,2]
    coords = g.op("Sub", [g.op("Mul", [g.op("Div", [g.op("Add", [pts, g.f(0.5)]), g.f(1008.0)]), g.f(2.0)]), g.f(1.0)])
    proj = g.op("Mul", [g.op("MatMul", [coords, g.const(w(2, D // 2, std=1.0))]), g.f(2 * np.pi)])
    pe = g.op("Concat", [g.op("Sin", [proj]), g.op("Cos", [proj])], axis=-1)            # [O,P,256]
    labels = g.op("Unsqueeze", [g.op("Cast", [g.op("Squeeze", ["input_labels", g.ints([0])])], to=TensorProto.FLOAT),
                                g.ints([2])])                                           # [O,P,1]
    is_pos = g.op("Cast", [g.op("Equal", [labels, g.f(1.0)])], to=TensorProto.FLOAT)
    is_neg = g.op("Cast", [g.op("Equal", [labels, g.f(0.0)])], to=TensorProto.FLOAT)
    is_pad = g.op("Cast", [g.op("Equal", [labels, g.f(-1.0)])], to=TensorProto.FLOAT)
    sparse = g.op("Mul", [pe, g.op("Sub", [g.f(1.0), is_pad])])
    for mask, name in ((is_pos, "pos"), (is_neg, "neg"), (is_pad, "pad")):
        sparse = g.op("Add", [sparse, g.op("Mul", [mask, g.const(w(D, std=0.5))])])
    # Boxes: none in the benchmark, consumed as the real graph does ([1,0,4] when none).
    nboxes = g.op("Cast", [g.op("ReduceSum", [g.op("Shape", ["input_boxes"])], keepdims=0)], to=TensorProto.FLOAT)
    sparse = g.op("Add", [sparse, g.op("Mul", [nboxes, g.f(0.0)])])
    objects = g.op("Slice", [g.op("Shape", ["input_labels"]), g.ints([1]), g.ints([2]), g.ints([0])])  # [1] = O
    tokens = g.op("Expand", [g.const(w(1, TOKENS, D, std=0.5)), g.op("Concat", [objects, g.ints([TOKENS, D])], axis=0)])
    queries = g.op("Concat", [tokens, sparse], axis=1)                                  # [O,6+P,256]
    query_pe = queries

    # Image tokens and their positional encoding, one copy per object (as SAM2 repeats them).
    src = g.op("Add", ["image_embeddings.2", g.const(w(1, D, 1, 1, std=0.02))])
    src = g.op("Transpose", [g.op("Reshape", [src, g.ints([1, D, 72 * 72])])], perm=[0, 2, 1])   # [1,5184,256]
    keys = g.op("Expand", [src, g.op("Concat", [objects, g.ints([72 * 72, D])], axis=0)])       # [O,5184,256]
    key_pe = g.const(w(1, 72 * 72, D, std=0.5))

    for layer in range(2):
        q = queries if layer == 0 else g.op("Add", [queries, query_pe])
        attn = g.attend(q, q, queries, D)
        queries = g.norm(attn if layer == 0 else g.op("Add", [queries, attn]))
        q, k = g.op("Add", [queries, query_pe]), g.op("Add", [keys, key_pe])
        queries = g.norm(g.op("Add", [queries, g.attend(q, k, keys, INNER)]))
        queries = g.norm(g.op("Add", [queries, g.flinear(g.op("Relu", [g.flinear(queries, D, MLP)]), MLP, D)]))
        q, k = g.op("Add", [queries, query_pe]), g.op("Add", [keys, key_pe])
        keys = g.norm(g.op("Add", [keys, g.attend(k, q, queries, INNER)]))
    q, k = g.op("Add", [queries, query_pe]), g.op("Add", [keys, key_pe])
    queries = g.norm(g.op("Add", [queries, g.attend(q, k, keys, INNER)]))

    # Upscaling with the high-resolution features, per object.
    img = g.op("Reshape", [g.op("Transpose", [keys], perm=[0, 2, 1]), g.ints([-1, D, 72, 72])])
    up = g.op("ConvTranspose", [img, g.const(w(D, 64, 2, 2, std=0.05))], kernel_shape=[2, 2], strides=[2, 2])
    up = g.gelu(g.layer_norm_2d(g.op("Add", [up, "image_embeddings.1"]), 64))
    up = g.op("ConvTranspose", [up, g.const(w(64, 32, 2, 2, std=0.1))], kernel_shape=[2, 2], strides=[2, 2])
    up = g.gelu(g.op("Add", [up, "image_embeddings.0"]))                                 # [O,32,288,288]

    def token(i):  # [O,1,256]
        return g.op("Slice", [queries, g.ints([i]), g.ints([i + 1]), g.ints([1])])

    hyper = g.op("Concat", [g.mlp3(token(2 + i), 32) for i in range(4)], axis=1)       # [O,4,32]
    masks = g.op("MatMul", [hyper, g.op("Reshape", [up, g.ints([0, 32, 288 * 288])])])  # [O,4,82944]
    masks = g.op("Slice", [g.op("Reshape", [masks, g.ints([1, -1, 4, 288, 288])]), g.ints([1]), g.ints([4]), g.ints([2])])
    g.name(masks, "pred_masks")
    iou = g.mlp3(token(1), 4, last_bias=np.full(4, 2.2, np.float32), last_std=0.001)   # sigmoid(2.2) ~ 0.9
    iou = g.op("Sigmoid", [g.op("Slice", [iou, g.ints([1]), g.ints([4]), g.ints([2])])])
    g.name(g.op("Reshape", [iou, g.ints([1, -1, 3])]), "iou_scores")
    score = g.mlp3(token(0), 1, last_bias=np.full(1, 3.0, np.float32), last_std=0.001)
    g.name(g.op("Reshape", [score, g.ints([1, -1, 1])]), "object_score_logits")

    inputs = [tensor("input_points", TensorProto.FLOAT, [1, "point_batch_size", "num_points", 2]),
              tensor("input_labels", TensorProto.INT64, [1, "point_batch_size", "num_points"]),
              tensor("input_boxes", TensorProto.FLOAT, [1, "num_boxes", 4])]
    inputs += [tensor(f"image_embeddings.{k}", TensorProto.FLOAT, [1, c, s, s]) for k, (c, s) in enumerate(((32, 288), (64, 144), (D, 72)))]
    outputs = [tensor("iou_scores", TensorProto.FLOAT, [1, "point_batch_size", 3]),
               tensor("pred_masks", TensorProto.FLOAT, [1, "point_batch_size", 3, 288, 288]),
               tensor("object_score_logits", TensorProto.FLOAT, [1, "point_batch_size", 1])]
    g.save(path, inputs, outputs, "prompt_encoder_mask_decoder")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true", help="fewer vision blocks, same shapes")
    args = ap.parse_args()
    graphs = os.path.join(args.out, "onnx")
    os.makedirs(graphs, exist_ok=True)
    if args.quick:
        vision_encoder(os.path.join(graphs, "vision_encoder.onnx"), 4, {1, 3})
    else:
        vision_encoder(os.path.join(graphs, "vision_encoder.onnx"), 32, {7, 15, 23, 31})
    decoder(os.path.join(graphs, "prompt_encoder_mask_decoder.onnx"))
    # What transformers.js reads beside the graphs (the reference runs them with onnxruntime-node).
    config = {"architectures": ["Sam3TrackerModel"], "model_type": "sam3_tracker", "image_size": 1008}
    pre = {"image_processor_type": "Sam2ImageProcessor", "size": {"height": 1008, "width": 1008},
           "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "mask_size": {"height": 288, "width": 288}}
    for name, doc in (("config.json", config), ("preprocessor_config.json", pre)):
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2)


if __name__ == "__main__":
    main()
