#!/usr/bin/env python3
"""Generates SAM3-shaped ONNX models with random weights for speed and memory work: the real
shapes, op patterns and cost of the three networks in the "usls" layout (sam3-facts.md
sections 1 and 3), weights quantized the way the public int8 files are (ONNX Runtime's
quantize_dynamic: uint8 weights, per tensor, DynamicQuantizeLinear -> MatMulInteger -> Cast ->
Mul). Outputs are meaningless; costs are real.

  vision encoder: ViT, patch 14, 72x72 = 5184 tokens, 32 blocks, width 1024, 16 heads,
                  MLP 4736, 24x24 windowed attention except global blocks 7, 15, 23, 31
                  (about 2.8 T multiply-accumulates), and a neck to the 288/144/72 maps
  text encoder:   24 blocks, width 1024, MLP 4096, 32 tokens, causal attention, 49408x1024
                  token embedding
  decoder:        6 fusion layers of self-attention over the 5184 image tokens (8 heads)
                  with cross-attention to the prompt, 6 query layers of 200 queries, and the
                  box, score, presence and 288x288 mask heads

  make_bench_models.py --out DIR [--quick]     (--quick: 4 vision blocks, 2 text, 1+1 decoder)
"""
import argparse
import os

import numpy as np
from onnx import TensorProto, helper

import onnx_graph
from onnx_graph import tensor

rng = np.random.default_rng(1234)


class Graph(onnx_graph.Graph):
    def linear(self, x, k, n, bias=True):
        """A Linear of random weights [k, n], quantized like quantize_dynamic does it."""
        std = 1.0 / np.sqrt(k)
        w_scale = np.float32(4 * std / 127)
        wq = np.clip(128 + np.round(rng.normal(0, std, (k, n)) / w_scale), 0, 255).astype(np.uint8)
        y = self.quantized_matmul(x, wq, w_scale)
        if bias:
            y = self.op("Add", [y, self.const(rng.normal(0, 0.02, n).astype(np.float32))])
        return y

    def layer_norm(self, x, width):
        return self.op("LayerNormalization", [x, self.const(np.ones(width, np.float32)), self.const(np.zeros(width, np.float32))],
                       axis=-1, epsilon=1e-6)

    def gelu(self, x):
        # As PyTorch exports nn.GELU: x * (erf(x / sqrt(2)) + 1) * 0.5 (ONNX Runtime fuses this
        # exact form into Gelu; other orderings of the same maths stay five ops).
        e = self.op("Erf", [self.op("Div", [x, self.const(np.float32(np.sqrt(2)))])])
        return self.op("Mul", [self.op("Mul", [x, self.op("Add", [e, self.const(np.float32(1.0))])]), self.const(np.float32(0.5))])

    def attention(self, q_in, kv_in, width, heads, mask=None):
        """Multi-head attention on [B, T, width] (queries) and [B, S, width] (keys/values)."""
        d = width // heads
        q = self.linear(q_in, width, width)
        k = self.linear(kv_in, width, width)
        v = self.linear(kv_in, width, width)

        def split(t):  # [B, T, width] -> [B, heads, T, d]
            return self.op("Transpose", [self.op("Reshape", [t, self.ints([0, 0, heads, d])])], perm=[0, 2, 1, 3])

        scores = self.op("Mul", [self.op("MatMul", [split(q), self.op("Transpose", [split(k)], perm=[0, 1, 3, 2])]),
                                 self.const(np.float32(1 / np.sqrt(d)))])
        if mask is not None:
            scores = self.op("Add", [scores, mask])
        out = self.op("MatMul", [self.op("Softmax", [scores], axis=-1), split(v)])
        out = self.op("Reshape", [self.op("Transpose", [out], perm=[0, 2, 1, 3]), self.ints([0, 0, width])])
        return self.linear(out, width, width)

    def self_attention_qkv(self, x, width, heads, mask=None):
        """Self-attention with one fused QKV projection, as in ViT and CLIP."""
        d = width // heads
        qkv = self.linear(x, width, 3 * width)
        qkv = self.op("Transpose", [self.op("Reshape", [qkv, self.ints([0, 0, 3, heads, d])])], perm=[2, 0, 3, 1, 4])
        q, k, v = [self.op("Squeeze", [t, self.ints([0])]) for t in self.op("Split", [qkv], outputs=3, axis=0)]
        scores = self.op("Mul", [self.op("MatMul", [q, self.op("Transpose", [k], perm=[0, 1, 3, 2])]),
                                 self.const(np.float32(1 / np.sqrt(d)))])
        if mask is not None:
            scores = self.op("Add", [scores, mask])
        out = self.op("MatMul", [self.op("Softmax", [scores], axis=-1), v])
        out = self.op("Reshape", [self.op("Transpose", [out], perm=[0, 2, 1, 3]), self.ints([0, 0, width])])
        return self.linear(out, width, width)

    def mlp(self, x, width, hidden):
        return self.linear(self.gelu(self.linear(x, width, hidden)), hidden, width)

    def save(self, path, inputs, outputs, name):
        size = super().save(path, inputs, outputs, name, "sam3cpp-bench-models", check=False)
        print(f"wrote {path} ({size / 1e6:.0f} MB)")


