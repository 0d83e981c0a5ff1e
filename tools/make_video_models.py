#!/usr/bin/env python3
"""Generates a small SAM 3.1 bundle with the exact file names, inputs and outputs of ailia-models'
segment-anything-3.1 video pipeline (sam3-video-facts.md section 3; read from ailia's
video_tracking.py and segment_anything_3_1.py) and a behaviour tests can predict, for the video
tracker (src/video). Every graph is at the test size S (224: masks M = S*2/7 = 64 where the real
ones are 288, features F = S/14 = 16 where the real ones are 72, memory masks S*8/7 = 256 where
the real ones are 1152).

  sam3.1_image_encoder.onnx   as make_test_models.py --layout sam3.1-ailia: RGB (-1..1) in
                              channels 0..2 of fpn0..2; prop_fpn = fpn / 2; pos = 0.
  sam3.1_grounding.onnx       one query per colour of PALETTE (34 colours on a grey background:
                              the 26 of channels 0, 128, 255, then the 8 of channels 64, 191):
                              query k's mask logits = 10 - 20 |rgb - colour_k|^2 (bands
                              thinner than 3 pixels removed, as for every colour mask here),
                              its logit 3 when its mask survives a 3x3 erosion (else -10), its box the mask's
                              extent (cx, cy, w, h); presence from the word (purple: absent).
  sam3.1_prompt_encoder.onnx  coords [B,P,2] (input pixels), labels [B,P] int32, masks
                              [B,1,M,M], masks_enable [1] int32 -> sparse [B,P,256] (x/S, y/S,
                              positive point, box corner 2, box corner 3), dense [B,256,F,F]
                              (the mask prompt in channel 0 when enabled), dense_pe.
  sam3.1_mask_decoder.onnx    the colour under the positive points (or the box's centre, or the
                              mask prompt's mean colour) -> 4 candidate masks of that colour
                              (candidate 1 the best by iou_pred; the others 30 lower), sam tokens
                              = the colour, object_score_logits 5.
  sam3.1_memory_encoder.onnx  per slot k (masks channel k, -1..1 as the host sends them, its
                              positive part, so an empty slot's 0 is nothing, pooled to cells
                              c): sum(c x pure colour sum) and sum(c x pure share), in
                              channels 8+4k..8+4k+3 of vision_features (constant over space); the
                              encoder's prop_fpn2 holds each 14x14 cell's mean colour (0..2), the
                              mean of its pure pixels (a palette colour; 3..5) and their share (6), so
                              the ratio is the object's colour (objects a cell apart, as the
                              tests' scenes are); vision_pos_enc = 0.
  sam3.1_memory_attention.onnx  channels 8..71 of the output = the mean over the spatial memory
                              tokens (memory_obj's first len(memory_img) rows): each slot's
                              area-weighted colour over the bank; the rest = curr_img.
  sam3.1_tracking_mask_decoder.onnx  slot k: colour = sums / area from the memory channels;
                              masks [1,16,3,M,M] = 10 - 20 |rgb - colour|^2 for candidate 1
                              (the others 30 lower), -20 where extra_embed marks the slot invalid
                              (channel 0 < 0) or its memory is empty; obj_score = max logit
                              (capped at 8); sam tokens = the colour.
  sam3.1_obj_ptr_proj / interactive_obj_ptr_proj / obj_ptr_tpos_proj: x [N,256] -> identity.
  npy/  the constants the driver loads (valid/invalid embeds mark channel 0 with +1/-1, the
        mask downsampler averages 4x4 blocks, no-object embeddings touch channels >= 200 only).

So a tracked object keeps its id while its colour stays in the frame, however it moves, and the
memory's slot bookkeeping decides which colour each slot follows: a mixed-up slot swaps ids.

  make_video_models.py --out DIR [--size 224]
"""
import argparse
import os

import numpy as np
from onnx import TensorProto

import make_test_models as base
from make_test_models import FEATURES, Graph
from onnx_graph import tensor

