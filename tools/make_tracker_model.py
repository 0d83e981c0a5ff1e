#!/usr/bin/env python3
"""Generates a small model with the exact input/output contract of SAM3's interactive generation
(onnx-community/sam3-tracker-ONNX, sam3-facts.md section 1) and a behaviour tests can predict.

  vision_encoder.onnx: pixel_values f32 [B,3,1008,1008] (normalized, (x/255-0.5)/0.5) ->
      image_embeddings.0 [B,32,288,288], .1 [B,64,144,144], .2 [B,256,72,72]; channels 0..2 of
      each level are the RGB planes resized (after the int8 quantized-Linear pattern), the rest 0.
  prompt_encoder_mask_decoder.onnx: input_points f32 [B,n_obj,n_pts,2], input_labels i64
      [B,n_obj,n_pts] (1 positive, 0 negative, -1 padding), input_boxes f32 [B,n_boxes,4], all in
      1008-pixel coordinates, and the three embeddings -> iou_scores [B,n_obj,3], pred_masks
      [B,n_obj,3,288,288] logits, object_score_logits [B,n_obj,1]. A box alone comes as zero
      points (input_points [B,1,0,2], input_labels [B,n_boxes,0]), as transformers.js sends it.

The decoder's known behaviour, per object (distances in 1008-pixel units, at the 288 grid):
  * reference colour = mean RGB at the positive points (the box centre's colour when there are
    none); centre = mean of the positive points (the box centre when none);
  * every candidate = pixels of the reference colour (L1 distance < 0.5 on -1..1 RGB), inside
    the box if one is given, and farther than 100 from every negative point;
  * candidate 0 also within 100 of the centre, candidate 1 within 250, candidate 2 anywhere;
  * iou_scores: 0.5, 0.9 - 0.3 * (positive points - 1) - 0.5 * (a box given), 0.75 + 0.1 * (a box
    given): one positive point picks candidate 1 (the object near the click), several positive
    points or a box pick candidate 2 (every pixel of that colour, within the box);
  * object_score_logits = 3 * (R + G + B of the reference colour + 2): negative on black.
Batch size 1 (the image batch). Needs python3-onnx and numpy only.

  make_tracker_model.py --out DIR [--root] [--suffix _quantized] [--no-external-data]
    DIR gets the hub layout: onnx/<graphs> (--root: the graphs at DIR itself), config.json and
    preprocessor_config.json; weights in "<file>.onnx_data" sidecars unless --no-external-data.
"""
import argparse
import json
import os

import numpy as np
from onnx import TensorProto

import onnx_graph
from onnx_graph import tensor

SIDE = 1008        # model input
GRID = 288         # mask and first embedding side (1008 / 3.5)
LEVELS = ((32, 288), (64, 144), (256, 72))
STEP = SIDE / GRID  # 3.5 pixels of 1008 per grid cell
RADII = (100.0, 250.0)
NEG_RADIUS = 100.0
FAR = 1e5


class Graph(onnx_graph.Graph):
    def quantized_identity(self, x):
        """x[..., 3] through the dynamically quantized Linear pattern of the public int8 files."""
        wq = np.clip(np.round(np.eye(3, dtype=np.float32) / (1 / 127.0)) + 128, 0, 255).astype(np.uint8)
        return self.quantized_matmul(x, wq, 1 / 127.0)

    def slice(self, x, start, end, axis):
        return self.op("Slice", [x, self.ints([start]), self.ints([end]), self.ints([axis])])

    def unsqueeze(self, x, axes):
        return self.op("Unsqueeze", [x, self.ints(axes)])

    def squeeze(self, x, axes):
        return self.op("Squeeze", [x, self.ints(axes)])

    def f(self, value):
        return self.const(np.float32(value))