def vit_trunk(g, pixels, blocks, global_blocks):
    """SAM3's ViT on [1, 3, 1008, 1008] -> [1, 5184, 1024] (also the trunk of the bench tracker)."""
    width, heads, mlp, grid, window = 1024, 16, 4736, 72, 24
    patches = g.op("Conv", [pixels, g.const(rng.normal(0, 0.02, (width, 3, 14, 14)).astype(np.float32))],
                   kernel_shape=[14, 14], strides=[14, 14])
    x = g.op("Transpose", [g.op("Reshape", [patches, g.ints([1, width, grid * grid])])], perm=[0, 2, 1])
    x = g.op("Add", [x, g.const(rng.normal(0, 0.02, (1, grid * grid, width)).astype(np.float32))])
    nw = grid // window
    for b in range(blocks):
        h = g.layer_norm(x, width)
        if b in global_blocks:
            h = g.self_attention_qkv(h, width, heads)
        else:  # 24x24 windows: [1, 72*72, C] -> [9, 576, C] and back
            w = g.op("Reshape", [h, g.ints([1, nw, window, nw, window, width])])
            w = g.op("Reshape", [g.op("Transpose", [w], perm=[0, 1, 3, 2, 4, 5]), g.ints([nw * nw, window * window, width])])
            w = g.self_attention_qkv(w, width, heads)
            w = g.op("Transpose", [g.op("Reshape", [w, g.ints([1, nw, nw, window, window, width])])], perm=[0, 1, 3, 2, 4, 5])
            h = g.op("Reshape", [w, g.ints([1, grid * grid, width])])
        x = g.op("Add", [x, h])
        x = g.op("Add", [x, g.mlp(g.layer_norm(x, width), width, mlp)])
    return x


def vision_encoder(path, blocks, global_blocks):
    width, grid = 1024, 72
    g = Graph()
    x = vit_trunk(g, "images", blocks, global_blocks)
    neck = g.linear(g.layer_norm(x, width), width, 256)                                   # [1, 5184, 256]
    f2 = g.op("Reshape", [g.op("Transpose", [neck], perm=[0, 2, 1]), g.ints([1, 256, grid, grid])])
    f1 = g.op("Resize", [f2, "", g.const([1, 1, 2, 2])], mode="linear")
    f0 = g.op("Resize", [f2, "", g.const([1, 1, 4, 4])], mode="linear")
    for t, n in ((f0, "fpn_feat_0"), (f1, "fpn_feat_1"), (f2, "fpn_feat_2")):
        g.nodes.append(helper.make_node("Identity", [t], [n]))
    g.nodes.append(helper.make_node("Add", [f2, g.const(rng.normal(0, 0.02, (1, 256, grid, grid)).astype(np.float32))], ["fpn_pos_2"]))
    g.save(path, [tensor("images", TensorProto.FLOAT, [1, 3, 1008, 1008])],
           [tensor("fpn_feat_0", TensorProto.FLOAT, [1, 256, 288, 288]), tensor("fpn_feat_1", TensorProto.FLOAT, [1, 256, 144, 144]),
            tensor("fpn_feat_2", TensorProto.FLOAT, [1, 256, 72, 72]), tensor("fpn_pos_2", TensorProto.FLOAT, [1, 256, 72, 72])],
           "vision_encoder")


def text_encoder(path, blocks):
    width, heads, mlp, tokens = 1024, 16, 4096, 32
    g = Graph()
    x = g.op("Gather", [g.const(rng.normal(0, 0.02, (49408, width)).astype(np.float32)), "input_ids"], axis=0)
    x = g.op("Add", [x, g.const(rng.normal(0, 0.01, (1, tokens, width)).astype(np.float32))])
    causal = g.const(np.triu(np.full((tokens, tokens), -1e4, np.float32), 1).reshape(1, 1, tokens, tokens))
    for _ in range(blocks):
        x = g.op("Add", [x, g.self_attention_qkv(g.layer_norm(x, width), width, heads, causal)])
        x = g.op("Add", [x, g.mlp(g.layer_norm(x, width), width, mlp)])
    g.nodes.append(helper.make_node("Identity", [g.linear(g.layer_norm(x, width), width, 256)], ["text_features"]))
    g.nodes.append(helper.make_node("Cast", ["attention_mask"], ["text_mask"], to=TensorProto.BOOL))
    g.save(path, [tensor("input_ids", TensorProto.INT64, [1, tokens]), tensor("attention_mask", TensorProto.INT64, [1, tokens])],
           [tensor("text_features", TensorProto.FLOAT, [1, tokens, 256]), tensor("text_mask", TensorProto.BOOL, [1, tokens])],
           "text_encoder")


def image_tokens(g, d=256):
    """The decoder's image tokens: the 72x72 level plus its position, [1, 5184, 256]."""
    img = g.op("Add", ["fpn_feat_2", "fpn_pos_2"])
    return g.op("Transpose", [g.op("Reshape", [img, g.ints([1, d, 72 * 72])])], perm=[0, 2, 1])


