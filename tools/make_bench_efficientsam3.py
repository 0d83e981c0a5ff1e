#!/usr/bin/env python3
"""Generates EfficientSAM3-shaped ONNX models with random weights for speed and memory work: a
student image encoder as timm builds it (RepViT-M1.1 or EfficientViT-B1, inference form: batch
norms folded into the convolutions, RepViT's re-parameterised 3x3 depthwise mixers) at 1008 x
1008, its projection to SAM3's trunk shape (1x1 convolution to 1024 channels, bilinear resize to
72 x 72) and SAM3's FPN neck (transposed convolutions to the 288 / 144 / 72 maps, then 1x1 and
3x3 convolutions to 256 channels), in Intel's export's layout and I/O (sam3-facts.md "Two more
generations": the geti-instant-learn files under onnx/, the decoder taking text_features and
text_mask too, presence_logits a constant 0). The text encoder is MobileCLIP-S1's shape (12
blocks, width 512), the geometry encoder and the decoder SAM3's (make_bench_models.py's decoder
on the geti sequence). Outputs are meaningless; costs are real.

  student         multiply-accumulates at 1008 (about): RepViT-M1.1 27 G, EfficientViT-B1 11 G
  projection+FPN  about 205 G (the 288 x 288 level's transposed and 3x3 convolutions most)

The student and the neck are float (Intel's onnx/ folder holds the float export; its int8
variant is OpenVINO IR); the text encoder, geometry encoder and decoder take make_bench_models'
uint8 quantized linears.

  make_bench_efficientsam3.py --out DIR [--student repvit_m1_1|efficientvit_b1]
"""
import argparse
import os
import shutil

import numpy as np
from onnx import TensorProto, helper

import make_bench_models as bench
from onnx_graph import tensor

rng = np.random.default_rng(2025)
F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