# In the encoder's -1..1: every colour whose channels are 0, 128 or 255 (-1, 0, 1) except the
# grey background, then the centres of the 8 cells of that grid (channels 64 or 191, -0.5 or
# 0.5): 34 objects can be told apart. Two grid colours are at least d^2 = 1 apart, two centres
# at least 1, a centre and a grid colour (the background too) 0.75, so 10 - 20 d^2 <= -5 off a
# query's own colour. The first 26 keep their order (query index) from the 26-colour palette.
GRID = np.array([c for c in np.ndindex(3, 3, 3) if c != (1, 1, 1)], np.float32) - 1.0
CENTRES = np.array(list(np.ndindex(2, 2, 2)), np.float32) - 0.5
PALETTE = np.concatenate([GRID, CENTRES])
SLOTS = 16
MEM_CH = 8  # first memory channel of slot 0 (4 per slot: 3 colour sums, area)


def colour_logits(g, rgb, colours):
    """rgb [B,3,H,W], colours [B,K,3] -> [B,K,H,W] logits 10 - 20 |rgb - colour|^2, set to -10
    where positive but near the grey (|rgb|^2 <= 0.2) or not in the mask's 3x3 opening: the one-
    or two-pixel bands where resizing blends a square with the grey (or with another square)
    pass through other colours of the palette (half of a corner colour is a cell centre), and
    are nobody's object."""
    px = g.op("Unsqueeze", [rgb, g.ints([1])])                          # [B,1,3,H,W]
    col = g.op("Unsqueeze", [colours, g.ints([3, 4])])                  # [B,K,3,1,1]
    d = g.op("Sub", [px, col])
    dist = g.op("ReduceSum", [g.op("Mul", [d, d]), g.ints([2])], keepdims=0)
    logits = g.op("Sub", [g.const(np.float32(10.0)), g.op("Mul", [dist, g.const(np.float32(20.0))])])
    # Nothing near the grey is an object (every colour has |colour|^2 >= 0.75): a colour read
    # from memory a little towards the grey then never spreads its mask over the background.
    lit = g.op("Greater", [g.op("ReduceSum", [g.op("Mul", [rgb, rgb]), g.ints([1])], keepdims=1), g.const(np.float32(0.2))])
    positive = g.op("And", [g.op("Greater", [logits, g.const(np.float32(0.0))]), lit])
    binary = g.op("Cast", [positive], to=TensorProto.FLOAT)
    eroded = g.op("Neg", [g.op("MaxPool", [g.op("Neg", [binary])], kernel_shape=[3, 3], pads=[1, 1, 1, 1])])
    opened = g.op("Greater", [g.op("MaxPool", [eroded], kernel_shape=[3, 3], pads=[1, 1, 1, 1]), g.const(np.float32(0.0))])
    band = g.op("And", [g.op("Greater", [logits, g.const(np.float32(0.0))]), g.op("Not", [opened])])
    return g.op("Where", [band, g.const(np.float32(-10.0)), logits])


def channels(g, x, start, count, axis=1):
    return g.op("Slice", [x, g.ints([start]), g.ints([start + count]), g.ints([axis])])


def extent_boxes(g, binary, m):
    """binary [B,Q,m,m] float -> normalized cx,cy,w,h [B,Q,4] of each mask's extent."""
    zero = g.const(np.float32(0.0))
    big = g.const(np.float32(m))

    def extent(axis):
        idx, idx1 = g.const(np.arange(m, dtype=np.float32)), g.const(np.arange(1, m + 1, dtype=np.float32))
        any_ = g.op("Greater", [g.op("ReduceMax", [binary], axes=[axis], keepdims=0), zero])
        lo = g.op("ReduceMin", [g.op("Where", [any_, idx, big])], axes=[2], keepdims=1)
        hi = g.op("ReduceMax", [g.op("Where", [any_, idx1, zero])], axes=[2], keepdims=1)
        return g.op("Div", [lo, big]), g.op("Div", [hi, big])

    x0, x1 = extent(2)
    y0, y1 = extent(3)
    xyxy = g.op("Concat", [x0, y0, x1, y1], axis=2)
    to_cxcywh = np.array([[0.5, 0, -1, 0], [0, 0.5, 0, -1], [0.5, 0, 1, 0], [0, 0.5, 0, 1]], np.float32)
    return g.op("MatMul", [xyxy, g.const(to_cxcywh)])