def make_vision_encoder(path, external):
    g = Graph()
    nhwc = g.op("Transpose", ["pixel_values"], perm=[0, 2, 3, 1])
    rgb = g.op("Transpose", [g.quantized_identity(nhwc)], perm=[0, 3, 1, 2])
    batch = g.slice(g.op("Shape", [rgb]), 0, 2, 0)
    outputs = []
    for k, (channels, side) in enumerate(LEVELS):
        sizes = g.op("Concat", [batch, g.ints([side, side])], axis=0)
        small = g.op("Resize", [rgb, "", "", sizes], mode="linear", coordinate_transformation_mode="half_pixel")
        g.name(g.op("Pad", [small, g.ints([0, 0, 0, 0, 0, channels - 3, 0, 0])]), f"image_embeddings.{k}")
        outputs.append(tensor(f"image_embeddings.{k}", TensorProto.FLOAT, ["batch_size", channels, side, side]))
    g.save(path, [tensor("pixel_values", TensorProto.FLOAT, ["batch_size", 3, SIDE, SIDE])], outputs,
           "vision_encoder", "sam3cpp-test-models", external_data=external, data_suffix="_data")


def make_decoder(path, external):
    g = Graph()
    # A padding point (label -1) appended to every object, so no reduction is ever empty (a box
    # alone has zero points).
    label_shape = g.op("Shape", ["input_labels"])                                   # [B,O,P]
    dummy_label = g.op("Expand", [g.const(np.full((1, 1, 1), -1, np.int64), np.int64),
                                  g.op("Concat", [g.slice(label_shape, 0, 2, 0), g.ints([1])], axis=0)])
    labels = g.op("Concat", ["input_labels", dummy_label], axis=2)                   # [B,O,P+1]
    point_shape = g.op("Shape", ["input_points"])                                   # [B,O1,P,2]
    dummy_point = g.op("Expand", [g.const(np.zeros((1, 1, 1, 2), np.float32)),
                                  g.op("Concat", [g.slice(point_shape, 0, 2, 0), g.ints([1, 2])], axis=0)])
    points = g.op("Concat", ["input_points", dummy_point], axis=2)                   # [B,O1,P+1,2]

    # RGB at the grid, as [cells, 3] (batch 1) for gathering the colour under a point.
    rgb = g.slice("image_embeddings.0", 0, 3, 1)                                     # [B,3,G,G]
    cells = g.op("Transpose", [g.op("Reshape", [rgb, g.ints([3, GRID * GRID])])], perm=[1, 0])

    def colour_at(xy):  # [..., 2] -> [..., 3]
        cell = g.op("Clip", [g.op("Floor", [g.op("Div", [xy, g.f(STEP)])]), g.f(0), g.f(GRID - 1)])
        cx, cy = g.slice(cell, 0, 1, -1), g.slice(cell, 1, 2, -1)
        index = g.op("Cast", [g.squeeze(g.op("Add", [g.op("Mul", [cy, g.f(GRID)]), cx]), [-1])], to=TensorProto.INT64)
        return g.op("Gather", [cells, index], axis=0)

    pos = g.op("Cast", [g.op("Equal", [labels, g.const(np.int64(1), np.int64)])], to=TensorProto.FLOAT)  # [B,O,P+1]
    neg = g.op("Cast", [g.op("Equal", [labels, g.const(np.int64(0), np.int64)])], to=TensorProto.FLOAT)
    pos4 = g.unsqueeze(pos, [3])
    npos = g.op("ReduceSum", [pos, g.ints([2])], keepdims=0)                        # [B,O]
    nopos = g.unsqueeze(g.op("Cast", [g.op("Equal", [npos, g.f(0)])], to=TensorProto.FLOAT), [2])  # [B,O,1]
    denominator = g.unsqueeze(g.op("Max", [npos, g.f(1)]), [2])
    colour_sum = g.op("ReduceSum", [g.op("Mul", [colour_at(points), pos4]), g.ints([2])], keepdims=0)  # [B,O,3]
    point_sum = g.op("ReduceSum", [g.op("Mul", [points, pos4]), g.ints([2])], keepdims=0)             # [B,O,2]

    # One box per object (box alone: n_boxes objects), or a box covering everything.
    whole = g.const(np.array([[[-FAR, -FAR, FAR, FAR]]], np.float32))
    boxes = g.op("Concat", ["input_boxes", whole], axis=1)
    objects = g.slice(label_shape, 1, 2, 0)
    boxes = g.op("Slice", [boxes, g.ints([0]), objects, g.ints([1])])                # [B,O or 1,4]
    has_box = g.op("Cast", [g.op("Greater", [g.slice(g.op("Shape", ["input_boxes"]), 1, 2, 0), g.ints([0])])],
                   to=TensorProto.FLOAT)                                            # [1]
    x0, y0, x1, y1 = (g.slice(boxes, k, k + 1, 2) for k in range(4))               # [B,Ob,1]
    box_centre = g.op("Mul", [g.op("Concat", [g.op("Add", [x0, x1]), g.op("Add", [y0, y1])], axis=2), g.f(0.5)])

    ref = g.op("Div", [g.op("Add", [colour_sum, g.op("Mul", [nopos, colour_at(box_centre)])]), denominator])  # [B,O,3]
    centre = g.op("Div", [g.op("Add", [point_sum, g.op("Mul", [nopos, box_centre])]), denominator])           # [B,O,2]

    xs = g.const(((np.arange(GRID, dtype=np.float32) + 0.5) * STEP).reshape(1, 1, 1, GRID))
    ys = g.const(((np.arange(GRID, dtype=np.float32) + 0.5) * STEP).reshape(1, 1, GRID, 1))

    def as_map(v):  # [B,N,1] -> [B,N,1,1]
        return g.unsqueeze(v, [3])

    def distance(px, py):
        dx, dy = g.op("Sub", [xs, px]), g.op("Sub", [ys, py])
        return g.op("Sqrt", [g.op("Add", [g.op("Mul", [dx, dx]), g.op("Mul", [dy, dy])])])

    colour_distance = g.op("ReduceSum", [g.op("Abs", [g.op("Sub", [g.unsqueeze(rgb, [1]), g.unsqueeze(ref, [3, 4])])]),
                                         g.ints([2])], keepdims=0)                   # [B,O,G,G]
    match = g.op("Mul", [g.op("Sub", [g.f(0.5), colour_distance]), g.f(8.0)])
    inside = g.op("Min", [g.op("Sub", [xs, as_map(x0)]), g.op("Sub", [as_map(x1), xs]),
                          g.op("Sub", [ys, as_map(y0)]), g.op("Sub", [as_map(y1), ys])])
    box_term = g.op("Div", [inside, g.f(10.0)])
    # Distance to the nearest negative point ([B,O,P+1,G,G] reduced over the points).
    pxs, pys = g.unsqueeze(g.slice(points, 0, 1, 3), [4]), g.unsqueeze(g.slice(points, 1, 2, 3), [4])  # [B,O1,P+1,1,1]
    xs5, ys5 = g.unsqueeze(xs, [1]), g.unsqueeze(ys, [1])
    dx, dy = g.op("Sub", [xs5, pxs]), g.op("Sub", [ys5, pys])
    point_distance = g.op("Sqrt", [g.op("Add", [g.op("Mul", [dx, dx]), g.op("Mul", [dy, dy])])])
    is_neg = g.op("Greater", [g.unsqueeze(neg, [3, 4]), g.f(0.5)])
    nearest_neg = g.op("ReduceMin", [g.op("Where", [is_neg, point_distance, g.f(FAR)])], axes=[2], keepdims=0)
    neg_term = g.op("Div", [g.op("Sub", [nearest_neg, g.f(NEG_RADIUS)]), g.f(25.0)])
    base = g.op("Min", [match, box_term, neg_term])                                 # [B,O,G,G]
    centre_distance = distance(as_map(g.slice(centre, 0, 1, 2)), as_map(g.slice(centre, 1, 2, 2)))
    candidates = [g.op("Min", [base, g.op("Div", [g.op("Sub", [g.f(r), centre_distance]), g.f(25.0)])]) for r in RADII]
    candidates.append(base)
    masks = g.op("Concat", [g.unsqueeze(c, [2]) for c in candidates], axis=2)       # [B,O,3,G,G]
    # The other levels are consumed as the real decoder does (their values do not matter here).
    unused = g.op("Mul", [g.op("Add", [g.op("ReduceMean", ["image_embeddings.1"], keepdims=0),
                                       g.op("ReduceMean", ["image_embeddings.2"], keepdims=0)]), g.f(0.0)])
    g.name(g.op("Add", [masks, unused]), "pred_masks")

    ones = g.op("Add", [g.op("Mul", [npos, g.f(0.0)]), g.f(1.0)])                 # [B,O]
    extra = g.op("Max", [g.op("Sub", [npos, g.f(1.0)]), g.f(0.0)])
    s0 = g.op("Mul", [ones, g.f(0.5)])
    s1 = g.op("Sub", [g.op("Sub", [g.op("Mul", [ones, g.f(0.9)]), g.op("Mul", [extra, g.f(0.3)])]),
                      g.op("Mul", [has_box, g.f(0.5)])])
    s2 = g.op("Add", [g.op("Mul", [ones, g.f(0.75)]), g.op("Mul", [has_box, g.f(0.1)])])
    g.name(g.op("Concat", [g.unsqueeze(s, [2]) for s in (s0, s1, s2)], axis=2), "iou_scores")
    total = g.op("ReduceSum", [ref, g.ints([2])], keepdims=1)                       # [B,O,1]
    g.name(g.op("Mul", [g.op("Add", [total, g.f(2.0)]), g.f(3.0)]), "object_score_logits")

    inputs = [tensor("input_points", TensorProto.FLOAT, ["batch_size", "point_batch_size", "num_points", 2]),
              tensor("input_labels", TensorProto.INT64, ["batch_size", "point_batch_size", "num_points"]),
              tensor("input_boxes", TensorProto.FLOAT, ["batch_size", "num_boxes", 4])]
    inputs += [tensor(f"image_embeddings.{k}", TensorProto.FLOAT, ["batch_size", c, s, s]) for k, (c, s) in enumerate(LEVELS)]
    outputs = [tensor("iou_scores", TensorProto.FLOAT, ["batch_size", "point_batch_size", 3]),
               tensor("pred_masks", TensorProto.FLOAT, ["batch_size", "point_batch_size", 3, GRID, GRID]),
               tensor("object_score_logits", TensorProto.FLOAT, ["batch_size", "point_batch_size", 1])]
    g.save(path, inputs, outputs, "prompt_encoder_mask_decoder", "sam3cpp-test-models", external_data=external,
           data_suffix="_data")


