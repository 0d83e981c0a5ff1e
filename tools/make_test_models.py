#!/usr/bin/env python3
"""Generates small ONNX models with the exact input/output contract of the public SAM3 exports
(sam3-facts.md sections 1 and 6) and a behaviour the tests can predict:

  * the image encoder passes the normalized RGB planes through as feature channels 0..2;
  * the text encoder maps the first word to a row of a colour table
    (colour code in channels 0..2, presence logit in channel 3);
  * the decoder scores each pixel by how close its colour is to the word's colour,
    adds positive exemplar boxes (cx, cy, w, h normalized), removes negative ones, and splits
    the result into 4 queries, one per image quadrant, each with a box from its mask and a
    logit that grows with the share of the quadrant it covers.

Every network contains the dynamically quantized Linear pattern of the public int8 files
(DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul); the usls image encoder also carries an
attention block (multiplied by zero) for the attention fusion. Needs python3-onnx and numpy only.

  make_test_models.py --layout usls --out DIR [--size 224 | --height 504 --width 896] [--fp16 | --q4f16] [--v1]
  make_test_models.py --layout samexporter --out DIR [--size 252] [--int32] [--frozen-box-scale]
                     [--float-image] [--box-slots K]
  make_test_models.py --layout geti|efficientsam3|sam3.1-ailia --out DIR [--size 224]
  make_test_models.py --layout osam --out DIR [--size 252]   (wkentaro/sam3-onnx's newer decoder:
      no size inputs, normalized boxes, float probability masks at the model's resolution; every
      file's weights in a .onnx.data sidecar and no tokenizer file, as wkentaro/sam3-onnx-models)
"""
import argparse
import gzip
import json
import os
import shutil

import numpy as np
from onnx import TensorProto, helper

import onnx_graph
from onnx_graph import tensor
VOCAB_SIZE = 49408
FEATURES = 256
QUERIES = 4
# word -> (colour code in [-1, 1]^3 = RGB normalized as x/127.5-1, presence logit)
WORDS = {
    "red": ((1, -1, -1), 6.0),
    "green": ((-1, 1, -1), 6.0),
    "blue": ((-1, -1, 1), 6.0),
    "white": ((1, 1, 1), 6.0),
    "yellow": ((1, 1, -1), 6.0),
    "visual": ((0, 0, 0), 6.0),     # box-only prompts: every pixel neutral, boxes decide
    "purple": ((1, -1, 1), -6.0),   # colour present in tests, but presence says "absent"
    "car": ((0, 0, 0), 6.0),        # the video models' concept (make_video_models.py): present
    # sam3-bench-video's further prompts above 32 objects (each square found by several
    # concepts): present too, so that 64 objects are 2 x 32 started objects
    "truck": ((0, 0, 0), 6.0),
    "bus": ((0, 0, 0), 6.0),
    "van": ((0, 0, 0), 6.0),
    "bike": ((0, 0, 0), 6.0),
    "boat": ((0, 0, 0), 6.0),
    "train": ((0, 0, 0), 6.0),
    "plane": ((0, 0, 0), 6.0),
}

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB = os.path.join(HERE, "..", "data", "clip", "bpe_simple_vocab_16e6.txt.gz")


def word_ids():
    """Token id of each single-token word, computed as CLIP builds its vocabulary."""
    with gzip.open(VOCAB, "rt", encoding="utf-8") as f:
        merges = f.read().split("\n")[1:49152 - 256 - 2 + 1]
    ids = {}
    for rank, merge in enumerate(merges):
        token = merge.replace(" ", "")
        if token.endswith("</w>") and token[:-4] in WORDS:
            ids[token[:-4]] = 512 + rank
    missing = set(WORDS) - set(ids)
    assert not missing, f"not single tokens: {missing}"
    return ids


def colour_table():
    table = np.zeros((VOCAB_SIZE, 8), np.float32)
    for word, wid in word_ids().items():
        colour, presence = WORDS[word]
        table[wid, 0:3] = colour
        table[wid, 3] = presence
    return table


class Graph(onnx_graph.Graph):
    def quantized_linear(self, x, weight):
        """x[..., K] @ weight[K, N] with uint8 weights, as the public int8 files store them."""
        w_scale = float(np.abs(weight).max() / 127.0) or 1.0
        wq = np.clip(np.round(weight / w_scale) + 128, 0, 255).astype(np.uint8)
        return self.quantized_matmul(x, wq, w_scale)

    external_data = False

    def save(self, path, inputs, outputs, name):
        super().save(path, inputs, outputs, name, "sam3cpp-test-models", external_data=Graph.external_data)


def vision_features(g, image_nchw, height, width, levels=3, four_bit=False):
    """Normalized image [B,3,H,W] -> feature maps at strides 3.5, 7, 14 (and 28) and a position map.
    four_bit: the projection as a 4-bit MatMulNBits (q4f16 files) instead of the int8 pattern."""
    mh, mw = height * 2 // 7, width * 2 // 7
    # The quantized pattern applied as a 1x1 identity projection over the colour channels.
    nhwc = g.op("Transpose", [image_nchw], perm=[0, 2, 3, 1])
    eye = np.eye(3, dtype=np.float32)
    proj = g.matmul_4bit(nhwc, eye) if four_bit else g.quantized_linear(nhwc, eye)
    rgb = g.op("Transpose", [proj], perm=[0, 3, 1, 2])
    feats = []
    for k in range(levels):
        shape = g.op("Shape", [rgb])
        sizes = g.op("Concat", [g.op("Slice", [shape, g.const([0], np.int64), g.const([2], np.int64)]),
                                g.const([mh >> k, mw >> k], np.int64)], axis=0)
        small = g.op("Resize", [rgb, "", "", sizes], mode="linear",
                     coordinate_transformation_mode="half_pixel")
        feats.append(g.op("Pad", [small, g.const([0, 0, 0, 0, 0, FEATURES - 3, 0, 0], np.int64)]))
    pos = g.op("Mul", [feats[2], g.const(np.float32(0.0))])
    return feats, pos