def decoder_queries(g, img, prompt, fusion_layers, query_layers, d=256, heads=8, queries=200):
    """SAM3's decoder body: fusion layers over the image tokens (self-attention over the 5184, cross to the
    prompt, MLP), then query layers (self, cross to the image, MLP); writes pred_logits and pred_boxes and
    returns the normalised queries for the presence and mask heads."""
    for _ in range(fusion_layers):
        img = g.op("Add", [img, g.attention(g.layer_norm(img, d), g.layer_norm(img, d), d, heads)])   # self over 5184
        img = g.op("Add", [img, g.attention(g.layer_norm(img, d), prompt, d, heads)])
        img = g.op("Add", [img, g.mlp(g.layer_norm(img, d), d, 2048)])
    q = g.const(rng.normal(0, 0.02, (1, queries, d)).astype(np.float32))
    for _ in range(query_layers):
        q = g.op("Add", [q, g.attention(g.layer_norm(q, d), g.layer_norm(q, d), d, heads)])
        q = g.op("Add", [q, g.attention(g.layer_norm(q, d), img, d, heads)])
        q = g.op("Add", [q, g.mlp(g.layer_norm(q, d), d, 2048)])
    q = g.layer_norm(q, d)
    g.nodes.append(helper.make_node("Squeeze", [g.linear(q, d, 1), g.ints([2])], ["pred_logits"]))
    g.nodes.append(helper.make_node("Sigmoid", [g.linear(q, d, 4)], ["pred_boxes"]))
    return q


def mask_head(g, q, d=256, queries=200):
    """pred_masks: the queries against the 288x288 level's projected pixels."""
    pixels = g.op("Transpose", [g.op("Reshape", ["fpn_feat_0", g.ints([1, d, 288 * 288])])], perm=[0, 2, 1])
    pixels = g.op("Transpose", [g.linear(pixels, d, d)], perm=[0, 2, 1])                               # [1, 256, 82944]
    masks = g.op("MatMul", [g.linear(q, d, d), pixels])                                                # [1, 200, 82944]
    g.nodes.append(helper.make_node("Reshape", [masks, g.ints([1, queries, 288, 288])], ["pred_masks"]))


def decoder_io(d=256, queries=200):
    """The FPN levels every SAM3-family decoder reads, and the four outputs it gives."""
    F = TensorProto.FLOAT
    feats = [tensor("fpn_feat_0", F, [1, d, 288, 288]), tensor("fpn_feat_1", F, [1, d, 144, 144]),
             tensor("fpn_feat_2", F, [1, d, 72, 72]), tensor("fpn_pos_2", F, [1, d, 72, 72])]
    outputs = [tensor("pred_masks", F, [1, queries, 288, 288]), tensor("pred_boxes", F, [1, queries, 4]),
               tensor("pred_logits", F, [1, queries]), tensor("presence_logits", F, [1, 1])]
    return feats, outputs


def decoder(path, fusion_layers, query_layers):
    d = 256
    g = Graph()
    img = image_tokens(g, d)                                                                           # [1, 5184, 256]
    boxes = g.linear("input_boxes", 4, d)                                                              # [1, N, 256]
    labels = g.op("Unsqueeze", [g.op("Cast", ["input_boxes_labels"], to=TensorProto.FLOAT), g.ints([2])])
    boxes = g.op("Add", [boxes, g.op("Mul", [labels, g.const(rng.normal(0, 0.02, d).astype(np.float32))])])
    text = g.op("Mul", ["text_features", g.op("Unsqueeze", [g.op("Cast", ["text_mask"], to=TensorProto.FLOAT), g.ints([2])])])
    prompt = g.op("Concat", [text, boxes], axis=1)                                                     # [1, 32+N, 256]
    q = decoder_queries(g, img, prompt, fusion_layers, query_layers)
    g.nodes.append(helper.make_node("Identity", [g.linear(g.op("ReduceMean", [q], axes=[1], keepdims=0), d, 1)], ["presence_logits"]))
    mask_head(g, q)
    feats, outputs = decoder_io()
    g.save(path, feats + [tensor("text_features", TensorProto.FLOAT, [1, 32, d]), tensor("text_mask", TensorProto.BOOL, [1, 32]),
                          tensor("input_boxes", TensorProto.FLOAT, [1, "N", 4]), tensor("input_boxes_labels", TensorProto.INT64, [1, "N"])],
           outputs, "decoder")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true", help="fewer blocks, same shapes")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.quick:
        vision_encoder(os.path.join(args.out, "vision-encoder.onnx"), 4, {1, 3})
        text_encoder(os.path.join(args.out, "text-encoder.onnx"), 2)
        decoder(os.path.join(args.out, "decoder.onnx"), 1, 1)
    else:
        vision_encoder(os.path.join(args.out, "vision-encoder.onnx"), 32, {7, 15, 23, 31})
        text_encoder(os.path.join(args.out, "text-encoder.onnx"), 24)
        decoder(os.path.join(args.out, "decoder.onnx"), 6, 6)
    # The usls layout ships a Hugging Face tokenizer.json; the bundled CLIP vocabulary is used
    # when it is absent, so none is written here.


if __name__ == "__main__":
    main()
