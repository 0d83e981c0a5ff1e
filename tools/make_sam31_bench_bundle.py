#!/usr/bin/env python3
"""Generates a SAM 3.1-shaped bench bundle: every file of ailia-models' segment-anything-3.1 bundle
(the names, inputs and outputs its video_tracking.py and segment_anything_3_1.py feed and read,
sam3-video-facts.md section 3), each graph with SAM 3.1's layer structure and widths and random
float32 weights (ailia's files are float32). Outputs are meaningless; costs are real. It loads as
the sam3.1-ailia family, like the real files, and `sam3 track` / `sam3-bench-video` run on it
(docs/video.md, "At SAM 3.1's real size").

Where the numbers come from (facebookresearch/sam3, read, not copied):
  image encoder   sam3/model_builder.py `_create_vit_backbone`: ViT, 1008 px, patch 14 (72x72 =
                  5184 tokens), width 1024, depth 32, 16 heads, mlp_ratio 4.625 (4736), windows of
                  24 except global blocks 7, 15, 23, 31, RoPE, ln_pre, no patch bias;
                  `_create_multiplex_tri_backbone` / sam3/model/necks.py: Sam3TriViTDetNeck,
                  scale factors [4, 2, 1], d_model 256, each level ConvTranspose 2x2 (1024->512->256)
                  / 1x1 / 3x3 convs. Of the three necks, ailia's encoder outputs two (the
                  detector's fpn0..2 and the propagation neck's prop_fpn0..2; its interactive
                  decoder reads prop_*), so two are built; pos* are the sine encodings (constants).
  grounding       `_create_text_encoder`: VETextEncoder width 1024, 24 layers, 16 heads (MLP 4096),
                  32 tokens, then the 1024->256 resizer; `_create_geometry_encoder`: 3 layers, d 256,
                  8 heads, FFN 2048, a CLS token; `_create_transformer_encoder`: 6 fusion layers over
                  the 5184 image tokens (self-attention, cross-attention to the prompt, FFN 2048
                  relu, 8 heads); `_create_transformer_decoder`: 6 layers, 200 queries + presence
                  token, text and image cross-attention, box refinement, boxRPB "log";
                  `_create_dot_product_scoring` (prompt MLP 2048); `_create_segmentation_head`:
                  cross-attention to the prompt, PixelDecoder (3x3 convs 256 at 144 and 288, GroupNorm
                  8), instance head 1x1, mask MLP (3 layers) dotted with the 288x288 pixel embedding.
  memory attention  `_create_multiplex_transformer`: 4 DecoupledTransformerDecoderLayerv2 layers,
                  d 256, 8 heads, FFN 2048 gelu, pre-norm; self-attention with 2-D RoPE (72x72);
                  cross-attention whose queries are image_q(curr_img) + q(tgt), keys image_k(memory_img,
                  zero for the pointer tokens) + k(memory_obj) + positions, values v(memory_obj),
                  RoPE on the spatial keys only; input 0.1 x curr_obj_pos; final LayerNorm.
  tracking decoder  sam3/model/multiplex_mask_decoder.py MultiplexMaskDecoder, multiplex 16, 3
                  multimask outputs (+1), separate obj-score and IoU tokens (16 each) and 64 mask
                  tokens (+ extra_embed per slot); SAM's TwoWayTransformer (depth 2, 8 heads, MLP
                  2048, cross-attention downsampled 2); ConvTranspose upscaling 256->64->32 with
                  conv_s0 / conv_s1 (256->32 / 256->64) on the high-resolution features;
                  hypernetwork MLPs (256->256->32); IoU head MLP (3); obj-score MLP (3).
  interactive decoder and prompt encoder  SAM's MaskDecoder (4 mask tokens, IoU and obj-score
                  tokens, the same two-way transformer) and PromptEncoder (random Fourier point
                  encoding, 4 point embeddings + not-a-point, mask downscaling 1->4->16->256).
  memory encoder  `_create_multiplex_maskmem_backbone`: SimpleMaskDownSampler kernel 3, stride 2,
                  padding 1, total stride 16 (4 convs) from 16 x 2 = 32 channels, starting at 4
                  channels (x4 a stage: 16, 64, 256, 1024), LayerNorm2d + GELU, 1x1 to 256;
                  pix_feat_proj 1x1; SimpleFuser of 2 CXBlocks (7x7 depthwise, 256->1024->256);
                  out_dim 256; sine position encoding.
  projections     `use_mlp_for_obj_ptr_proj`: obj_ptr_proj and interactive_obj_ptr_proj are
                  3-layer MLPs 256->256; `proj_tpos_enc_in_obj_ptrs`: obj_ptr_tpos_proj a Linear
                  256->256.
  constants       npy/ with the shapes ailia's files have (maskmem_tpos_enc [7,1,1,256], ...).

Random weights find nothing, so each file also holds the behaviour graph of make_video_models.py
at 1008 pixels (the generated scene's coloured squares, detected, tracked and remembered) on the
same inputs; each output is the behaviour graph's plus 0 x the real graph's, so every real layer
runs and the tracker's host rules see a video's objects (merge_and_save). The behaviour graphs'
own cost is small beside the real ones' (docs/video.md).

  make_sam31_bench_bundle.py --out DIR [--quick]

--quick: the same graphs, inputs and outputs (every name and shape the same), at reduced depths
and inner widths (ViT 2 blocks of 64, one layer of each transformer, attention and convolution
inner widths 16), so that a test runs a few frames in seconds. Its declared inputs and outputs
are those of the full bundle (one code path declares both).

  make_sam31_bench_bundle.py --memory-attention-alone --out DIR [--quick]

writes only DIR/sam3.1_memory_attention.onnx, the real-structure graph alone (no behaviour graph,
so its output is the attention's own), for checking that sam3's attention fusion keeps it equal
(tests/video/bench_bundle_test.cpp). With --quick: 2 layers, 2 heads of 16 (the bundle's quick
widths have one head, which would not check the head layout).
"""
import argparse
import dataclasses
import math
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, external_data_helper, helper, numpy_helper

import onnx_graph
from onnx_graph import tensor

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB = os.path.join(HERE, "..", "data", "clip", "bpe_simple_vocab_16e6.txt.gz")

# The bundle's interface (ailia's files): fixed whatever the inner widths.
IMAGE = 1008          # input pixels
GRID = 72             # 1008 / 14: tokens a side
D = 256               # every feature the graphs exchange
SLOTS = 16            # multiplex_count
MEMORY_MASK = 1152    # memory encoder's mask size (interpol_size)
TEXT_TOKENS = 32
QUERIES = 200
VOCAB_SIZE = 49408


