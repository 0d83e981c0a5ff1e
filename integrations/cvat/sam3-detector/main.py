"""Nuclio handler: CVAT's detector protocol over sam3cpp's Python module.

CVAT posts {"image": base64 frame, "threshold": float?} and reads a list of
{"label", "confidence", "type": "mask", "mask": crop rows + [xtl, ytl, xbr, ybr], "points"?}.
The label list is this function's own spec (function.yaml), as CVAT's functions read it.
"""
import base64
import io
import json
import os

import numpy as np
import yaml
from PIL import Image

import sam3cpp

FUNCTION_YAML = os.environ.get("SAM3_FUNCTION_YAML", "/opt/nuclio/function.yaml")


def init_context(context):
    with open(FUNCTION_YAML, encoding="utf-8") as f:
        spec = json.loads(yaml.safe_load(f)["metadata"]["annotations"]["spec"])
    context.user_data.labels = [label["name"] for label in spec]
    context.user_data.model = sam3cpp.Model(os.environ.get("SAM3_MODEL", "/opt/nuclio/models/sam3"))
    context.logger.info(f"sam3cpp ready: {len(spec)} labels, model {context.user_data.model.directory}")


def _mask_text(crop, corners):
    """The crop's 0/1 values then the corners, as json.dumps writes that list ("[0, 1, 1, 5, 7, ...]"),
    written from the array: as a list of Python ints (and json.dumps's pieces of it) the answer
    cost about 30 bytes of memory per mask pixel; as text it costs its 3 bytes a pixel."""
    text = np.empty(crop.size * 3, dtype=np.uint8)
    text[0::3] = crop.astype(np.uint8).ravel() + ord("0")
    text[1::3] = ord(",")
    text[2::3] = ord(" ")
    return "[" + text.tobytes().decode("ascii") + ", ".join(str(c) for c in corners) + "]"


def _detection(label, score, mask):
    """One detector item as JSON text (json.dumps's bytes), or None for an empty mask."""
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return None
    xtl, ytl, xbr, ybr = int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())
    head = json.dumps({"label": label, "confidence": str(score), "type": "mask", "attributes": []})
    return head[:-1] + ', "mask": ' + _mask_text(mask[ytl:ybr + 1, xtl:xbr + 1], (xtl, ytl, xbr, ybr)) + "}"


def handler(context, event):
    body = event.body if isinstance(event.body, dict) else json.loads(event.body)
    try:
        image = Image.open(io.BytesIO(base64.b64decode(body["image"]))).convert("RGB")
    except Exception as e:  # a frame that is not an image is the caller's error
        return context.Response(body=json.dumps({"error": f"image: {e}"}), content_type="application/json",
                                status_code=400)
    threshold = float(body.get("threshold") or 0.5)
    model = context.user_data.model
    embedding = model.encode(np.asarray(image))
    results = model.segment_many(embedding, context.user_data.labels, threshold=threshold)
    items = []
    for label, result in zip(context.user_data.labels, results):
        for instance in result.instances:
            item = _detection(label, instance.score, instance.mask)
            if item:
                items.append(item)
    return context.Response(body="[" + ", ".join(items) + "]", content_type="application/json", status_code=200)