def make_image_encoder(out, size):
    """make_test_models.py's sam3.1-ailia encoder, but prop_fpn2 (what the memory reads) is the
    image averaged over each 14x14 cell (halved, as the other prop levels), so that a small
    object's colour reaches the memory mixed only with the (zero) grey around it."""
    m = size * 2 // 7
    g = Graph()
    feats, pos = base.vision_features(g, "image", size, size, 3)
    for k, f in enumerate(feats):
        g.name(f, f"fpn{k}")
        if k != 2:
            g.name(g.op("Mul", [f, g.const(np.float32(0.0))]), f"pos{k}")
            g.name(g.op("Mul", [f, g.const(np.float32(0.5))]), f"prop_fpn{k}")
    pool = lambda x: g.op("AveragePool", [x], kernel_shape=[14, 14], strides=[14, 14])
    cells = pool("image")
    cells = g.op("Add", [cells, g.op("Mul", [g.op("ReduceMean", [feats[2]], keepdims=1), g.const(np.float32(0.0))])])
    # Channels 3..5: the cell's sum of pure pixels (within 0.05 of a colour of the palette), 6:
    # their share, so the memory reads an object's colour from its own pixels, not from its
    # mask's area nor from the blends at its edge (which pull a colour towards the grey, and a
    # corner colour onto its half-bright cell-centre colour).
    px = g.op("Unsqueeze", ["image", g.ints([1])])                                          # [1,1,3,S,S]
    d = g.op("Sub", [px, g.const(PALETTE.reshape(1, len(PALETTE), 3, 1, 1))])
    nearest = g.op("ReduceMin", [g.op("ReduceSum", [g.op("Mul", [d, d]), g.ints([2])], keepdims=0)], axes=[1], keepdims=1)
    lit = g.op("Cast", [g.op("Less", [nearest, g.const(np.float32(0.05))])], to=TensorProto.FLOAT)  # [1,1,S,S]
    planes = g.op("Concat", [cells, pool(g.op("Mul", ["image", lit])), pool(lit)], axis=1)        # [1,7,f,f]
    g.name(g.op("Mul", [g.op("Pad", [planes, g.ints([0, 0, 0, 0, 0, FEATURES - 7, 0, 0])]), g.const(np.float32(0.5))]), "prop_fpn2")
    g.name(g.op("Add", [pos, base.attention_probe(g, feats[2])]), "pos2")
    g.name(g.op("Mul", [pos, g.const(np.float32(2.0))]), "prop_pos2")
    level = lambda k: [1, FEATURES, m >> k, m >> k]
    g.save(os.path.join(out, "sam3.1_image_encoder.onnx"), [tensor("image", TensorProto.FLOAT, [1, 3, size, size])],
           [tensor(f"fpn{k}", TensorProto.FLOAT, level(k)) for k in range(3)]
           + [tensor(f"pos{k}", TensorProto.FLOAT, level(k)) for k in range(3)]
           + [tensor(f"prop_fpn{k}", TensorProto.FLOAT, level(k)) for k in range(3)]
           + [tensor("prop_pos2", TensorProto.FLOAT, level(2))], "image_encoder")