class Graph(bench.Graph):
    def conv(self, x, cin, cout, k=1, stride=1, groups=1, bias=True):
        w = rng.normal(0, 1 / np.sqrt(cin // groups * k * k), (cout, cin // groups, k, k)).astype(np.float32)
        inputs = [x, self.const(w)] + ([self.const(rng.normal(0, 0.02, cout).astype(np.float32))] if bias else [])
        p = (k - 1) // 2
        return self.op("Conv", inputs, kernel_shape=[k, k], strides=[stride, stride], pads=[p, p, p, p], group=groups)

    def deconv(self, x, cin, cout):  # ConvTranspose 2x2, stride 2
        w = rng.normal(0, 1 / np.sqrt(cin), (cin, cout, 2, 2)).astype(np.float32)
        return self.op("ConvTranspose", [x, self.const(w), self.const(np.zeros(cout, np.float32))], kernel_shape=[2, 2], strides=[2, 2])

    def hardswish(self, x):
        return self.op("HardSwish", [x])


def repvit_m1_1(g, x):
    """timm repvit_m1_1: embed (64, 128, 256, 512), depth (2, 2, 12, 2), mlp ratio 2, squeeze-excite
    on every other block; -> [1, 512, 32, 32] from 1008."""
    dims, depths = (64, 128, 256, 512), (2, 2, 12, 2)

    def block(x, c, se):
        t = g.conv(x, c, c, 3, groups=c)  # RepVGG depthwise mixer, re-parameterised into one 3x3
        if se:
            rd = max(8, int(c * 0.25 + 4) // 8 * 8)
            s = g.op("GlobalAveragePool", [t])
            s = g.op("Sigmoid", [g.conv(g.op("Relu", [g.conv(s, c, rd)]), rd, c)])
            t = g.op("Mul", [t, s])
        return g.op("Add", [t, g.conv(g.gelu(g.conv(t, c, 2 * c)), 2 * c, c)])  # residual MLP

    x = g.conv(g.gelu(g.conv(x, 3, dims[0] // 2, 3, 2)), dims[0] // 2, dims[0], 3, 2)  # stem: /4
    for s, (c, d) in enumerate(zip(dims, depths)):
        if s > 0:  # RepViT downsample: a block, a 3x3 depthwise stride 2, a 1x1 to the new width, a residual MLP
            prev = dims[s - 1]
            x = block(x, prev, False)
            x = g.conv(g.conv(x, prev, prev, 3, 2, groups=prev), prev, c)
            x = g.op("Add", [x, g.conv(g.gelu(g.conv(x, c, 2 * c)), 2 * c, c)])
        for i in range(d):
            x = block(x, c, i % 2 == 0)
    return x, dims[-1]


def efficientvit_b1(g, x):
    """timm efficientvit_b1 (MIT): widths (16, 32, 64, 128, 256), depths (1, 2, 3, 3, 4), head dim 16,
    MBConv expand 4, hardswish; stages 3 and 4 of LiteMLA (ReLU linear attention with a 5x5
    multi-scale branch) + MBConv blocks; -> [1, 256, 32, 32] from 1008."""
    widths, depths, hd = (16, 32, 64, 128, 256), (1, 2, 3, 3, 4), 16

    def mbconv(x, cin, cout, stride):
        h = g.hardswish(g.conv(x, cin, 4 * cin))
        h = g.hardswish(g.conv(h, 4 * cin, 4 * cin, 3, stride, groups=4 * cin))
        return g.conv(h, 4 * cin, cout)

    def lite_mla(x, c):
        heads = c // hd
        qkv = g.conv(x, c, 3 * c, bias=False)
        agg = g.conv(g.conv(qkv, 3 * c, 3 * c, 5, groups=3 * c, bias=False), 3 * c, 3 * c, groups=3 * heads, bias=False)
        both = g.op("Concat", [qkv, agg], axis=1)                                         # [1, 6c, h, w]
        t = g.op("Reshape", [both, g.ints([1, 2 * heads, 3 * hd, -1])])                    # [1, 2H, 3d, N]
        q, k, v = g.op("Split", [t, g.ints([hd, hd, hd])], outputs=3, axis=2)
        q, k = g.op("Relu", [q]), g.op("Relu", [k])
        v1 = g.op("Pad", [v, g.ints([0, 0, 0, 0, 0, 0, 1, 0]), g.const(np.float32(1.0))])  # [1, 2H, d+1, N]: a row of ones
        kv = g.op("MatMul", [v1, g.op("Transpose", [k], perm=[0, 1, 3, 2])])                 # [1, 2H, d+1, d]
        out = g.op("MatMul", [kv, q])                                                         # [1, 2H, d+1, N]
        num, den = g.op("Split", [out, g.ints([hd, 1])], outputs=2, axis=2)
        out = g.op("Div", [num, g.op("Add", [den, g.const(np.float32(1e-15))])])
        shape = g.op("Shape", [x])
        out = g.op("Reshape", [out, g.op("Concat", [g.ints([1, 2 * c]), g.op("Slice", [shape, g.ints([2]), g.ints([4])])], axis=0)])
        return g.conv(out, 2 * c, c)

    x = g.hardswish(g.conv(x, 3, widths[0], 3, 2))
    for _ in range(depths[0]):  # DSConv residual blocks
        x = g.op("Add", [x, g.conv(g.hardswish(g.conv(x, widths[0], widths[0], 3, groups=widths[0])), widths[0], widths[0])])
    for s in range(1, 5):
        cin, c = widths[s - 1], widths[s]
        x = mbconv(x, cin, c, 2)
        for _ in range(depths[s] - (1 if s < 3 else 0)):
            if s >= 3:
                x = g.op("Add", [x, lite_mla(x, c)])
            x = g.op("Add", [x, mbconv(x, c, c, 1)])
    return x, widths[-1]


STUDENTS = {"repvit_m1_1": repvit_m1_1, "efficientvit_b1": efficientvit_b1}


def vision_encoder(path, student):
    g = Graph()
    x, c = STUDENTS[student](g, "pixel_values")
    # Projection to the trunk SAM3's neck expects: [1, 1024, 72, 72].
    trunk = g.op("Resize", [g.conv(x, c, 1024), "", "", g.ints([1, 1024, 72, 72])], mode="linear")
    # SAM3's neck (scale factors 4, 2, 1): transposed convolutions, then 1x1 and 3x3 to 256.
    f0 = g.deconv(g.gelu(g.deconv(trunk, 1024, 512)), 512, 256)
    f1 = g.deconv(trunk, 1024, 512)
    outs = []
    for f, cin in ((f0, 256), (f1, 512), (trunk, 1024)):
        outs.append(g.conv(g.conv(f, cin, 256), 256, 256, 3))
    for t, n in zip(outs, ("fpn_feat_0", "fpn_feat_1", "fpn_feat_2")):
        g.nodes.append(helper.make_node("Identity", [t], [n]))
    pos = g.const(rng.normal(0, 0.02, (1, 256, 72, 72)).astype(np.float32))  # the sine encoding: input independent
    g.nodes.append(helper.make_node("Add", [g.op("Mul", [outs[2], g.const(np.float32(0))]), pos], ["fpn_pos_2"]))
    g.save(path, [tensor("pixel_values", F, [1, 3, 1008, 1008])],
           [tensor("fpn_feat_0", F, [1, 256, 288, 288]), tensor("fpn_feat_1", F, [1, 256, 144, 144]),
            tensor("fpn_feat_2", F, [1, 256, 72, 72]), tensor("fpn_pos_2", F, [1, 256, 72, 72])], "vision_encoder")


def text_encoder(path):
    """MobileCLIP-S1's text transformer shape: 12 blocks, width 512, 8 heads, MLP 2048; 32 tokens."""
    width, heads, mlp, tokens = 512, 8, 2048, 32
    g = Graph()
    x = g.op("Gather", [g.const(rng.normal(0, 0.02, (49408, width)).astype(np.float32)), "input_ids"], axis=0)
    x = g.op("Add", [x, g.const(rng.normal(0, 0.01, (1, tokens, width)).astype(np.float32))])
    causal = g.const(np.triu(np.full((tokens, tokens), -1e4, np.float32), 1).reshape(1, 1, tokens, tokens))
    for _ in range(12):
        x = g.op("Add", [x, g.self_attention_qkv(g.layer_norm(x, width), width, heads, causal)])
        x = g.op("Add", [x, g.mlp(g.layer_norm(x, width), width, mlp)])
    g.nodes.append(helper.make_node("Identity", [g.linear(g.layer_norm(x, width), width, 256)], ["text_features"]))
    g.nodes.append(helper.make_node("Cast", ["attention_mask"], ["text_mask"], to=BOOL))
    g.save(path, [tensor("input_ids", I64, [1, tokens]), tensor("attention_mask", I64, [1, tokens])],
           [tensor("text_features", F, [1, tokens, 256]), tensor("text_mask", BOOL, [1, tokens])], "text_encoder")


def geometry_encoder(path):
    """geti's geometry encoder: box and point rows and a CLS row, 3 layers of self-attention, cross-attention
    to the image tokens and an MLP -> geometry_features [B, N+M+1, 256], geometry_mask."""
    d, heads = 256, 8
    g = Graph()
    img = bench.image_tokens(g, d)
    boxes = g.linear(g.op("Concat", ["input_boxes", g.op("Unsqueeze", [g.op("Cast", ["input_boxes_labels"], to=F), g.ints([2])])], axis=2), 5, d)
    points = g.linear(g.op("Concat", ["input_points", g.op("Unsqueeze", [g.op("Cast", ["input_points_labels"], to=F), g.ints([2])])], axis=2), 3, d)
    x = g.op("Concat", [boxes, points, g.const(rng.normal(0, 0.02, (1, 1, d)).astype(np.float32))], axis=1)
    for _ in range(3):
        x = g.op("Add", [x, g.attention(g.layer_norm(x, d), g.layer_norm(x, d), d, heads)])
        x = g.op("Add", [x, g.attention(g.layer_norm(x, d), img, d, heads)])
        x = g.op("Add", [x, g.mlp(g.layer_norm(x, d), d, 2048)])
    g.nodes.append(helper.make_node("Identity", [x], ["geometry_features"]))
    first = g.op("Slice", [x, g.ints([0]), g.ints([1]), g.ints([2])])
    g.nodes.append(helper.make_node("Squeeze", [g.op("Greater", [first, g.const(np.float32(-1e30))]), g.ints([2])], ["geometry_mask"]))
    g.save(path, [tensor("fpn_feat_2", F, [1, d, 72, 72]), tensor("fpn_pos_2", F, [1, d, 72, 72]),
                  tensor("input_boxes", F, [1, "N", 4]), tensor("input_boxes_labels", I64, [1, "N"]),
                  tensor("input_points", F, [1, "M", 2]), tensor("input_points_labels", I64, [1, "M"])],
           [tensor("geometry_features", F, [1, "T", d]), tensor("geometry_mask", BOOL, [1, "T"])], "geometry_encoder")


def decoder(path):
    """SAM3's decoder (make_bench_models' body: 6 fusion layers over the 5184 image tokens, 6 query layers of
    200 queries, the heads) on the geti prompt sequence, with EfficientSAM3's two more inputs."""
    d = 256
    g = Graph()
    img = bench.image_tokens(g, d)
    mask = g.op("Unsqueeze", [g.op("Cast", ["prompt_mask"], to=F), g.ints([2])])
    text_mask = g.op("Unsqueeze", [g.op("Cast", ["text_mask"], to=F), g.ints([2])])
    prompt = g.op("Add", [g.op("Mul", ["prompt_features", mask]),
                          g.op("ReduceMean", [g.op("Mul", ["text_features", text_mask])], axes=[1], keepdims=1)])
    q = bench.decoder_queries(g, img, prompt, 6, 6)
    zero = g.op("Mul", [g.op("ReduceMean", [q], axes=[1, 2], keepdims=0), g.const(np.float32(0))])
    g.nodes.append(helper.make_node("Reshape", [zero, g.ints([1, 1])], ["presence_logits"]))  # no presence head
    bench.mask_head(g, q)
    feats, outputs = bench.decoder_io()
    g.save(path, feats + [tensor("prompt_features", F, [1, "L", d]), tensor("prompt_mask", BOOL, [1, "L"]),
                          tensor("text_features", F, [1, 32, d]), tensor("text_mask", BOOL, [1, 32])],
           outputs, "prompt_decoder")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--student", choices=sorted(STUDENTS), default="repvit_m1_1")
    args = ap.parse_args()
    graphs = os.path.join(args.out, "onnx")
    os.makedirs(graphs, exist_ok=True)
    vision_encoder(os.path.join(graphs, "vision-encoder.onnx"), args.student)
    text_encoder(os.path.join(graphs, "text-encoder.onnx"))
    geometry_encoder(os.path.join(graphs, "geometry-encoder.onnx"))
    shutil.copyfile(os.path.join(graphs, "geometry-encoder.onnx"), os.path.join(graphs, "geometry-encoder-exemplar.onnx"))
    decoder(os.path.join(graphs, "prompt-decoder.onnx"))
    # No vocabulary file: sam3 takes its bundled CLIP vocabulary (the bench gives the tab the same one).


if __name__ == "__main__":
    main()