@dataclass
class Widths:
    vit_width: int = 1024
    vit_depth: int = 32
    vit_heads: int = 16
    vit_mlp: int = 4736
    vit_global: tuple = (7, 15, 23, 31)
    window: int = 24
    neck: int = 256           # the necks' 3x3 convolution width (d_model)
    text_width: int = 1024
    text_layers: int = 24
    text_heads: int = 16
    text_mlp: int = 4096
    attn: int = 256           # attention width of the d=256 transformers
    heads: int = 8
    ffn: int = 2048
    geo_layers: int = 3
    fusion_layers: int = 6
    decoder_layers: int = 6
    memory_layers: int = 4
    twoway_depth: int = 2
    pixel: int = 256          # pixel decoder width
    mask_chans: tuple = (16, 64, 256, 1024)   # memory downsampler (4 x 4^k)
    cx_hidden: int = 1024


QUICK = Widths(vit_width=64, vit_depth=2, vit_heads=2, vit_mlp=296, vit_global=(1,), neck=16, text_width=64, text_layers=1,
               text_heads=2, text_mlp=256, attn=16, heads=1, ffn=32, geo_layers=1, fusion_layers=1, decoder_layers=1,
               memory_layers=1, twoway_depth=1, pixel=16, mask_chans=(4, 8, 16, 32), cx_hidden=32)

rng = np.random.default_rng(31)


def randn(shape, std):
    return (rng.standard_normal(shape, dtype=np.float32) * np.float32(std)).astype(np.float32)