def make_grounding(out, m, f):
    level = lambda k: [1, FEATURES, m >> k, m >> k]
    g = Graph()
    word = base.first_content_token(g, base.text_rows(g, "text_tokens"))
    presence = g.op("Slice", [word, g.ints([3]), g.ints([4]), g.ints([1])])            # [1,1]
    rgb = channels(g, g.op("Add", ["fpn0", g.op("ReduceMean", ["pos2"], keepdims=1)]), 0, 3)
    q = len(PALETTE)
    masks = colour_logits(g, rgb, g.const(PALETTE.reshape(1, q, 3)))                   # [1,Q,m,m]
    binary = g.op("Cast", [g.op("Greater", [masks, g.const(np.float32(0.0))])], to=TensorProto.FLOAT)
    # A query fires only where its colour survives a 3x3 erosion: the one- or two-pixel seams
    # where resizing mixes two colours into a third are no objects.
    eroded = g.op("Neg", [g.op("MaxPool", [g.op("Neg", [binary])], kernel_shape=[3, 3], pads=[1, 1, 1, 1])])
    any_ = g.op("ReduceMax", [eroded], axes=[2, 3], keepdims=0)                          # [1,Q]
    logits = g.op("Sub", [g.op("Mul", [any_, g.const(np.float32(13.0))]), g.const(np.float32(10.0))])
    # The boxes are unused by this detector; they reach the graph as in the bundle.
    unused = g.op("Mul", [g.op("ReduceSum", ["box_coords"], keepdims=0), g.const(np.float32(0.0))])
    aux = g.op("Mul", [g.op("Add", [g.op("ReduceMean", ["fpn1"], keepdims=0), g.op("ReduceMean", ["fpn2"], keepdims=0)]),
                       g.const(np.float32(0.0))])
    g.name(g.op("Add", [masks, g.op("Add", [aux, unused])]), "pred_masks")
    g.name(extent_boxes(g, binary, m), "pred_boxes")
    g.name(g.op("Unsqueeze", [logits, g.ints([2])]), "pred_logits")
    g.name(presence, "presence_logit_dec")
    g.save(os.path.join(out, "sam3.1_grounding.onnx"),
           [tensor(f"fpn{k}", TensorProto.FLOAT, level(k)) for k in range(3)]
           + [tensor("pos2", TensorProto.FLOAT, level(2)), tensor("text_tokens", TensorProto.INT64, [1, 32]),
              tensor("box_coords", TensorProto.FLOAT, ["N", 1, 4]), tensor("box_labels", TensorProto.INT64, ["N", 1]),
              tensor("box_mask", TensorProto.BOOL, [1, "N"])],
           [tensor("pred_masks", TensorProto.FLOAT, [1, q, m, m]), tensor("pred_boxes", TensorProto.FLOAT, [1, q, 4]),
            tensor("pred_logits", TensorProto.FLOAT, [1, q, 1]), tensor("presence_logit_dec", TensorProto.FLOAT, [1, 1])],
           "grounding")


def make_prompt_encoder(out, size, m, f):
    g = Graph()
    xy = g.op("Div", ["coords", g.const(np.float32(size))])                              # [B,P,2]
    labels = g.op("Cast", ["labels"], to=TensorProto.FLOAT)
    flag = lambda v: g.op("Cast", [g.op("Equal", [labels, g.const(np.float32(v))])], to=TensorProto.FLOAT)
    flags = g.op("Concat", [g.op("Unsqueeze", [flag(v), g.ints([2])]) for v in (1, 2, 3)], axis=2)
    rows = g.op("Concat", [xy, flags], axis=2)                                           # [B,P,5]
    g.name(g.op("Pad", [rows, g.ints([0, 0, 0, 0, 0, FEATURES - 5])]), "sparse_embeddings")
    enable = g.op("Cast", ["masks_enable"], to=TensorProto.FLOAT)
    small = g.op("Resize", ["masks", "", g.const(np.array([1, 1, f / m, f / m], np.float32))], mode="linear")
    dense = g.op("Mul", [small, enable])
    g.name(g.op("Pad", [dense, g.ints([0, 0, 0, 0, 0, FEATURES - 1, 0, 0])]), "dense_embeddings")
    g.name(g.op("Mul", [g.const(np.zeros((1, FEATURES, f, f), np.float32)), g.const(np.float32(1.0))]), "dense_pe")
    g.save(os.path.join(out, "sam3.1_prompt_encoder.onnx"),
           [tensor("coords", TensorProto.FLOAT, ["B", "P", 2]), tensor("labels", TensorProto.INT32, ["B", "P"]),
            tensor("masks", TensorProto.FLOAT, ["B", 1, m, m]), tensor("masks_enable", TensorProto.INT32, [1])],
           [tensor("sparse_embeddings", TensorProto.FLOAT, ["B", "P", FEATURES]),
            tensor("dense_embeddings", TensorProto.FLOAT, ["B", FEATURES, f, f]),
            tensor("dense_pe", TensorProto.FLOAT, [1, FEATURES, f, f])], "prompt_encoder")