def write_configs(out, external):
    """What transformers.js reads: the model type, the feature levels, the external-data files,
    and the image processor (1008 x 1008 stretch, mean/std 0.5, masks 288)."""
    config = {
        "architectures": ["Sam3TrackerModel"],
        "model_type": "sam3_tracker",
        "image_size": SIDE,
        "vision_config": {"model_type": "sam3_vision_model", "num_feature_levels": 3},
        "mask_decoder_config": {"model_type": "sam3_tracker_mask_decoder", "num_multimask_outputs": 3},
        "transformers.js_config": {"use_external_data_format": {
            "vision_encoder": 1, "prompt_encoder_mask_decoder": 1}} if external else {},
    }
    preprocessor = {
        "image_processor_type": "Sam2ImageProcessor",
        "processor_class": "Sam2Processor",
        "do_resize": True, "size": {"height": SIDE, "width": SIDE}, "resample": 2,
        "do_rescale": True, "rescale_factor": 1 / 255,
        "do_normalize": True, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
        "do_convert_rgb": True, "mask_size": {"height": GRID, "width": GRID},
    }
    for name, doc in (("config.json", config), ("preprocessor_config.json", preprocessor)):
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--root", action="store_true", help="the graphs at DIR itself instead of DIR/onnx")
    ap.add_argument("--suffix", default="", help="dtype suffix of the file names, e.g. _quantized, _fp16")
    ap.add_argument("--no-external-data", action="store_true", help="weights inside the .onnx files")
    args = ap.parse_args()
    graphs = args.out if args.root else os.path.join(args.out, "onnx")
    os.makedirs(graphs, exist_ok=True)
    external = not args.no_external_data
    make_vision_encoder(os.path.join(graphs, f"vision_encoder{args.suffix}.onnx"), external)
    make_decoder(os.path.join(graphs, f"prompt_encoder_mask_decoder{args.suffix}.onnx"), external)
    write_configs(args.out, external)


if __name__ == "__main__":
    main()