class Graph(onnx_graph.Graph):
    def linear(self, x, k, n, bias=True):
        y = self.op("MatMul", [x, self.const(randn((k, n), 1.0 / math.sqrt(k)))])
        return self.op("Add", [y, self.const(randn((n,), 0.02))]) if bias else y

    def mlp(self, x, dims, act="Relu"):
        """Linear layers through dims (dims[0] in), act between them (SAM's MLP)."""
        for i in range(len(dims) - 1):
            x = self.linear(x, dims[i], dims[i + 1])
            if i + 2 < len(dims):
                x = self.gelu(x) if act == "Gelu" else self.op(act, [x])
        return x

    def layer_norm(self, x, width, axis=-1):
        return self.op("LayerNormalization", [x, self.const(np.ones(width, np.float32)), self.const(np.zeros(width, np.float32))],
                       axis=axis, epsilon=1e-6)

    def layer_norm_2d(self, x, chans):
        """LayerNorm2d over the channels of [B,C,H,W]."""
        t = self.op("Transpose", [x], perm=[0, 2, 3, 1])
        return self.op("Transpose", [self.layer_norm(t, chans)], perm=[0, 3, 1, 2])

    def gelu(self, x):
        e = self.op("Erf", [self.op("Div", [x, self.const(np.float32(np.sqrt(2)))])])
        return self.op("Mul", [self.op("Mul", [x, self.op("Add", [e, self.const(np.float32(1.0))])]), self.const(np.float32(0.5))])

    def conv(self, x, cin, cout, k, stride=1, pad=0, groups=1, bias=True):
        w = self.const(randn((cout, cin // groups, k, k), 1.0 / math.sqrt(cin // groups * k * k)))
        ins = [x, w] + ([self.const(randn((cout,), 0.02))] if bias else [])
        return self.op("Conv", ins, kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4, group=groups)

    def deconv2(self, x, cin, cout):
        """ConvTranspose 2x2 stride 2."""
        w = self.const(randn((cin, cout, 2, 2), 1.0 / math.sqrt(cin)))
        return self.op("ConvTranspose", [x, w, self.const(randn((cout,), 0.02))], kernel_shape=[2, 2], strides=[2, 2])

    def heads_split(self, t, heads, d):  # [B,T,heads*d] -> [B,heads,T,d]
        return self.op("Transpose", [self.op("Reshape", [t, self.ints([0, 0, heads, d])])], perm=[0, 2, 1, 3])

    def sdpa(self, q, k, v, heads, width, bias=None):
        """Attention of [B,heads,T,d] tensors -> [B,T,width]."""
        d = width // heads
        s = self.op("Mul", [self.op("MatMul", [q, self.op("Transpose", [k], perm=[0, 1, 3, 2])]), self.const(np.float32(1 / math.sqrt(d)))])
        if bias is not None:
            s = self.op("Add", [s, bias])
        out = self.op("MatMul", [self.op("Softmax", [s], axis=-1), v])
        return self.op("Reshape", [self.op("Transpose", [out], perm=[0, 2, 1, 3]), self.ints([0, 0, width])])

    def attention(self, q_in, k_in, v_in, dim, inner, heads, bias=None, rope_q=None, rope_k=None):
        """nn.MultiheadAttention-style: q/k/v projections dim->inner, heads, out projection inner->dim."""
        d = inner // heads
        q = self.heads_split(self.linear(q_in, dim, inner), heads, d)
        k = self.heads_split(self.linear(k_in, dim, inner), heads, d)
        v = self.heads_split(self.linear(v_in, dim, inner), heads, d)
        if rope_q is not None:
            q = rope_q(q)
        if rope_k is not None:
            k = rope_k(k)
        return self.linear(self.sdpa(q, k, v, heads, inner, bias), inner, dim)

    def rope(self, x, tables):
        """2-D rotary encoding of [B,heads,T,d] (T a multiple of the table's rows): x cos + rot(x) sin."""
        cos, sin = tables
        d = cos.shape[-1]
        half = d // 2
        x1 = self.op("Slice", [x, self.ints([0]), self.ints([half]), self.ints([3])])
        x2 = self.op("Slice", [x, self.ints([half]), self.ints([d]), self.ints([3])])
        rot = self.op("Concat", [self.op("Neg", [x2]), x1], axis=3)
        n = cos.shape[0]
        # [B,h,T,d] -> [B,h,T/n,n,d] so that each frame of n tokens gets the table.
        split = self.ints([0, 0, -1, n, d])
        xs, rs = self.op("Reshape", [x, split]), self.op("Reshape", [rot, split])
        y = self.op("Add", [self.op("Mul", [xs, self.const(cos)]), self.op("Mul", [rs, self.const(sin)])])
        return self.op("Reshape", [y, self.ints([0, 0, -1, d])])

    def save(self, path, inputs, outputs, name):
        """Keeps the graph for merge_and_save (main) instead of writing it."""
        BUILT[os.path.basename(path)] = (self, inputs, outputs, name)


BUILT = {}  # file name -> (graph, inputs, outputs, graph name)
# The grounding outputs whose query axis the behaviour detector fills only in part, and the value
# of the other queries' logits and masks (pred_boxes: the real graph's boxes).
QUERY_FILL = {"pred_masks": -20.0, "pred_logits": -20.0, "pred_boxes": 0.0}


def rope_tables(d, side, window=None):
    """cos/sin [side*side, d] of axial 2-D RoPE (theta 10000), x in the first half, y in the second."""
    quarter = d // 4
    freqs = 1.0 / (10000 ** (np.arange(quarter, dtype=np.float32) / quarter))
    ys, xs = np.divmod(np.arange(side * side), side)
    ang = np.concatenate([np.outer(xs, freqs), np.outer(ys, freqs)], axis=1)     # [n, d/2]
    ang = np.concatenate([ang, ang], axis=1)
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def sine_pe(g, side, chans=D):
    """The sine position encoding of a side x side map, [1,chans,side,side], made by broadcasting
    (y in the first half of the channels, x in the second) rather than stored."""
    half = chans // 2
    dim_t = 10000 ** (2 * (np.arange(half) // 2) / half)
    pos = (np.arange(side, dtype=np.float32) + 1) / side * 2 * np.pi
    enc = pos[:, None] / dim_t[None, :]
    enc[:, 0::2], enc[:, 1::2] = np.sin(enc[:, 0::2]), np.cos(enc[:, 1::2])
    enc = enc.astype(np.float32).T                                                  # [half, side]
    y = g.op("Expand", [g.const(enc.reshape(1, half, side, 1)), g.ints([1, half, side, side])])
    x = g.op("Expand", [g.const(enc.reshape(1, half, 1, side)), g.ints([1, half, side, side])])
    return g.op("Concat", [y, x], axis=1)


# ---------------------------------------------------------------- image encoder

def vit(g, w, pixels):
    width, heads, d = w.vit_width, w.vit_heads, w.vit_width // w.vit_heads
    patches = g.op("Conv", [pixels, g.const(randn((width, 3, 14, 14), 0.02))], kernel_shape=[14, 14], strides=[14, 14])
    x = g.op("Transpose", [g.op("Reshape", [patches, g.ints([1, width, GRID * GRID])])], perm=[0, 2, 1])
    x = g.op("Add", [x, g.const(randn((1, GRID * GRID, width), 0.02))])           # abs pos, tiled from 24x24
    x = g.layer_norm(x, width)                                                      # ln_pre
    win, nw = w.window, GRID // w.window
    rope_win, rope_glob = rope_tables(d, win), rope_tables(d, GRID)
    for b in range(w.vit_depth):
        h = g.layer_norm(x, width)
        glob = b in w.vit_global
        if not glob:   # [1, 72*72, C] -> [9, 576, C]
            h = g.op("Reshape", [h, g.ints([1, nw, win, nw, win, width])])
            h = g.op("Reshape", [g.op("Transpose", [h], perm=[0, 1, 3, 2, 4, 5]), g.ints([nw * nw, win * win, width])])
        qkv = g.op("Transpose", [g.op("Reshape", [g.linear(h, width, 3 * width), g.ints([0, 0, 3, heads, d])])], perm=[2, 0, 3, 1, 4])
        q, k, v = [g.op("Squeeze", [t, g.ints([0])]) for t in g.op("Split", [qkv], outputs=3, axis=0)]
        tables = rope_glob if glob else rope_win
        h = g.linear(g.sdpa(g.rope(q, tables), g.rope(k, tables), v, heads, width), width, width)
        if not glob:
            h = g.op("Transpose", [g.op("Reshape", [h, g.ints([1, nw, nw, win, win, width])])], perm=[0, 1, 3, 2, 4, 5])
            h = g.op("Reshape", [h, g.ints([1, GRID * GRID, width])])
        x = g.op("Add", [x, h])
        x = g.op("Add", [x, g.linear(g.gelu(g.linear(g.layer_norm(x, width), width, w.vit_mlp)), w.vit_mlp, width)])
    return g.op("Reshape", [g.op("Transpose", [x], perm=[0, 2, 1]), g.ints([1, width, GRID, GRID])])


def neck(g, w, x):
    """One ViTDet SimpleFPN neck at scales 4, 2, 1 -> [288, 144, 72] maps of 256 channels."""
    c = w.vit_width
    outs = []
    for scale in (4, 2, 1):
        if scale == 4:
            y, ch = g.deconv2(g.gelu(g.deconv2(x, c, c // 2)), c // 2, c // 4), c // 4
        elif scale == 2:
            y, ch = g.deconv2(x, c, c // 2), c // 2
        else:
            y, ch = x, c
        if w.neck == D:
            y = g.conv(g.conv(y, ch, D, 1), D, D, 3, pad=1)
        else:  # --quick: the 3x3 convolution at a reduced width, then to the 256 channels of the interface
            y = g.conv(g.conv(g.conv(y, ch, w.neck, 1), w.neck, w.neck, 3, pad=1), w.neck, D, 1)
        outs.append(y)
    return outs


def make_image_encoder(out, w):
    g = Graph()
    x = vit(g, w, "image")
    det, prop = neck(g, w, x), neck(g, w, x)
    for k in range(3):
        g.name(det[k], f"fpn{k}")
        g.name(prop[k], f"prop_fpn{k}")
        g.name(sine_pe(g, GRID << (2 - k)), f"pos{k}")
    g.name(sine_pe(g, GRID), "prop_pos2")
    level = lambda k: [1, D, GRID << (2 - k), GRID << (2 - k)]
    g.save(os.path.join(out, "sam3.1_image_encoder.onnx"), [tensor("image", TensorProto.FLOAT, [1, 3, IMAGE, IMAGE])],
           [tensor(f"fpn{k}", TensorProto.FLOAT, level(k)) for k in range(3)]
           + [tensor(f"pos{k}", TensorProto.FLOAT, level(k)) for k in range(3)]
           + [tensor(f"prop_fpn{k}", TensorProto.FLOAT, level(k)) for k in range(3)]
           + [tensor("prop_pos2", TensorProto.FLOAT, level(2))], "image_encoder")


# ---------------------------------------------------------------- grounding

def tokens_of(g, x, chans=D):
    """[1,C,H,W] -> [1,H*W,C]."""
    return g.op("Transpose", [g.op("Reshape", [x, g.ints([1, chans, -1])])], perm=[0, 2, 1])


def map_of(g, t, side, chans=D):
    return g.op("Reshape", [g.op("Transpose", [t], perm=[0, 2, 1]), g.ints([1, chans, side, side])])


def text_encoder(g, w):
    width = w.text_width
    x = g.op("Gather", [g.const(randn((VOCAB_SIZE, width), 0.02)), "text_tokens"], axis=0)          # [1,32,W]
    x = g.op("Add", [x, g.const(randn((1, TEXT_TOKENS, width), 0.01))])
    causal = g.const(np.triu(np.full((TEXT_TOKENS, TEXT_TOKENS), -1e4, np.float32), 1).reshape(1, 1, TEXT_TOKENS, TEXT_TOKENS))
    for _ in range(w.text_layers):
        h = g.layer_norm(x, width)
        x = g.op("Add", [x, g.attention(h, h, h, width, width, w.text_heads, bias=causal)])
        x = g.op("Add", [x, g.mlp(g.layer_norm(x, width), [width, w.text_mlp, width], "Gelu")])
    text = g.linear(g.layer_norm(x, width), width, D)                                                # resizer
    valid = g.op("Cast", [g.op("Greater", ["text_tokens", g.const(np.array(0, np.int64), np.int64)])], to=TensorProto.FLOAT)
    return text, valid                                                                               # [1,32,256], [1,32]


def pre_norm_layer(g, w, x, pos, cross=None, cross_pos=None, self_attn=True, act="Relu", bias=None):
    """A pre-norm transformer layer on [1,T,256]: self-attention (positions on q, k), cross-attention
    to `cross`, FFN."""
    if self_attn:
        h = g.layer_norm(x, D)
        qk = g.op("Add", [h, pos]) if pos is not None else h
        x = g.op("Add", [x, g.attention(qk, qk, h, D, w.attn, w.heads)])
    if cross is not None:
        h = g.layer_norm(x, D)
        k = g.op("Add", [cross, cross_pos]) if cross_pos is not None else cross
        x = g.op("Add", [x, g.attention(h, k, cross, D, w.attn, w.heads, bias=bias)])
    return g.op("Add", [x, g.mlp(g.layer_norm(x, D), [D, w.ffn, D], act)])


def make_grounding(out, w):
    g = Graph()
    text, valid = text_encoder(g, w)
    img = tokens_of(g, "fpn2")                                                                       # [1,5184,256]
    img_pos = tokens_of(g, "pos2")
    # Geometry encoder: boxes (cx,cy,w,h) and labels projected, a CLS token, 3 layers over them with
    # cross-attention to the image.
    boxes = g.op("Transpose", ["box_coords"], perm=[1, 0, 2])                                        # [1,N,4]
    labels = g.op("Transpose", ["box_labels"], perm=[1, 0])                                          # [1,N]
    label = g.op("Unsqueeze", [g.op("Cast", [labels], to=TensorProto.FLOAT), g.ints([2])])
    geo = g.op("Add", [g.linear(boxes, 4, D), g.op("Mul", [label, g.const(randn((D,), 0.02))])])
    geo = g.op("Concat", [g.const(randn((1, 1, D), 0.02)), geo], axis=1)                             # [1,N+1,256]
    for _ in range(w.geo_layers):
        geo = pre_norm_layer(g, w, geo, None, img, img_pos)
    geo = g.linear(g.layer_norm(geo, D), D, D)
    box_valid = g.op("Cast", [g.op("Not", ["box_mask"])], to=TensorProto.FLOAT)                     # [1,N]
    prompt = g.op("Concat", [text, geo], axis=1)                                                     # [1,33+N,256]
    prompt_valid = g.op("Concat", [valid, g.const(np.ones((1, 1), np.float32)), box_valid], axis=1)
    pad_bias = g.op("Unsqueeze", [g.op("Mul", [g.op("Sub", [prompt_valid, g.const(np.float32(1.0))]), g.const(np.float32(1e4))]),
                                  g.ints([1, 2])])                                                   # [1,1,1,P]
    # Fusion encoder: 6 layers over the image tokens.
    mem = img
    for _ in range(w.fusion_layers):
        mem = pre_norm_layer(g, w, mem, img_pos, prompt, None, bias=pad_bias)
    # Decoder: 200 queries and the presence token; boxRPB (log) bias on the image cross-attention.
    q = g.op("Concat", [g.const(randn((1, QUERIES, D), 0.02)), g.const(randn((1, 1, D), 0.02))], axis=1)     # [1,201,256]
    ref = g.op("Sigmoid", [g.const(randn((1, QUERIES, 4), 1.0))])                                   # cx,cy,w,h
    grid = g.const(((np.arange(GRID, dtype=np.float32) + 0.5) / GRID).reshape(1, 1, GRID))
    for _ in range(w.decoder_layers):
        def axis_bias(c0, c1):
            lo = g.op("Slice", [ref, g.ints([c0]), g.ints([c0 + 1]), g.ints([2])])                 # [1,200,1]
            half = g.op("Mul", [g.op("Slice", [ref, g.ints([c1]), g.ints([c1 + 1]), g.ints([2])]), g.const(np.float32(0.5))])
            d = g.op("Concat", [g.op("Unsqueeze", [g.op("Sub", [grid, g.op("Sub", [lo, half])]), g.ints([3])]),
                                g.op("Unsqueeze", [g.op("Sub", [grid, g.op("Add", [lo, half])]), g.ints([3])])], axis=3)
            d = g.op("Mul", [g.op("Sign", [d]), g.op("Log", [g.op("Add", [g.op("Abs", [g.op("Mul", [d, g.const(np.float32(8.0))])]),
                                                                         g.const(np.float32(1.0))])])])   # [1,200,72,2]
            return g.mlp(d, [2, D, w.heads])                                                          # [1,200,72,h]
        bx, by = axis_bias(0, 2), axis_bias(1, 3)
        rpb = g.op("Add", [g.op("Unsqueeze", [by, g.ints([3])]), g.op("Unsqueeze", [bx, g.ints([2])])])      # [1,200,72,72,h]
        rpb = g.op("Transpose", [g.op("Reshape", [rpb, g.ints([1, QUERIES, GRID * GRID, w.heads])])], perm=[0, 3, 1, 2])
        rpb = g.op("Pad", [rpb, g.ints([0, 0, 0, 0, 0, 0, 1, 0])])                                  # presence row: no bias
        h = g.layer_norm(q, D)
        q = g.op("Add", [q, g.attention(h, h, h, D, w.attn, w.heads)])
        h = g.layer_norm(q, D)
        q = g.op("Add", [q, g.attention(h, prompt, prompt, D, w.attn, w.heads, bias=pad_bias)])
        h = g.layer_norm(q, D)
        q = g.op("Add", [q, g.attention(h, g.op("Add", [mem, img_pos]), mem, D, w.attn, w.heads, bias=rpb)])
        q = g.op("Add", [q, g.mlp(g.layer_norm(q, D), [D, w.ffn, D])])
        queries = g.op("Slice", [q, g.ints([0]), g.ints([QUERIES]), g.ints([1])])
        delta = g.mlp(g.layer_norm(queries, D), [D, D, D, 4])
        ref = g.op("Sigmoid", [g.op("Add", [delta, g.op("Log", [g.op("Div", [ref, g.op("Sub", [g.const(np.float32(1.0001)), ref])])])])])
    q = g.layer_norm(q, D)
    queries = g.op("Slice", [q, g.ints([0]), g.ints([QUERIES]), g.ints([1])])
    presence = g.op("Slice", [q, g.ints([QUERIES]), g.ints([QUERIES + 1]), g.ints([1])])
    # Dot-product scoring: the prompt through its MLP (residual, LayerNorm), mean over valid tokens.
    p = g.layer_norm(g.op("Add", [prompt, g.mlp(prompt, [D, w.ffn, D])]), D)
    weights = g.op("Unsqueeze", [prompt_valid, g.ints([2])])
    pooled = g.op("Div", [g.op("ReduceSum", [g.op("Mul", [p, weights]), g.ints([1])], keepdims=1),
                          g.op("ReduceSum", [weights, g.ints([1])], keepdims=1)])                    # [1,1,256]
    logits = g.op("MatMul", [g.linear(queries, D, D), g.op("Transpose", [g.linear(pooled, D, D)], perm=[0, 2, 1])])
    g.name(g.op("Mul", [logits, g.const(np.float32(1 / 16))]), "pred_logits")                        # [1,200,1]
    g.name(ref, "pred_boxes")
    g.name(g.op("Reshape", [g.mlp(presence, [D, D, D, 1]), g.ints([1, 1])]), "presence_logit_dec")
    # Segmentation head.
    h = g.layer_norm(mem, D)
    enc = g.op("Add", [mem, g.attention(h, prompt, prompt, D, w.attn, w.heads, bias=pad_bias)])
    prev = map_of(g, enc, GRID)
    for feat, side in (("fpn1", GRID * 2), ("fpn0", GRID * 4)):
        up = g.op("Resize", [prev, "", g.const(np.array([1, 1, 2, 2], np.float32))], mode="nearest")
        x = g.op("Add", [feat, up])
        if w.pixel == D:
            x = g.conv(x, D, D, 3, pad=1)
            # GroupNorm(8): LayerNormalization over each group of 32 channels (opset 17 has no GroupNormalization).
            grouped = g.op("Reshape", [x, g.ints([1, 8, -1])])
            centred = g.op("Sub", [grouped, g.op("ReduceMean", [grouped], axes=[2], keepdims=1)])
            var = g.op("ReduceMean", [g.op("Mul", [centred, centred])], axes=[2], keepdims=1)
            grouped = g.op("Div", [centred, g.op("Sqrt", [g.op("Add", [var, g.const(np.float32(1e-5))])])])
            x = g.op("Reshape", [grouped, g.ints([1, D, side, side])])
        else:  # --quick: the 3x3 convolution at a reduced width
            x = g.conv(g.conv(g.conv(x, D, w.pixel, 1), w.pixel, w.pixel, 3, pad=1), w.pixel, D, 1)
        prev = g.op("Relu", [x])
    instance = g.conv(prev, D, D, 1)                                                                 # [1,256,288,288]
    embed = g.mlp(queries, [D, D, D, D])                                                             # [1,200,256]
    masks = g.op("MatMul", [embed, g.op("Reshape", [instance, g.ints([1, D, -1])])])
    g.name(g.op("Reshape", [masks, g.ints([1, QUERIES, GRID * 4, GRID * 4])]), "pred_masks")
    level = lambda k: [1, D, GRID << (2 - k), GRID << (2 - k)]
    g.save(os.path.join(out, "sam3.1_grounding.onnx"),
           [tensor(f"fpn{k}", TensorProto.FLOAT, level(k)) for k in range(3)]
           + [tensor("pos2", TensorProto.FLOAT, level(2)), tensor("text_tokens", TensorProto.INT64, [1, TEXT_TOKENS]),
              tensor("box_coords", TensorProto.FLOAT, ["N", 1, 4]), tensor("box_labels", TensorProto.INT64, ["N", 1]),
              tensor("box_mask", TensorProto.BOOL, [1, "N"])],
           [tensor("pred_masks", TensorProto.FLOAT, [1, QUERIES, GRID * 4, GRID * 4]), tensor("pred_boxes", TensorProto.FLOAT, [1, QUERIES, 4]),
            tensor("pred_logits", TensorProto.FLOAT, [1, QUERIES, 1]), tensor("presence_logit_dec", TensorProto.FLOAT, [1, 1])],
           "grounding")


# ---------------------------------------------------------------- SAM decoders

def two_way(g, w, tokens, img, pe):
    """SAM's TwoWayTransformer on tokens [B,T,256] and image tokens [B,5184,256] (+ pe)."""
    half = max(w.attn // 2, 8)   # attention_downsample_rate 2
    queries, keys = tokens, img
    for i in range(w.twoway_depth):
        if i == 0:   # skip_first_layer_pe: the first self-attention replaces the queries
            queries = g.attention(queries, queries, queries, D, w.attn, w.heads)
        else:
            q = g.op("Add", [queries, tokens])
            queries = g.op("Add", [queries, g.attention(q, q, queries, D, w.attn, w.heads)])
        queries = g.layer_norm(queries, D)
        kp = g.op("Add", [keys, pe])
        queries = g.layer_norm(g.op("Add", [queries, g.attention(g.op("Add", [queries, tokens]), kp, keys, D, half, w.heads)]), D)
        queries = g.layer_norm(g.op("Add", [queries, g.mlp(queries, [D, w.ffn, D])]), D)
        keys = g.layer_norm(g.op("Add", [keys, g.attention(kp, g.op("Add", [queries, tokens]), queries, D, half, w.heads)]), D)
    queries = g.op("Add", [queries, g.attention(g.op("Add", [queries, tokens]), g.op("Add", [keys, pe]), keys, D, half, w.heads)])
    return g.layer_norm(queries, D), keys


def upscale(g, src_map, feat0, feat1):
    """SAM 2's output upscaling with high-resolution features: [B,256,72,72] -> [B,32,288,288]."""
    s0 = g.conv(feat0, D, D // 8, 1)
    s1 = g.conv(feat1, D, D // 4, 1)
    x = g.gelu(g.layer_norm_2d(g.op("Add", [g.deconv2(src_map, D, D // 4), s1]), D // 4))
    return g.gelu(g.op("Add", [g.deconv2(x, D // 4, D // 8), s0]))


def make_tracking_decoder(out, w):
    g = Graph()
    per = 4  # 3 multimask outputs + the single-mask token
    extra = g.op("Unsqueeze", ["extra_embed", g.ints([2])])                                          # [1,16,1,256]
    mask_tokens = g.op("Add", [g.const(randn((1, SLOTS, per, D), 0.02)), extra])
    tokens = g.op("Concat", [g.const(randn((1, 2 * SLOTS, D), 0.02)), g.op("Reshape", [mask_tokens, g.ints([1, SLOTS * per, D])])], axis=1)
    pe = tokens_of(g, g.const(randn((1, D, GRID, GRID), 0.5)))
    hs, keys = two_way(g, w, tokens, tokens_of(g, "image_embeddings"), pe)
    up = upscale(g, map_of(g, keys, GRID), "high_res_feat0", "high_res_feat1")                      # [1,32,288,288]
    score_tok = g.op("Slice", [hs, g.ints([0]), g.ints([SLOTS]), g.ints([1])])
    iou_tok = g.op("Slice", [hs, g.ints([SLOTS]), g.ints([2 * SLOTS]), g.ints([1])])
    mask_out = g.op("Reshape", [g.op("Slice", [hs, g.ints([2 * SLOTS]), g.ints([2 * SLOTS + SLOTS * per]), g.ints([1])]),
                                g.ints([1, SLOTS, per, D])])
    hyper = g.op("Concat", [g.op("Unsqueeze", [g.mlp(g.op("Gather", [mask_out, g.const(np.array(i, np.int64), np.int64)], axis=2),
                                                     [D, D, D, D // 8]), g.ints([2])]) for i in range(per)], axis=2)   # [1,16,4,32]
    masks = g.op("MatMul", [g.op("Reshape", [hyper, g.ints([1, SLOTS * per, D // 8])]), g.op("Reshape", [up, g.ints([1, D // 8, -1])])])
    masks = g.op("Reshape", [masks, g.ints([1, SLOTS, per, GRID * 4, GRID * 4])])
    multi = lambda t, axis: g.op("Slice", [t, g.ints([1]), g.ints([per]), g.ints([axis])])
    g.name(multi(masks, 2), "masks")
    g.name(multi(g.mlp(iou_tok, [D, D, D, per]), 2), "iou_pred")
    g.name(multi(mask_out, 2), "sam_tokens")
    g.name(g.mlp(score_tok, [D, D, D, 1]), "obj_score")
    m = GRID * 4
    g.save(os.path.join(out, "sam3.1_tracking_mask_decoder.onnx"),
           [tensor("image_embeddings", TensorProto.FLOAT, [1, D, GRID, GRID]), tensor("high_res_feat0", TensorProto.FLOAT, [1, D, m, m]),
            tensor("high_res_feat1", TensorProto.FLOAT, [1, D, m // 2, m // 2]), tensor("extra_embed", TensorProto.FLOAT, [1, SLOTS, D])],
           [tensor("masks", TensorProto.FLOAT, [1, SLOTS, 3, m, m]), tensor("iou_pred", TensorProto.FLOAT, [1, SLOTS, 3]),
            tensor("sam_tokens", TensorProto.FLOAT, [1, SLOTS, 3, D]), tensor("obj_score", TensorProto.FLOAT, [1, SLOTS, 1])],
           "tracking_mask_decoder")


def make_mask_decoder(out, w):
    g = Graph()
    b = g.op("Slice", [g.op("Shape", ["sparse_prompt_embeddings"]), g.ints([0]), g.ints([1])])
    own = g.op("Expand", [g.const(randn((1, 6, D), 0.02)), g.op("Concat", [b, g.ints([6, D])], axis=0)])   # obj score, iou, 4 masks
    tokens = g.op("Concat", [own, "sparse_prompt_embeddings"], axis=1)
    src = g.op("Transpose", [g.op("Reshape", [g.op("Add", ["image_embeddings", "dense_prompt_embeddings"]), g.ints([0, D, -1])])], perm=[0, 2, 1])
    hs, keys = two_way(g, w, tokens, src, tokens_of(g, "image_pe"))
    keys_map = g.op("Reshape", [g.op("Transpose", [keys], perm=[0, 2, 1]), g.ints([0, D, GRID, GRID])])
    up = upscale(g, keys_map, "high_res_features1", "high_res_features2")
    mask_out = g.op("Slice", [hs, g.ints([2]), g.ints([6]), g.ints([1])])                           # [B,4,256]
    hyper = g.op("Concat", [g.op("Unsqueeze", [g.mlp(g.op("Gather", [mask_out, g.const(np.array(i, np.int64), np.int64)], axis=1),
                                                     [D, D, D, D // 8]), g.ints([1])]) for i in range(4)], axis=1)     # [B,4,32]
    masks = g.op("MatMul", [hyper, g.op("Reshape", [up, g.ints([0, D // 8, -1])])])
    m = GRID * 4
    g.name(g.op("Reshape", [masks, g.ints([0, 4, m, m])]), "masks")
    pick = lambda i: g.op("Gather", [hs, g.const(np.array(i, np.int64), np.int64)], axis=1)
    g.name(g.mlp(pick(1), [D, D, D, 4]), "iou_pred")
    g.name(mask_out, "sam_tokens_out")
    g.name(g.mlp(pick(0), [D, D, D, 1]), "object_score_logits")
    g.save(os.path.join(out, "sam3.1_mask_decoder.onnx"),
           [tensor("image_embeddings", TensorProto.FLOAT, ["B", D, GRID, GRID]), tensor("image_pe", TensorProto.FLOAT, [1, D, GRID, GRID]),
            tensor("sparse_prompt_embeddings", TensorProto.FLOAT, ["B", "P", D]),
            tensor("dense_prompt_embeddings", TensorProto.FLOAT, ["B", D, GRID, GRID]),
            tensor("high_res_features1", TensorProto.FLOAT, ["B", D, m, m]), tensor("high_res_features2", TensorProto.FLOAT, ["B", D, m // 2, m // 2])],
           [tensor("masks", TensorProto.FLOAT, ["B", 4, m, m]), tensor("iou_pred", TensorProto.FLOAT, ["B", 4]),
            tensor("sam_tokens_out", TensorProto.FLOAT, ["B", 4, D]), tensor("object_score_logits", TensorProto.FLOAT, ["B", 1])],
           "mask_decoder")


def make_prompt_encoder(out, w):
    g = Graph()
    m = GRID * 4
    xy = g.op("Sub", [g.op("Mul", [g.op("Div", ["coords", g.const(np.float32(IMAGE))]), g.const(np.float32(2.0))]), g.const(np.float32(1.0))])
    ang = g.op("Mul", [g.op("MatMul", [xy, g.const(randn((2, D // 2), 1.0))]), g.const(np.float32(2 * np.pi))])
    pe = g.op("Concat", [g.op("Sin", [ang]), g.op("Cos", [ang])], axis=2)                           # [B,P,256]
    labels = g.op("Cast", ["labels"], to=TensorProto.INT64)
    is_point = g.op("Cast", [g.op("Greater", [labels, g.const(np.array(-1, np.int64), np.int64)])], to=TensorProto.FLOAT)
    embed = g.op("Gather", [g.const(randn((5, D), 0.02)), g.op("Add", [labels, g.const(np.array(1, np.int64), np.int64)])], axis=0)
    g.name(g.op("Add", [g.op("Mul", [pe, g.op("Unsqueeze", [is_point, g.ints([2])])]), embed]), "sparse_embeddings")
    x = g.gelu(g.layer_norm_2d(g.conv("masks", 1, 4, 2, stride=2), 4))
    x = g.gelu(g.layer_norm_2d(g.conv(x, 4, 16, 2, stride=2), 16))
    dense = g.conv(x, 16, D, 1)                                                                      # [B,256,72,72]
    enable = g.op("Cast", ["masks_enable"], to=TensorProto.FLOAT)
    no_mask = g.const(randn((1, D, 1, 1), 0.02))
    g.name(g.op("Add", [g.op("Mul", [dense, enable]), g.op("Mul", [no_mask, g.op("Sub", [g.const(np.float32(1.0)), enable])])]),
           "dense_embeddings")
    grid = (np.stack(np.meshgrid(np.arange(GRID), np.arange(GRID)), -1).reshape(-1, 2).astype(np.float32) + 0.5) / GRID * 2 - 1
    dense_ang = g.op("Mul", [g.op("MatMul", [g.const(grid), g.const(randn((2, D // 2), 1.0))]), g.const(np.float32(2 * np.pi))])
    dpe = g.op("Concat", [g.op("Sin", [dense_ang]), g.op("Cos", [dense_ang])], axis=1)             # [5184,256]
    g.name(g.op("Reshape", [g.op("Transpose", [dpe], perm=[1, 0]), g.ints([1, D, GRID, GRID])]), "dense_pe")
    g.save(os.path.join(out, "sam3.1_prompt_encoder.onnx"),
           [tensor("coords", TensorProto.FLOAT, ["B", "P", 2]), tensor("labels", TensorProto.INT32, ["B", "P"]),
            tensor("masks", TensorProto.FLOAT, ["B", 1, m, m]), tensor("masks_enable", TensorProto.INT32, [1])],
           [tensor("sparse_embeddings", TensorProto.FLOAT, ["B", "P", D]), tensor("dense_embeddings", TensorProto.FLOAT, ["B", D, GRID, GRID]),
            tensor("dense_pe", TensorProto.FLOAT, [1, D, GRID, GRID])], "prompt_encoder")


# ---------------------------------------------------------------- memory

def make_memory_encoder(out, w):
    g = Graph()
    x, cin = "masks", 2 * SLOTS
    for cout in w.mask_chans:   # 1152 -> 576 -> 288 -> 144 -> 72
        x = g.gelu(g.layer_norm_2d(g.conv(x, cin, cout, 3, stride=2, pad=1), cout))
        cin = cout
    x = g.op("Add", [g.conv("pix_feat", D, D, 1), g.conv(x, cin, D, 1)])
    for _ in range(2):   # CXBlocks
        h = g.conv(x, D, D, 7, pad=3, groups=D)
        h = g.op("Transpose", [h], perm=[0, 2, 3, 1])
        h = g.mlp(g.layer_norm(h, D), [D, w.cx_hidden, D], "Gelu")
        h = g.op("Mul", [h, g.const(np.full(D, 1e-6, np.float32))])
        x = g.op("Add", [x, g.op("Transpose", [h], perm=[0, 3, 1, 2])])
    g.name(x, "vision_features")
    b = g.op("Slice", [g.op("Shape", ["pix_feat"]), g.ints([0]), g.ints([1])])
    g.name(g.op("Expand", [sine_pe(g, GRID), g.op("Concat", [b, g.ints([D, GRID, GRID])], axis=0)]), "vision_pos_enc")
    g.save(os.path.join(out, "sam3.1_memory_encoder.onnx"),
           [tensor("pix_feat", TensorProto.FLOAT, ["B", D, GRID, GRID]), tensor("masks", TensorProto.FLOAT, ["B", 2 * SLOTS, MEMORY_MASK, MEMORY_MASK])],
           [tensor("vision_features", TensorProto.FLOAT, ["B", D, GRID, GRID]), tensor("vision_pos_enc", TensorProto.FLOAT, ["B", D, GRID, GRID])],
           "memory_encoder")


def make_memory_attention(out, w):
    g = Graph()
    seq = lambda name: g.op("Transpose", [name], perm=[1, 0, 2])                                     # [T,1,256] -> [1,T,256]
    tgt = g.op("Add", [seq("curr_obj"), g.op("Mul", [seq("curr_obj_pos"), g.const(np.float32(0.1))])])
    image = seq("curr_img")
    mem_obj, mem_obj_pos = seq("memory_obj"), seq("memory_obj_pos")
    ti = g.op("Slice", [g.op("Shape", ["memory_img"]), g.ints([0]), g.ints([1])])
    t = g.op("Slice", [g.op("Shape", ["memory_obj"]), g.ints([0]), g.ints([1])])
    zeros = g.op("Mul", [g.op("Slice", [mem_obj, ti, t, g.ints([1])]), g.const(np.float32(0.0))])   # [1,T-Ti,256]
    mem_img = g.op("Concat", [seq("memory_img"), zeros], axis=1)                                     # pointer tokens: no image memory
    mem_img_pos = g.op("Concat", [seq("memory_img_pos"), g.op("Slice", [mem_obj_pos, ti, t, g.ints([1])])], axis=1)
    d = w.attn // w.heads
    tables = rope_tables(d, GRID)
    split = lambda x: g.heads_split(x, w.heads, d)

    def rope_spatial(k):   # RoPE on the spatial keys, not on the object pointers
        head = g.op("Slice", [k, g.ints([0]), ti, g.ints([2])])
        tail = g.op("Slice", [k, ti, t, g.ints([2])])
        return g.op("Concat", [g.rope(head, tables), tail], axis=2)

    for _ in range(w.memory_layers):
        h = g.layer_norm(tgt, D)
        tgt = g.op("Add", [tgt, g.attention(h, h, h, D, w.attn, w.heads, rope_q=lambda q: g.rope(q, tables), rope_k=lambda k: g.rope(k, tables))])
        h = g.layer_norm(tgt, D)
        q = split(g.op("Add", [g.linear(image, D, w.attn), g.linear(h, D, w.attn)]))
        k = split(g.op("Add", [g.op("Add", [g.linear(mem_img, D, w.attn), g.linear(mem_obj, D, w.attn)]), g.linear(mem_img_pos, D, w.attn)]))
        v = split(g.linear(mem_obj, D, w.attn))
        tgt = g.op("Add", [tgt, g.linear(g.sdpa(g.rope(q, tables), rope_spatial(k), v, w.heads, w.attn), w.attn, D)])
        tgt = g.op("Add", [tgt, g.mlp(g.layer_norm(tgt, D), [D, w.ffn, D], "Gelu")])
    g.name(g.op("Transpose", [g.layer_norm(tgt, D)], perm=[1, 0, 2]), "pix_feat_with_mem")
    hw = GRID * GRID
    s = lambda n: tensor(n, TensorProto.FLOAT, [hw, 1, D])
    g.save(os.path.join(out, "sam3.1_memory_attention.onnx"),
           [s("curr_obj"), s("curr_obj_pos"), s("curr_img"),
            tensor("memory_obj", TensorProto.FLOAT, ["T", 1, D]), tensor("memory_obj_pos", TensorProto.FLOAT, ["T", 1, D]),
            tensor("memory_img", TensorProto.FLOAT, ["Ti", 1, D]), tensor("memory_img_pos", TensorProto.FLOAT, ["Ti", 1, D])],
           [s("pix_feat_with_mem")], "memory_attention")


def make_projection(out, name, mlp):
    g = Graph()
    y = g.mlp("x", [D, D, D, D]) if mlp else g.linear("x", D, D)
    g.name(y, "y")
    g.save(os.path.join(out, f"sam3.1_{name}.onnx"), [tensor("x", TensorProto.FLOAT, ["N", D])], [tensor("y", TensorProto.FLOAT, ["N", D])],
           "projection")


def merge_and_save(out, behaviour_dir, filename):
    """One file of the bundle: the real-structure graph built above and the behaviour graph of
    make_video_models.py at 1008 pixels, side by side on the same inputs. Each output is the
    behaviour graph's plus 0 x tanh(mean) of the real graph's, so every layer of the real graph
    runs (ONNX Runtime folds no multiplication of a computed value by zero) and the tracker sees
    the generated scene's objects (coloured squares it can detect, track and remember) instead of
    noise: the costs are SAM 3.1's, the behaviour the tests' (docs/video.md)."""
    g, inputs, outputs, name = BUILT[filename]
    toy = onnx.load(os.path.join(behaviour_dir, filename))
    input_names = {i.name for i in inputs}
    declared = {i.name for i in toy.graph.input}
    if declared != input_names:
        raise SystemExit(f"{filename}: the behaviour graph's inputs {sorted(declared)} are not {sorted(input_names)}")
    real = lambda n: n if (not n or n in input_names) else "real/" + n
    nodes = []
    for node in g.nodes:
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        copy.input[:] = [real(n) for n in node.input]
        copy.output[:] = [real(n) for n in node.output]
        nodes.append(copy)
    inits = []
    for init in g.inits:
        init.name = real(init.name)
        inits.append(init)
    out_names = {o.name for o in outputs}
    toy_name = lambda n: "toy/" + n if n in out_names else n
    for node in toy.graph.node:
        node.input[:] = [toy_name(n) for n in node.input]
        node.output[:] = [toy_name(n) for n in node.output]
        nodes.append(node)
    zero = "merge/zero"
    inits.append(numpy_helper.from_array(np.float32(0.0), zero))
    toy_queries = {o.name: o.type.tensor_type.shape.dim[1].dim_value for o in toy.graph.output if len(o.type.tensor_type.shape.dim) > 1}
    for o in outputs:
        n = o.name
        nodes += [helper.make_node("ReduceMean", ["real/" + n], [f"merge/{n}/mean"], keepdims=0),
                  helper.make_node("Tanh", [f"merge/{n}/mean"], [f"merge/{n}/tanh"]),
                  helper.make_node("Mul", [f"merge/{n}/tanh", zero], [f"merge/{n}/zero"])]
        if n not in QUERY_FILL:
            nodes.append(helper.make_node("Add", ["toy/" + n, f"merge/{n}/zero"], [n]))
            continue
        # The behaviour detector has one query per palette colour (34); the real one has 200: the
        # other queries are the real graph's, their scores and masks pushed far below any
        # threshold, so that the host works through all 200 as on the real files.
        q = toy_queries[n]
        rest = [f"merge/{n}/rest", f"merge/{n}/lo", f"merge/{n}/hi", f"merge/{n}/axis", f"merge/{n}/fill"]
        inits += [numpy_helper.from_array(np.array([q], np.int64), rest[1]), numpy_helper.from_array(np.array([QUERIES], np.int64), rest[2]),
                  numpy_helper.from_array(np.array([1], np.int64), rest[3]), numpy_helper.from_array(np.float32(QUERY_FILL[n]), rest[4])]
        nodes += [helper.make_node("Slice", ["real/" + n, rest[1], rest[2], rest[3]], [rest[0]]),
                  helper.make_node("Add", ["toy/" + n, f"merge/{n}/zero"], [f"merge/{n}/toy"])]
        if n == "pred_boxes":
            nodes.append(helper.make_node("Concat", [f"merge/{n}/toy", rest[0]], [n], axis=1))
        else:
            nodes += [helper.make_node("Mul", [rest[0], zero], [f"merge/{n}/rest0"]),
                      helper.make_node("Add", [f"merge/{n}/rest0", rest[4]], [f"merge/{n}/restfill"]),
                      helper.make_node("Concat", [f"merge/{n}/toy", f"merge/{n}/restfill"], [n], axis=1)]
    graph = helper.make_graph(nodes, name, inputs, outputs, inits + list(toy.graph.initializer))
    model = helper.make_model(graph, opset_imports=list(toy.opset_import), producer_name="sam3cpp-sam31-bench")
    model.ir_version = 8
    path = os.path.join(out, filename)
    for t in model.graph.initializer:   # weights beside the graph, as large exports are stored
        if t.data_type in (TensorProto.FLOAT, TensorProto.UINT8) and t.ByteSize() > 1024:
            external_data_helper.set_external_data(t, filename + ".data")
    if os.path.exists(path + ".data"):
        os.remove(path + ".data")
    external_data_helper.write_external_data_tensors(model, out)
    onnx.save(model, path)
    size = os.path.getsize(path) + (os.path.getsize(path + ".data") if os.path.exists(path + ".data") else 0)
    print(f"wrote {path} ({size / 1e6:.0f} MB)")


def save_alone(out, filename):
    """One real-structure graph as it is built, without the behaviour graph."""
    g, inputs, outputs, name = BUILT.pop(filename)
    onnx_graph.Graph.save(g, os.path.join(out, filename), inputs, outputs, name, "sam3cpp-sam31-bench")
    print(f"wrote {os.path.join(out, filename)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true", help="reduced depths and inner widths, the same inputs and outputs")
    ap.add_argument("--memory-attention-alone", action="store_true",
                    help="only the memory attention's real graph, its output its own (for the fusion's equality test)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    w = QUICK if args.quick else Widths()
    if args.memory_attention_alone:
        if args.quick:
            w = dataclasses.replace(QUICK, attn=32, heads=2, memory_layers=2)
        make_memory_attention(args.out, w)
        save_alone(args.out, "sam3.1_memory_attention.onnx")
        return
    behaviour = os.path.join(args.out, ".behaviour")
    subprocess.run([sys.executable, os.path.join(HERE, "make_video_models.py"), "--size", str(IMAGE), "--out", behaviour], check=True)
    for name in ("bpe_simple_vocab_16e6.txt.gz",):
        shutil.copyfile(os.path.join(behaviour, name), os.path.join(args.out, name))
    shutil.rmtree(os.path.join(args.out, "npy"), ignore_errors=True)
    shutil.copytree(os.path.join(behaviour, "npy"), os.path.join(args.out, "npy"))   # the constants, shapes as ailia's
    make_image_encoder(args.out, w)
    make_grounding(args.out, w)
    make_prompt_encoder(args.out, w)
    make_mask_decoder(args.out, w)
    make_tracking_decoder(args.out, w)
    make_memory_encoder(args.out, w)
    make_memory_attention(args.out, w)
    make_projection(args.out, "obj_ptr_proj", True)
    make_projection(args.out, "interactive_obj_ptr_proj", True)
    make_projection(args.out, "obj_ptr_tpos_proj", False)
    for filename in list(BUILT):
        merge_and_save(args.out, behaviour, filename)
        del BUILT[filename]   # its weights freed before the next
    shutil.rmtree(behaviour)


if __name__ == "__main__":
    main()