def attention_probe(g, feat):
    """Zero times a self-attention over the tokens of feat [B, 256, s, s] (4 heads, written out
    as PyTorch exports it): exactly 0, but the graph carries the pattern the attention fusion
    rewrites, so the tests load a fused graph."""
    tokens = g.op("Transpose", [g.op("Reshape", [feat, g.const([0, FEATURES, -1], np.int64)])], perm=[0, 2, 1])
    heads = g.op("Transpose", [g.op("Reshape", [tokens, g.const([0, 0, 4, FEATURES // 4], np.int64)])], perm=[0, 2, 1, 3])
    scores = g.op("MatMul", [heads, g.op("Transpose", [heads], perm=[0, 1, 3, 2])])
    probs = g.op("Softmax", [g.op("Mul", [scores, g.const(np.float32(1 / 8))])], axis=-1)
    out = g.op("MatMul", [probs, heads])
    return g.op("Mul", [g.op("ReduceMean", [out], keepdims=0), g.const(np.float32(0.0))])


def text_rows(g, tokens):
    """tokens [B,32] -> quantized-projected table rows [B,32,256]."""
    rows = g.op("Gather", [g.const(colour_table()), tokens], axis=0)
    weight = np.zeros((8, FEATURES), np.float32)
    weight[np.arange(8), np.arange(8)] = 1.0
    return g.quantized_linear(rows, weight)


def decode_queries(g, feat0, first_word, boxes, labels, mh, mw):
    """Returns mask logits [B,Q,mh,mw], query logits [B,Q], normalized xyxy boxes [B,Q,4],
    presence logits [B,1]. first_word: [B,256]; boxes [B,N,4] cx,cy,w,h; labels [B,N]."""
    colour = g.op("Slice", [first_word, g.const([0], np.int64), g.const([3], np.int64), g.const([1], np.int64)])
    presence = g.op("Slice", [first_word, g.const([3], np.int64), g.const([4], np.int64), g.const([1], np.int64)])
    rgb = g.op("Slice", [feat0, g.const([0], np.int64), g.const([3], np.int64), g.const([1], np.int64)])
    colour4 = g.op("Unsqueeze", [colour, g.const([2, 3], np.int64)])
    dot = g.op("ReduceSum", [g.op("Mul", [rgb, colour4]), g.const([1], np.int64)], keepdims=0)
    text_term = g.op("Sub", [dot, g.const(np.float32(2.0))])  # [B,mh,mw]

    xs = g.const(((np.arange(mw, dtype=np.float32) + 0.5) / mw).reshape(1, 1, 1, mw))
    ys = g.const(((np.arange(mh, dtype=np.float32) + 0.5) / mh).reshape(1, 1, mh, 1))

    def coord(k):
        c = g.op("Slice", [boxes, g.const([k], np.int64), g.const([k + 1], np.int64), g.const([2], np.int64)])
        return g.op("Unsqueeze", [c, g.const([3], np.int64)])  # [B,N,1,1]

    cx, cy, w, h = coord(0), coord(1), coord(2), coord(3)
    half = g.const(np.float32(0.5))
    in_x = g.op("LessOrEqual", [g.op("Abs", [g.op("Sub", [xs, cx])]), g.op("Mul", [w, half])])
    in_y = g.op("LessOrEqual", [g.op("Abs", [g.op("Sub", [ys, cy])]), g.op("Mul", [h, half])])
    inside = g.op("Cast", [g.op("And", [in_x, in_y])], to=TensorProto.FLOAT)  # [B,N,mh,mw]

    def region(label):
        sel = g.op("Cast", [g.op("Equal", [labels, g.const(np.int64(label), np.int64)])], to=TensorProto.FLOAT)
        sel4 = g.op("Unsqueeze", [sel, g.const([2, 3], np.int64)])
        return g.op("ReduceMax", [g.op("Mul", [inside, sel4])], axes=[1], keepdims=0)

    logits = g.op("Add", [text_term, g.op("Mul", [region(1), g.const(np.float32(4.0))])])
    logits = g.op("Sub", [logits, g.op("Mul", [region(0), g.const(np.float32(8.0))])])

    quad = np.zeros((1, QUERIES, mh, mw), np.float32)
    hh, hw = mh // 2, mw // 2
    quad[0, 0, :hh, :hw] = 1
    quad[0, 1, :hh, hw:] = 1
    quad[0, 2, hh:, :hw] = 1
    quad[0, 3, hh:, hw:] = 1
    quad_c = g.const(quad)
    per_query = g.op("Mul", [g.op("Unsqueeze", [logits, g.const([1], np.int64)]), quad_c])
    mask_logits = g.op("Add", [per_query, g.op("Mul", [g.op("Sub", [quad_c, g.const(np.float32(1.0))]),
                                                       g.const(np.float32(10.0))])])
    binary = g.op("Cast", [g.op("Greater", [mask_logits, g.const(np.float32(0.0))])], to=TensorProto.FLOAT)
    coverage = g.op("Mul", [g.op("ReduceMean", [binary], axes=[2, 3], keepdims=0), g.const(np.float32(QUERIES))])
    query_logits = g.op("Sub", [g.op("Mul", [coverage, g.const(np.float32(50.0))]), g.const(np.float32(1.0))])

    zero = g.const(np.float32(0.0))

    def extent(axis, n):
        idx = g.const(np.arange(n, dtype=np.float32))
        idx1 = g.const(np.arange(1, n + 1, dtype=np.float32))
        big = g.const(np.float32(n))
        any_ = g.op("Greater", [g.op("ReduceMax", [binary], axes=[axis], keepdims=0), zero])  # [B,Q,n]
        lo = g.op("ReduceMin", [g.op("Where", [any_, idx, big])], axes=[2], keepdims=1)
        hi = g.op("ReduceMax", [g.op("Where", [any_, idx1, zero])], axes=[2], keepdims=1)
        return g.op("Div", [lo, big]), g.op("Div", [hi, big])

    x0, x1 = extent(2, mw)  # reduce rows -> per column
    y0, y1 = extent(3, mh)
    boxes_xyxy = g.op("Concat", [x0, y0, x1, y1], axis=2)
    return mask_logits, query_logits, boxes_xyxy, presence


def first_content_token(g, features):
    """[B,32,256] -> row of position 1 (the first word) [B,256]."""
    return g.op("Gather", [features, g.const(np.int64(1), np.int64)], axis=1)


class Edges:
    """Float tensors at a graph's edges: float32, or float16 (usls's fp16 release files) with
    Casts inside so the body stays float32."""

    def __init__(self, g, half):
        self.g, self.half = g, half
        self.type = TensorProto.FLOAT16 if half else TensorProto.FLOAT

    def input(self, name):
        return self.g.op("Cast", [name], to=TensorProto.FLOAT) if self.half else name

    def output(self, value, name):
        self.g.name(self.g.op("Cast", [value], to=TensorProto.FLOAT16) if self.half else value, name)


def slow_zero(g, image, steps):
    """Exactly 0, after `steps` MatMuls of [1024, 1024] by the identity on a tensor made from the
    image (ONNX Runtime cannot fold it away): tens of milliseconds a node, so an encode takes
    about a minute and a run that is stopped ends between two of them (the stop tests)."""
    mean = g.op("ReduceMean", [image], keepdims=1)
    x = g.op("Mul", [mean, g.const(np.ones((1024, 1024), np.float32))])
    # The identity made at run time: a constant weight would be prepacked by every node at load
    # (3000 copies of 4 MB); one computed from the input is packed by none.
    one = g.op("Add", [g.op("Mul", [mean, g.const(np.float32(0.0))]), g.const(np.float32(1.0))])
    eye = g.op("Mul", [g.const(np.eye(1024, dtype=np.float32)), one])
    for _ in range(steps):
        x = g.op("MatMul", [x, eye])
    return g.op("Mul", [g.op("ReduceMean", [x], keepdims=0), g.const(np.float32(0.0))])


def make_usls(out, height, width, inconsistent=False, half=False, v1=False, q4f16=False, slow_steps=0):
    """slow_steps: that many heavy nodes in the vision encoder (see slow_zero).
    half: float16 at every edge, release file names (-fp16, geo-encoder-mask-decoder).
    q4f16: the same with -q4f16 names and a 4-bit MatMulNBits in the vision encoder.
    v1: the first generation, with geometry-encoder.onnx and a decoder taking prompt_features."""
    mh, mw = height * 2 // 7, width * 2 // 7
    half = half or q4f16
    suffix = "-q4f16" if q4f16 else "-fp16" if half else ""
    levels = 4 if v1 else 3
    g = Graph()
    e = Edges(g, half)
    feats, pos = vision_features(g, e.input("images"), height, width, levels, four_bit=q4f16)
    for k, f in enumerate(feats):
        e.output(f, f"fpn_feat_{k}")
    pos = g.op("Add", [pos, attention_probe(g, feats[2])])
    if slow_steps:
        pos = g.op("Add", [pos, slow_zero(g, e.input("images"), slow_steps)])
    e.output(pos, "fpn_pos_2")
    extra_pos = [k for k in range(levels) if k != 2] if v1 else []
    for k in extra_pos:
        e.output(g.op("Mul", [feats[k], g.const(np.float32(0.0))]), f"fpn_pos_{k}")
    g.save(os.path.join(out, f"vision-encoder{suffix}.onnx"), [tensor("images", e.type, ["B", 3, height, width])],
           [tensor(f"fpn_feat_{k}", e.type, ["B", FEATURES, mh >> k, mw >> k]) for k in range(levels)]
           + [tensor(f"fpn_pos_{k}", e.type, ["B", FEATURES, mh >> k, mw >> k]) for k in sorted(extra_pos + [2])],
           "vision_encoder")

    g = Graph()
    e = Edges(g, half)
    e.output(text_rows(g, "input_ids"), "text_features")
    g.op("Cast", ["attention_mask"], to=TensorProto.BOOL)
    g.name(g.nodes[-1].output[0], "text_mask")
    g.save(os.path.join(out, f"text-encoder{suffix}.onnx"),
           [tensor("input_ids", TensorProto.INT64, ["B", 32]), tensor("attention_mask", TensorProto.INT64, ["B", 32])],
           [tensor("text_features", e.type, ["B", 32, FEATURES]), tensor("text_mask", TensorProto.BOOL, ["B", 32])],
           "text_encoder")

    if v1:
        make_usls_geometry_encoder(out, mh, mw)

    g = Graph()
    e = Edges(g, half)
    # Consume every input as the real decoder does (the values of these do not matter here).
    feat0 = g.op("Add", [e.input("fpn_feat_0"), g.op("ReduceMean", [e.input("fpn_pos_2")], keepdims=1)])
    if v1:  # one prompt sequence: 32 text tokens, then the geometry encoder's rows
        word, box_in, label_in = read_prompt_sequence(g, e.input("prompt_features"), "prompt_mask")
    else:
        word = first_content_token(g, g.op("Where", [g.op("Unsqueeze", ["text_mask", g.const([2], np.int64)]),
                                                     e.input("text_features"), g.const(np.float32(0.0))]))
        box_in, label_in = e.input("input_boxes"), "input_boxes_labels"
    masks, logits, boxes, presence = decode_queries(g, feat0, word, box_in, label_in, mh, mw)
    aux = g.op("Mul", [g.op("Add", [g.op("ReduceMean", [e.input("fpn_feat_1")], keepdims=0),
                                    g.op("ReduceMean", [e.input("fpn_feat_2")], keepdims=0)]), g.const(np.float32(0.0))])
    e.output(g.op("Add", [masks, aux]), "pred_masks")
    e.output(boxes, "pred_boxes")
    if inconsistent:  # right names and types, but one score for many masks
        logits = g.op("Slice", [logits, g.const([0], np.int64), g.const([1], np.int64), g.const([1], np.int64)])
    e.output(logits, "pred_logits")
    e.output(presence, "presence_logits")
    prompt_inputs = ([tensor("prompt_features", e.type, ["B", "L", FEATURES]), tensor("prompt_mask", TensorProto.BOOL, ["B", "L"])]
                     if v1 else
                     [tensor("text_features", e.type, ["B", 32, FEATURES]), tensor("text_mask", TensorProto.BOOL, ["B", 32]),
                      tensor("input_boxes", e.type, ["B", "N", 4]), tensor("input_boxes_labels", TensorProto.INT64, ["B", "N"])])
    g.save(os.path.join(out, f"geo-encoder-mask-decoder{suffix}.onnx" if half else "decoder.onnx"),
           [tensor(f"fpn_feat_{k}", e.type, ["B", FEATURES, mh >> k, mw >> k]) for k in range(3)]
           + [tensor("fpn_pos_2", e.type, ["B", FEATURES, mh >> 2, mw >> 2])] + prompt_inputs,
           [tensor("pred_masks", e.type, ["B", QUERIES, mh, mw]),
            tensor("pred_boxes", e.type, ["B", QUERIES, 4]),
            tensor("pred_logits", e.type, ["B", "Q" if inconsistent else QUERIES]),
            tensor("presence_logits", e.type, ["B", 1])], "decoder")
    encoder, merges, _ = clip_vocabulary()
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:  # Hugging Face format
        json.dump({"model": {"type": "BPE", "vocab": encoder, "merges": merges}}, f, ensure_ascii=False)


def read_prompt_sequence(g, prompt, prompt_mask):
    """A decoder's view of one prompt sequence (32 text tokens, then geometry rows carrying a
    box's coordinates in channels 0..3 and its label in channel 4): the first content word, and
    the rows as boxes and labels (rows labelled -10 are padding)."""
    word = first_content_token(g, g.op("Where", [g.op("Unsqueeze", [prompt_mask, g.const([2], np.int64)]),
                                                 prompt, g.const(np.float32(0.0))]))
    geo = g.op("Slice", [prompt, g.const([32], np.int64), g.const([1 << 30], np.int64), g.const([1], np.int64)])
    rows = g.op("Concat", [g.const(padding_row()), geo], axis=1)
    box_in = g.op("Slice", [rows, g.const([0], np.int64), g.const([4], np.int64), g.const([2], np.int64)])
    label_f = g.op("Squeeze", [g.op("Slice", [rows, g.const([4], np.int64), g.const([5], np.int64), g.const([2], np.int64)]),
                               g.const([2], np.int64)])
    return word, box_in, g.op("Cast", [label_f], to=TensorProto.INT64)


def make_geti(out, size, efficient=False):
    """Intel geti-instant-learn's five files in the hub's layout (graphs under onnx/, the
    tokenizer at the root): usls's tensors, the image as pixel_values, a geometry encoder that
    takes boxes and points (rows: boxes, points, then a CLS row) and runs for every prompt, and
    a prompt-decoder on the joined sequence.
    efficient: EfficientSAM3 as Intel exports it: the prompt-decoder also takes text_features and
    text_mask (the word is read from them), its presence_logits is a constant 0 (no presence
    head: the word's presence is folded into each query's logit, so the scores equal the other
    families'), and the tokenizer sits beside the graphs in onnx/."""
    mh = mw = size * 2 // 7
    graphs = os.path.join(out, "onnx")
    os.makedirs(graphs, exist_ok=True)
    g = Graph()
    feats, pos = vision_features(g, "pixel_values", size, size, 3)
    for k, f in enumerate(feats):
        g.name(f, f"fpn_feat_{k}")
    g.name(g.op("Add", [pos, attention_probe(g, feats[2])]), "fpn_pos_2")
    g.save(os.path.join(graphs, "vision-encoder.onnx"), [tensor("pixel_values", TensorProto.FLOAT, ["B", 3, size, size])],
           [tensor(f"fpn_feat_{k}", TensorProto.FLOAT, ["B", FEATURES, mh >> k, mw >> k]) for k in range(3)]
           + [tensor("fpn_pos_2", TensorProto.FLOAT, ["B", FEATURES, mh >> 2, mw >> 2])], "vision_encoder")

    g = Graph()
    g.name(text_rows(g, "input_ids"), "text_features")
    g.op("Cast", ["attention_mask"], to=TensorProto.BOOL)
    g.name(g.nodes[-1].output[0], "text_mask")
    g.save(os.path.join(graphs, "text-encoder.onnx"),
           [tensor("input_ids", TensorProto.INT64, ["B", 32]), tensor("attention_mask", TensorProto.INT64, ["B", 32])],
           [tensor("text_features", TensorProto.FLOAT, ["B", 32, FEATURES]), tensor("text_mask", TensorProto.BOOL, ["B", 32])],
           "text_encoder")

    g = Graph()
    def rows_of(coords, labels):
        label = g.op("Unsqueeze", [g.op("Cast", [labels], to=TensorProto.FLOAT), g.const([2], np.int64)])
        return g.op("Pad", [g.op("Concat", [coords, label], axis=2), g.const([0, 0, 0, 0, 0, FEATURES - 5], np.int64)])
    points4 = g.op("Pad", ["input_points", g.const([0, 0, 0, 0, 0, 2], np.int64)])  # x, y, 0, 0
    consumed = g.op("Mul", [g.op("Add", [g.op("ReduceMean", ["fpn_feat_2"], keepdims=0),
                                         g.op("ReduceMean", ["fpn_pos_2"], keepdims=0)]), g.const(np.float32(0.0))])
    features = g.op("Add", [g.op("Concat", [rows_of("input_boxes", "input_boxes_labels"),
                                            rows_of(points4, "input_points_labels"), g.const(padding_row())], axis=1),
                            consumed])
    g.name(features, "geometry_features")
    channel0 = g.op("Slice", [features, g.const([0], np.int64), g.const([1], np.int64), g.const([2], np.int64)])
    g.name(g.op("Squeeze", [g.op("Greater", [channel0, g.const(np.float32(-1e9))]), g.const([2], np.int64)]), "geometry_mask")
    g.save(os.path.join(graphs, "geometry-encoder.onnx"),
           [tensor("fpn_feat_2", TensorProto.FLOAT, [1, FEATURES, mh >> 2, mw >> 2]),
            tensor("fpn_pos_2", TensorProto.FLOAT, [1, FEATURES, mh >> 2, mw >> 2]),
            tensor("input_boxes", TensorProto.FLOAT, ["B", "N", 4]), tensor("input_boxes_labels", TensorProto.INT64, ["B", "N"]),
            tensor("input_points", TensorProto.FLOAT, ["B", "M", 2]), tensor("input_points_labels", TensorProto.INT64, ["B", "M"])],
           [tensor("geometry_features", TensorProto.FLOAT, ["B", "T", FEATURES]),
            tensor("geometry_mask", TensorProto.BOOL, ["B", "T"])], "geometry_encoder")

    g = Graph()
    feat0 = g.op("Add", ["fpn_feat_0", g.op("ReduceMean", ["fpn_pos_2"], keepdims=1)])
    word, box_in, label_in = read_prompt_sequence(g, "prompt_features", "prompt_mask")
    if efficient:  # the word from the text features alone
        word = first_content_token(g, g.op("Where", [g.op("Unsqueeze", ["text_mask", g.const([2], np.int64)]),
                                                     "text_features", g.const(np.float32(0.0))]))
    masks, logits, boxes, presence = decode_queries(g, feat0, word, box_in, label_in, mh, mw)
    if efficient:
        # logit(sigmoid(q) * sigmoid(presence)) per query, and a constant presence of 0.
        s = g.op("Mul", [g.op("Sigmoid", [logits]), g.op("Sigmoid", [presence])])
        logits = g.op("Sub", [g.op("Log", [s]), g.op("Log", [g.op("Sub", [g.const(np.float32(1.0)), s])])])
        presence = g.op("Mul", [presence, g.const(np.float32(0.0))])
    aux = g.op("Mul", [g.op("Add", [g.op("ReduceMean", ["fpn_feat_1"], keepdims=0),
                                    g.op("ReduceMean", ["fpn_feat_2"], keepdims=0)]), g.const(np.float32(0.0))])
    g.name(g.op("Add", [masks, aux]), "pred_masks")
    g.name(boxes, "pred_boxes")
    g.name(logits, "pred_logits")
    g.name(presence, "presence_logits")
    text_inputs = ([tensor("text_features", TensorProto.FLOAT, ["B", 32, FEATURES]), tensor("text_mask", TensorProto.BOOL, ["B", 32])]
                   if efficient else [])
    g.save(os.path.join(graphs, "prompt-decoder.onnx"),
           [tensor(f"fpn_feat_{k}", TensorProto.FLOAT, [1, FEATURES, mh >> k, mw >> k]) for k in range(3)]
           + [tensor("fpn_pos_2", TensorProto.FLOAT, [1, FEATURES, mh >> 2, mw >> 2]),
              tensor("prompt_features", TensorProto.FLOAT, ["B", "L", FEATURES]), tensor("prompt_mask", TensorProto.BOOL, ["B", "L"])]
           + text_inputs,
           [tensor("pred_masks", TensorProto.FLOAT, ["B", QUERIES, mh, mw]), tensor("pred_boxes", TensorProto.FLOAT, ["B", QUERIES, 4]),
            tensor("pred_logits", TensorProto.FLOAT, ["B", QUERIES]), tensor("presence_logits", TensorProto.FLOAT, ["B", 1])],
           "prompt_decoder")
    encoder, merges, _ = clip_vocabulary()
    # geti: at the root, above onnx/; EfficientSAM3: beside the graphs.
    with open(os.path.join(graphs if efficient else out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump({"model": {"type": "BPE", "vocab": encoder, "merges": merges}}, f, ensure_ascii=False)


def make_sam31_ailia(out, size):
    """SAM 3.1 as ailia-models publishes it: sam3.1_image_encoder.onnx (image -> the detector's
    fpn0..2, pos0..2 and the tracker's prop_fpn0..2, prop_pos2) and sam3.1_grounding.onnx (the
    text encoder inside: text_tokens; boxes sequence-first, possibly none; pred_boxes cx,cy,w,h;
    pred_logits [1,Q,1]; presence_logit_dec), with the CLIP vocabulary file beside them."""
    mh = mw = size * 2 // 7
    g = Graph()
    feats, pos = vision_features(g, "image", size, size, 3)
    for k, f in enumerate(feats):
        g.name(f, f"fpn{k}")
        if k != 2:
            g.name(g.op("Mul", [f, g.const(np.float32(0.0))]), f"pos{k}")
        g.name(g.op("Mul", [f, g.const(np.float32(0.5))]), f"prop_fpn{k}")
    g.name(g.op("Add", [pos, attention_probe(g, feats[2])]), "pos2")
    g.name(g.op("Mul", [pos, g.const(np.float32(2.0))]), "prop_pos2")
    level = lambda k: [1, FEATURES, mh >> k, mw >> k]
    g.save(os.path.join(out, "sam3.1_image_encoder.onnx"), [tensor("image", TensorProto.FLOAT, [1, 3, size, size])],
           [tensor(f"fpn{k}", TensorProto.FLOAT, level(k)) for k in range(3)]
           + [tensor(f"pos{k}", TensorProto.FLOAT, level(k)) for k in range(3)]
           + [tensor(f"prop_fpn{k}", TensorProto.FLOAT, level(k)) for k in range(3)]
           + [tensor("prop_pos2", TensorProto.FLOAT, level(2))], "image_encoder")

    g = Graph()
    feat0 = g.op("Add", ["fpn0", g.op("ReduceMean", ["pos2"], keepdims=1)])
    word = first_content_token(g, text_rows(g, "text_tokens"))
    boxes = g.op("Transpose", ["box_coords"], perm=[1, 0, 2])                 # [1,N,4]
    labels = g.op("Transpose", ["box_labels"], perm=[1, 0])                   # [1,N]
    labels = g.op("Where", ["box_mask", g.const(np.array([[-10]], np.int64), np.int64), labels])
    # A padding row first, so that a prompt without boxes (N = 0) reduces over one row.
    boxes = g.op("Concat", [g.const(np.zeros((1, 1, 4), np.float32)), boxes], axis=1)
    labels = g.op("Concat", [g.const(np.array([[-10]], np.int64), np.int64), labels], axis=1)
    masks, logits, xyxy, presence = decode_queries(g, feat0, word, boxes, labels, mh, mw)
    to_cxcywh = np.array([[0.5, 0, -1, 0], [0, 0.5, 0, -1], [0.5, 0, 1, 0], [0, 0.5, 0, 1]], np.float32)
    aux = g.op("Mul", [g.op("Add", [g.op("ReduceMean", ["fpn1"], keepdims=0),
                                    g.op("ReduceMean", ["fpn2"], keepdims=0)]), g.const(np.float32(0.0))])
    g.name(g.op("Add", [masks, aux]), "pred_masks")
    g.name(g.op("MatMul", [xyxy, g.const(to_cxcywh)]), "pred_boxes")
    g.name(g.op("Unsqueeze", [logits, g.const([2], np.int64)]), "pred_logits")
    g.name(presence, "presence_logit_dec")
    g.save(os.path.join(out, "sam3.1_grounding.onnx"),
           [tensor(f"fpn{k}", TensorProto.FLOAT, level(k)) for k in range(3)]
           + [tensor("pos2", TensorProto.FLOAT, level(2)), tensor("text_tokens", TensorProto.INT64, [1, 32]),
              tensor("box_coords", TensorProto.FLOAT, ["N", 1, 4]), tensor("box_labels", TensorProto.INT64, ["N", 1]),
              tensor("box_mask", TensorProto.BOOL, [1, "N"])],
           [tensor("pred_masks", TensorProto.FLOAT, [1, QUERIES, mh, mw]), tensor("pred_boxes", TensorProto.FLOAT, [1, QUERIES, 4]),
            tensor("pred_logits", TensorProto.FLOAT, [1, QUERIES, 1]), tensor("presence_logit_dec", TensorProto.FLOAT, [1, 1])],
           "grounding")
    shutil.copyfile(VOCAB, os.path.join(out, "bpe_simple_vocab_16e6.txt.gz"))


def padding_row():
    """A geometry row that is no box: coordinates 0, label (channel 4) -10."""
    row = np.zeros((1, 1, FEATURES), np.float32)
    row[0, 0, 4] = -10
    return row


def make_usls_geometry_encoder(out, mh, mw):
    """usls v1's geometry-encoder.onnx: boxes [B,N,4] cx,cy,w,h and labels [B,N] (plus the
    stride-14 features) -> geometry_features [B,N+1,256] (a leading row, then one row per box
    carrying its coordinates in channels 0..3 and its label in channel 4) and geometry_mask."""
    g = Graph()
    labels = g.op("Unsqueeze", [g.op("Cast", ["input_boxes_labels"], to=TensorProto.FLOAT), g.const([2], np.int64)])
    rows = g.op("Pad", [g.op("Concat", ["input_boxes", labels], axis=2), g.const([0, 0, 0, 0, 0, FEATURES - 5], np.int64)])
    consumed = g.op("Mul", [g.op("Add", [g.op("ReduceMean", ["fpn_feat"], keepdims=0),
                                         g.op("ReduceMean", ["fpn_pos"], keepdims=0)]), g.const(np.float32(0.0))])
    features = g.op("Add", [g.op("Concat", [g.const(padding_row()), rows], axis=1), consumed])
    g.name(features, "geometry_features")
    channel0 = g.op("Slice", [features, g.const([0], np.int64), g.const([1], np.int64), g.const([2], np.int64)])
    g.name(g.op("Squeeze", [g.op("Greater", [channel0, g.const(np.float32(-1e9))]), g.const([2], np.int64)]), "geometry_mask")
    g.save(os.path.join(out, "geometry-encoder.onnx"),
           [tensor("input_boxes", TensorProto.FLOAT, ["B", "N", 4]), tensor("input_boxes_labels", TensorProto.INT64, ["B", "N"]),
            tensor("fpn_feat", TensorProto.FLOAT, ["B", FEATURES, mh >> 2, mw >> 2]),
            tensor("fpn_pos", TensorProto.FLOAT, ["B", FEATURES, mh >> 2, mw >> 2])],
           [tensor("geometry_features", TensorProto.FLOAT, ["B", "M", FEATURES]),
            tensor("geometry_mask", TensorProto.BOOL, ["B", "M"])], "geometry_encoder")


def make_samexporter(out, size, int32, frozen_box_scale, osam=False, float_image=False, box_slots=1):
    """float_image: the encoder takes float [1,3,S,S] normalized by the caller. box_slots > 1:
    SAM3's sequence-first box inputs (box_coords [K,1,4], box_labels [K,1], box_masks [1,K])."""
    m = size * 2 // 7
    int_type = TensorProto.INT32 if int32 else TensorProto.INT64
    g = Graph()
    if float_image:
        img = "image"
    else:
        img = g.op("Unsqueeze", [g.op("Sub", [g.op("Div", [g.op("Cast", ["image"], to=TensorProto.FLOAT),
                                                         g.const(np.float32(127.5))]), g.const(np.float32(1.0))]),
                                g.const([0], np.int64)])
    feats, pos = vision_features(g, img, size, size)
    for k, f in enumerate(feats):
        g.name(f, f"backbone_fpn_{k}")
        g.name(g.op("Mul", [f, g.const(np.float32(0.0))]) if k < 2 else pos, f"vision_pos_enc_{k}")
    image_input = (tensor("image", TensorProto.FLOAT, [1, 3, size, size]) if float_image
                   else tensor("image", TensorProto.UINT8, [3, size, size]))
    g.save(os.path.join(out, "sam3_image_encoder.onnx"), [image_input],
           [tensor(f"backbone_fpn_{k}", TensorProto.FLOAT, [1, FEATURES, m >> k, m >> k]) for k in range(3)]
           + [tensor(f"vision_pos_enc_{k}", TensorProto.FLOAT, [1, FEATURES, m >> k, m >> k]) for k in range(3)],
           "image_encoder")

    g = Graph()
    tokens = g.op("Cast", ["tokens"], to=TensorProto.INT64)
    rows = text_rows(g, tokens)                                            # [1,32,256]
    g.name(g.op("Transpose", [rows], perm=[1, 0, 2]), "text_memory")       # [32,1,256]
    g.name(g.op("Pad", [g.nodes[-1].input[0], g.const([0, 0, 0, 0, 0, 1024 - FEATURES], np.int64)]), "text_embeds")
    g.name(g.op("Equal", [tokens, g.const(np.int64(0), np.int64)]), "text_attention_mask")
    g.save(os.path.join(out, "sam3_language_encoder.onnx"), [tensor("tokens", int_type, [1, 32])],
           [tensor("text_attention_mask", TensorProto.BOOL, [1, 32]),
            tensor("text_memory", TensorProto.FLOAT, [32, 1, FEATURES]),
            tensor("text_embeds", TensorProto.FLOAT, [32, 1, 1024])], "language_encoder")

    g = Graph()
    feat0 = g.op("Add", ["backbone_fpn_0", g.op("ReduceMean", ["vision_pos_enc_2"], keepdims=1)])
    valid = g.op("Not", [g.op("Transpose", ["language_mask"], perm=[1, 0])])  # [32,1]
    memory = g.op("Where", [g.op("Unsqueeze", [valid, g.const([2], np.int64)]), "language_features",
                            g.const(np.float32(0.0))])
    word = g.op("Gather", [memory, g.const(np.int64(1), np.int64)], axis=0)   # [1,256]
    coords, box_labels = "box_coords", "box_labels"
    if box_slots > 1:  # sequence first: [K,1,4] and [K,1] -> [1,K,4] and [1,K]
        coords = g.op("Transpose", [coords], perm=[1, 0, 2])
        box_labels = g.op("Transpose", [box_labels], perm=[1, 0])
    labels = g.op("Where", ["box_masks", g.const(np.int64(-10), np.int64), g.op("Cast", [box_labels], to=TensorProto.INT64)])
    masks, logits, boxes, presence = decode_queries(g, feat0, word, coords, labels, m, m)
    aux = g.op("Mul", [g.op("Add", [g.op("ReduceMean", ["backbone_fpn_1"], keepdims=0),
                                    g.op("ReduceMean", ["backbone_fpn_2"], keepdims=0)]), g.const(np.float32(0.0))])
    masks = g.op("Add", [masks, aux])
    scores = g.op("Mul", [g.op("Sigmoid", [logits]), g.op("Sigmoid", [presence])])      # [1,Q]
    scores = g.op("Squeeze", [scores, g.const([0], np.int64)])                          # [Q]
    keep = g.op("Greater", [scores, g.const(np.float32(0.5))])
    if osam:
        save_osam_decoder(g, out, m, masks, boxes, scores, keep, box_slots)
        return
    height = g.op("Reshape", [g.op("Cast", ["original_height"], to=TensorProto.INT64), g.const([1], np.int64)])
    width = g.op("Reshape", [g.op("Cast", ["original_width"], to=TensorProto.INT64), g.const([1], np.int64)])
    sizes = g.op("Concat", [g.const([QUERIES, 1], np.int64), height, width], axis=0)
    masks4 = g.op("Reshape", [masks, g.const([QUERIES, 1, m, m], np.int64)])
    full = g.op("Resize", [masks4, "", "", sizes], mode="linear", coordinate_transformation_mode="half_pixel")
    full_bool = g.op("Greater", [full, g.const(np.float32(0.0))])
    if frozen_box_scale:  # the traced graph kept the export-time image size
        scale = g.const(np.array([1008, 1008, 1008, 1008], np.float32))
    else:
        hw = g.op("Cast", [g.op("Concat", [width, height, width, height], axis=0)], to=TensorProto.FLOAT)
        scale = hw
    pixel_boxes = g.op("Mul", [g.op("Squeeze", [boxes, g.const([0], np.int64)]), scale])
    g.name(g.op("Compress", [pixel_boxes, keep], axis=0), "boxes")
    g.name(g.op("Compress", [scores, keep], axis=0), "scores")
    g.name(g.op("Compress", [full_bool, keep], axis=0), "masks")
    scalar = []
    g.save(os.path.join(out, "sam3_decoder.onnx"),
           [tensor("original_height", int_type, scalar), tensor("original_width", int_type, scalar)]
           + decoder_inputs(m, box_slots),
           [tensor("boxes", TensorProto.FLOAT, ["N", 4]), tensor("scores", TensorProto.FLOAT, ["N"]),
            tensor("masks", TensorProto.BOOL, ["N", 1, "H", "W"])], "decoder")
    write_clip_tokenizer_json(os.path.join(out, "clip_tokenizer.json"))


def decoder_inputs(m, box_slots):
    """The samexporter/osam decoder's feature, language and box inputs."""
    return ([tensor("vision_pos_enc_2", TensorProto.FLOAT, [1, FEATURES, m >> 2, m >> 2])]
            + [tensor(f"backbone_fpn_{k}", TensorProto.FLOAT, [1, FEATURES, m >> k, m >> k]) for k in range(3)]
            + [tensor("language_mask", TensorProto.BOOL, [1, 32]),
               tensor("language_features", TensorProto.FLOAT, [32, 1, FEATURES]),
               tensor("box_coords", TensorProto.FLOAT, [box_slots, 1, 4] if box_slots > 1 else [1, 1, 4]),
               tensor("box_labels", TensorProto.INT64, [box_slots, 1] if box_slots > 1 else [1, 1]),
               tensor("box_masks", TensorProto.BOOL, [1, box_slots])])


def save_osam_decoder(g, out, m, masks, boxes, scores, keep, box_slots):
    """wkentaro/sam3-onnx's decoder: no image size, boxes normalized x0,y0,x1,y1, masks as
    sigmoid probabilities [N,1,288,288] at the model's resolution."""
    # At 288 x 288 whatever the input size, as the real decoder's (its 1008 / 3.5).
    logits = g.op("Resize", [g.op("Reshape", [masks, g.const([QUERIES, 1, m, m], np.int64)]), "", "",
                             g.const([QUERIES, 1, 288, 288], np.int64)], mode="linear",
                  coordinate_transformation_mode="half_pixel")
    probs = g.op("Sigmoid", [logits])
    g.name(g.op("Compress", [g.op("Squeeze", [boxes, g.const([0], np.int64)]), keep], axis=0), "boxes")
    g.name(g.op("Compress", [scores, keep], axis=0), "scores")
    g.name(g.op("Compress", [probs, keep], axis=0), "masks")
    g.save(os.path.join(out, "sam3_decoder.onnx"),
           decoder_inputs(m, box_slots),
           [tensor("boxes", TensorProto.FLOAT, ["N", 4]), tensor("scores", TensorProto.FLOAT, ["N"]),
            tensor("masks", TensorProto.FLOAT, ["N", 1, 288, 288])], "decoder")


def clip_vocabulary():
    """(token -> id, merges, byte_encoder) built from the bundled CLIP merges, as CLIP does."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    byte_encoder = {str(b): chr(c) for b, c in zip(bs, cs)}
    with gzip.open(VOCAB, "rt", encoding="utf-8") as f:
        merges = f.read().split("\n")[1:49152 - 256 - 2 + 1]
    vocab = [chr(c) for c in cs]
    vocab += [v + "</w>" for v in vocab]
    vocab += [m.replace(" ", "") for m in merges]
    vocab += ["<|startoftext|>", "<|endoftext|>"]
    return {t: i for i, t in enumerate(vocab)}, merges, byte_encoder


def write_clip_tokenizer_json(path):
    """The samexporter vocabulary format."""
    encoder, merges, byte_encoder = clip_vocabulary()
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"encoder": encoder, "merges": merges, "byte_encoder": byte_encoder}, f, ensure_ascii=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # The family registry's ids (src/pure/families/table.cpp), and osam (a samexporter variant).
    ap.add_argument("--layout", choices=["usls", "samexporter", "osam", "geti", "efficientsam3", "sam3.1-ailia"], required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", type=int, default=None, help="model input size (default 224 usls, 252 samexporter)")
    ap.add_argument("--height", type=int, default=None, help="usls: input height (default --size)")
    ap.add_argument("--width", type=int, default=None, help="usls: input width (default --size)")
    ap.add_argument("--int32", action="store_true", help="samexporter: int32 tokens and sizes")
    ap.add_argument("--frozen-box-scale", action="store_true", help="samexporter: boxes scaled by a constant 1008")
    ap.add_argument("--float-image", action="store_true", help="samexporter: float [1,3,S,S] image, normalized by the caller")
    ap.add_argument("--box-slots", type=int, default=1, help="samexporter: box slots (> 1: sequence-first box inputs)")
    ap.add_argument("--inconsistent-decoder", action="store_true",
                    help="usls: pred_logits with one score for all queries (a broken export)")
    ap.add_argument("--fp16", action="store_true", help="usls: float16 at every edge, release file names")
    ap.add_argument("--q4f16", action="store_true", help="usls: as --fp16, -q4f16 names, a 4-bit MatMulNBits")
    ap.add_argument("--v1", action="store_true", help="usls: the first generation, with geometry-encoder.onnx")
    ap.add_argument("--slow-encoder", type=int, default=0, metavar="STEPS",
                    help="usls: STEPS heavy nodes in the vision encoder (about a minute to encode; stop tests)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.layout == "usls":
        size = args.size or 224
        make_usls(args.out, args.height or size, args.width or size, args.inconsistent_decoder, args.fp16, args.v1,
                  args.q4f16, args.slow_encoder)
    elif args.layout == "geti":
        make_geti(args.out, args.size or 224)
    elif args.layout == "efficientsam3":
        make_geti(args.out, args.size or 224, efficient=True)
    elif args.layout == "sam3.1-ailia":
        make_sam31_ailia(args.out, args.size or 224)
    elif args.layout == "osam":
        Graph.external_data = True
        make_samexporter(args.out, args.size or 252, False, False, osam=True)
    else:
        make_samexporter(args.out, args.size or 252, args.int32, args.frozen_box_scale,
                         float_image=args.float_image, box_slots=args.box_slots)


if __name__ == "__main__":
    main()