def candidates(g, best, count, best_index):
    """[B,K,m,m] -> [B,K,count,m,m]: `best` at best_index, 30 lower elsewhere."""
    one = g.op("Unsqueeze", [best, g.ints([2])])
    lower = g.op("Sub", [one, g.const(np.float32(30.0))])
    return g.op("Concat", [one if i == best_index else lower for i in range(count)], axis=2)


def token_rows(g, colour, count):
    """colour [B,K,3] -> [B,K,count,256]."""
    rows = g.op("Pad", [colour, g.ints([0, 0, 0, 0, 0, FEATURES - 3])])
    return g.op("Concat", [g.op("Unsqueeze", [rows, g.ints([2])])] * count, axis=2)


def make_mask_decoder(out, m, f):
    g = Graph()
    rgb = g.op("Mul", [channels(g, "high_res_features1", 0, 3), g.const(np.float32(2.0))])  # [B,3,m,m]
    sparse = "sparse_prompt_embeddings"
    xy = channels(g, sparse, 0, 2, axis=2)                                               # [B,P,2]
    pos, tl, br = (channels(g, sparse, 2 + i, 1, axis=2) for i in range(3))              # [B,P,1]
    # Where to read the colour: the positive points, else the box's centre.
    centre = g.op("Mul", [g.op("ReduceSum", [g.op("Add", [g.op("Mul", [xy, tl]), g.op("Mul", [xy, br])]), g.ints([1])],
                                keepdims=1), g.const(np.float32(0.5))])                  # [B,1,2]
    has_box = g.op("ReduceMax", [tl], axes=[1], keepdims=1)                              # [B,1,1]
    pts = g.op("Concat", [xy, centre], axis=1)                                           # [B,P+1,2]
    weights = g.op("Concat", [pos, has_box], axis=1)                                     # [B,P+1,1]
    grid = (np.arange(m, dtype=np.float32) + 0.5) / m
    gx = g.const(grid.reshape(1, 1, 1, m))
    gy = g.const(grid.reshape(1, 1, m, 1))
    px = g.op("Unsqueeze", [channels(g, pts, 0, 1, axis=2), g.ints([3])])                # [B,P+1,1,1]
    py = g.op("Unsqueeze", [channels(g, pts, 1, 1, axis=2), g.ints([3])])
    near = g.op("Cast", [g.op("And", [g.op("Less", [g.op("Abs", [g.op("Sub", [gx, px])]), g.const(np.float32(1.0 / m))]),
                                      g.op("Less", [g.op("Abs", [g.op("Sub", [gy, py])]), g.const(np.float32(1.0 / m))])])],
                to=TensorProto.FLOAT)                                                    # [B,P+1,m,m]
    point_map = g.op("ReduceSum", [g.op("Mul", [near, g.op("Unsqueeze", [weights, g.ints([3])])]), g.ints([1])], keepdims=1)
    mask_prompt = g.op("Resize", [channels(g, "dense_prompt_embeddings", 0, 1), "", g.const(np.array([1, 1, m / f, m / f], np.float32))],
                       mode="linear")
    w = g.op("Add", [point_map, mask_prompt])                                            # [B,1,m,m]
    total = g.op("Add", [g.op("ReduceSum", [w, g.ints([2, 3])], keepdims=0), g.const(np.float32(1e-6))])  # [B,1]
    colour = g.op("Div", [g.op("ReduceSum", [g.op("Mul", [rgb, w]), g.ints([2, 3])], keepdims=0), total])  # [B,3]
    colour = g.op("Unsqueeze", [colour, g.ints([1])])                                    # [B,1,3]
    mask = colour_logits(g, rgb, colour)                                                 # [B,1,m,m]
    aux = g.op("Mul", [g.op("Add", [g.op("ReduceMean", ["image_embeddings"], keepdims=0), g.op("Add", [
        g.op("ReduceMean", ["image_pe"], keepdims=0), g.op("ReduceMean", ["high_res_features2"], keepdims=0)])]),
        g.const(np.float32(0.0))])
    masks4 = g.op("Squeeze", [candidates(g, g.op("Add", [mask, aux]), 4, 1), g.ints([1])])  # [B,4,m,m]
    g.name(masks4, "masks")
    b = g.op("Slice", [g.op("Shape", ["image_embeddings"]), g.ints([0]), g.ints([1])])
    g.name(g.op("Expand", [g.const(np.array([[0.2, 0.9, 0.5, 0.1]], np.float32)), g.op("Concat", [b, g.ints([4])], axis=0)]), "iou_pred")
    g.name(g.op("Squeeze", [token_rows(g, colour, 4), g.ints([1])]), "sam_tokens_out")
    g.name(g.op("Expand", [g.const(np.array([[5.0]], np.float32)), g.op("Concat", [b, g.ints([1])], axis=0)]), "object_score_logits")
    g.save(os.path.join(out, "sam3.1_mask_decoder.onnx"),
           [tensor("image_embeddings", TensorProto.FLOAT, ["B", FEATURES, f, f]),
            tensor("image_pe", TensorProto.FLOAT, [1, FEATURES, f, f]),
            tensor("sparse_prompt_embeddings", TensorProto.FLOAT, ["B", "P", FEATURES]),
            tensor("dense_prompt_embeddings", TensorProto.FLOAT, ["B", FEATURES, f, f]),
            tensor("high_res_features1", TensorProto.FLOAT, ["B", FEATURES, m, m]),
            tensor("high_res_features2", TensorProto.FLOAT, ["B", FEATURES, m // 2, m // 2])],
           [tensor("masks", TensorProto.FLOAT, ["B", 4, m, m]), tensor("iou_pred", TensorProto.FLOAT, ["B", 4]),
            tensor("sam_tokens_out", TensorProto.FLOAT, ["B", 4, FEATURES]),
            tensor("object_score_logits", TensorProto.FLOAT, ["B", 1])], "mask_decoder")


def make_memory_encoder(out, m, f, mem):
    g = Graph()
    # The mask's positive part (sigmoid x 2 - 1 > 0: more likely in than out) weighs each pixel: an
    # empty slot's 0 (SAM 3.1's mux of a slot with no object, as on the frames before an object
    # joined a bucket) holds nothing, where (mask + 1) / 2 read it as half of every object there.
    probs = g.op("Relu", [channels(g, "masks", 0, SLOTS)])
    k = mem // f
    small = g.op("AveragePool", [probs], kernel_shape=[k, k], strides=[k, k])            # [1,16,f,f]
    lit_rgb = g.op("Mul", [channels(g, "pix_feat", 3, 3), g.const(np.float32(2.0))])    # [1,3,f,f]
    lit = g.op("Mul", [channels(g, "pix_feat", 6, 1), g.const(np.float32(2.0))])        # [1,1,f,f]
    sums = g.op("ReduceMean", [g.op("Mul", [g.op("Unsqueeze", [small, g.ints([2])]), g.op("Unsqueeze", [lit_rgb, g.ints([1])])])],
                axes=[3, 4], keepdims=0)                                                 # [1,16,3]
    # Over a cell holding one object, the lit pixels' sum is (their share x colour): sum(c x lit sum)
    # / sum(c x lit share) is the colour, however much larger than the object the mask is.
    area = g.op("ReduceMean", [g.op("Mul", [small, lit])], axes=[2, 3], keepdims=0)     # [1,16]
    per_slot = g.op("Concat", [sums, g.op("Unsqueeze", [area, g.ints([2])])], axis=2)    # [1,16,4]
    flat = g.op("Reshape", [per_slot, g.ints([1, SLOTS * 4, 1, 1])])
    cond = g.op("Mul", [g.op("ReduceMean", [channels(g, "masks", SLOTS, SLOTS)], axes=[1, 2, 3], keepdims=1), g.const(np.float32(0.0))])
    spread = g.op("Expand", [g.op("Add", [flat, cond]), g.ints([1, SLOTS * 4, f, f])])
    feats = g.op("Concat", [channels(g, "pix_feat", 0, MEM_CH), spread,
                            g.op("Mul", [channels(g, "pix_feat", MEM_CH + SLOTS * 4, FEATURES - MEM_CH - SLOTS * 4), g.const(np.float32(0.0))])],
                 axis=1)
    g.name(feats, "vision_features")
    g.name(g.op("Mul", ["pix_feat", g.const(np.float32(0.0))]), "vision_pos_enc")
    g.save(os.path.join(out, "sam3.1_memory_encoder.onnx"),
           [tensor("pix_feat", TensorProto.FLOAT, ["B", FEATURES, f, f]), tensor("masks", TensorProto.FLOAT, ["B", 2 * SLOTS, mem, mem])],
           [tensor("vision_features", TensorProto.FLOAT, ["B", FEATURES, f, f]),
            tensor("vision_pos_enc", TensorProto.FLOAT, ["B", FEATURES, f, f])], "memory_encoder")


def make_memory_attention(out, f):
    g = Graph()
    n_img = g.op("Slice", [g.op("Shape", ["memory_img"]), g.ints([0]), g.ints([1])])
    spatial = g.op("Slice", ["memory_obj", g.ints([0]), n_img, g.ints([0])])            # [Ti,1,256]
    mem = g.op("ReduceMean", [spatial], axes=[0], keepdims=1)                            # [1,1,256]
    keep = np.ones((1, 1, FEATURES), np.float32)
    keep[..., MEM_CH:MEM_CH + SLOTS * 4] = 0
    zero = g.const(np.float32(0.0))
    unused = g.op("Mul", [g.op("Add", [g.op("ReduceMean", ["curr_obj"], keepdims=0), g.op("Add", [
        g.op("ReduceMean", ["curr_obj_pos"], keepdims=0), g.op("Add", [g.op("ReduceMean", ["memory_obj_pos"], keepdims=0), g.op("Add", [
            g.op("ReduceMean", ["memory_img"], keepdims=0), g.op("ReduceMean", ["memory_img_pos"], keepdims=0)])])])]), zero])
    outv = g.op("Add", [g.op("Mul", ["curr_img", g.const(keep)]), g.op("Mul", [mem, g.const(1 - keep)])])
    g.name(g.op("Add", [outv, unused]), "pix_feat_with_mem")
    seq = lambda n: tensor(n, TensorProto.FLOAT, [f * f, 1, FEATURES])
    g.save(os.path.join(out, "sam3.1_memory_attention.onnx"),
           [seq("curr_obj"), seq("curr_obj_pos"), seq("curr_img"),
            tensor("memory_obj", TensorProto.FLOAT, ["T", 1, FEATURES]), tensor("memory_obj_pos", TensorProto.FLOAT, ["T", 1, FEATURES]),
            tensor("memory_img", TensorProto.FLOAT, ["Ti", 1, FEATURES]), tensor("memory_img_pos", TensorProto.FLOAT, ["Ti", 1, FEATURES])],
           [seq("pix_feat_with_mem")], "memory_attention")


def make_tracking_decoder(out, m, f):
    g = Graph()
    mem = g.op("ReduceMean", [channels(g, "image_embeddings", MEM_CH, SLOTS * 4)], axes=[2, 3], keepdims=0)  # [1,64]
    per_slot = g.op("Reshape", [mem, g.ints([1, SLOTS, 4])])
    sums = channels(g, per_slot, 0, 3, axis=2)
    area = channels(g, per_slot, 3, 1, axis=2)                                           # [1,16,1]
    colour = g.op("Div", [sums, g.op("Add", [area, g.const(np.float32(1e-6))])])         # [1,16,3]
    rgb = g.op("Mul", [channels(g, "high_res_feat0", 0, 3), g.const(np.float32(2.0))])
    logits = colour_logits(g, rgb, colour)                                               # [1,16,m,m]
    valid = g.op("Greater", [channels(g, "extra_embed", 0, 1, axis=2), g.const(np.float32(0.0))])
    remembered = g.op("Greater", [area, g.const(np.float32(1e-4))])
    live = g.op("Unsqueeze", [g.op("And", [valid, remembered]), g.ints([3])])            # [1,16,1,1]
    aux = g.op("Mul", [g.op("ReduceMean", ["high_res_feat1"], keepdims=0), g.const(np.float32(0.0))])
    logits = g.op("Add", [g.op("Where", [live, logits, g.const(np.float32(-20.0))]), aux])
    g.name(candidates(g, logits, 3, 1), "masks")
    g.name(g.op("Expand", [g.const(np.array([[[0.2, 0.9, 0.4]]], np.float32)), g.ints([1, SLOTS, 3])]), "iou_pred")
    g.name(token_rows(g, colour, 3), "sam_tokens")
    score = g.op("Min", [g.op("ReduceMax", [logits], axes=[2, 3], keepdims=0), g.const(np.float32(8.0))])
    g.name(g.op("Unsqueeze", [score, g.ints([2])]), "obj_score")
    g.save(os.path.join(out, "sam3.1_tracking_mask_decoder.onnx"),
           [tensor("image_embeddings", TensorProto.FLOAT, [1, FEATURES, f, f]),
            tensor("high_res_feat0", TensorProto.FLOAT, [1, FEATURES, m, m]),
            tensor("high_res_feat1", TensorProto.FLOAT, [1, FEATURES, m // 2, m // 2]),
            tensor("extra_embed", TensorProto.FLOAT, [1, SLOTS, FEATURES])],
           [tensor("masks", TensorProto.FLOAT, [1, SLOTS, 3, m, m]), tensor("iou_pred", TensorProto.FLOAT, [1, SLOTS, 3]),
            tensor("sam_tokens", TensorProto.FLOAT, [1, SLOTS, 3, FEATURES]), tensor("obj_score", TensorProto.FLOAT, [1, SLOTS, 1])],
           "tracking_mask_decoder")


def make_projection(out, name):
    g = Graph()
    g.name(g.quantized_linear("x", np.eye(FEATURES, dtype=np.float32)), "y")
    g.save(os.path.join(out, name), [tensor("x", TensorProto.FLOAT, ["N", FEATURES])], [tensor("y", TensorProto.FLOAT, ["N", FEATURES])],
           "projection")


def write_constants(out):
    npy = os.path.join(out, "npy")
    os.makedirs(npy, exist_ok=True)
    save = lambda name, a: np.save(os.path.join(npy, f"sam3.1_{name}.npy"), np.asarray(a, np.float32))
    tpos = np.zeros((7, 1, 1, FEATURES), np.float32)
    tpos[:, 0, 0, 250] = np.arange(7)
    save("maskmem_tpos_enc", tpos)
    no_obj = np.zeros((SLOTS, FEATURES), np.float32)
    no_obj[np.arange(SLOTS), 200 + np.arange(SLOTS)] = 1.0
    save("no_obj_embed_spatial", no_obj)
    save("no_obj_ptr_linear_weight", np.eye(FEATURES) * 0.5)
    save("no_obj_ptr_linear_bias", np.full(FEATURES, 0.25))
    valid, invalid = np.zeros((SLOTS, FEATURES)), np.zeros((SLOTS, FEATURES))
    valid[:, 0], invalid[:, 0] = 1.0, -1.0
    save("output_valid_embed", valid)
    save("output_invalid_embed", invalid)
    save("interactive_mask_downsample_weight", np.full((1, 1, 4, 4), 1.0 / 16))
    save("interactive_mask_downsample_bias", np.zeros(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", type=int, default=224)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    size = args.size
    m, f, mem = size * 2 // 7, size // 14, size * 8 // 7
    base.make_sam31_ailia(args.out, size)  # the vocabulary file (its two graphs are replaced below)
    make_image_encoder(args.out, size)
    make_grounding(args.out, m, f)
    make_prompt_encoder(args.out, size, m, f)
    make_mask_decoder(args.out, m, f)
    make_memory_encoder(args.out, m, f, mem)
    make_memory_attention(args.out, f)
    make_tracking_decoder(args.out, m, f)
    for name in ("obj_ptr_proj", "interactive_obj_ptr_proj", "obj_ptr_tpos_proj"):
        make_projection(args.out, f"sam3.1_{name}.onnx")
    write_constants(args.out)


if __name__ == "__main__":
    main()
