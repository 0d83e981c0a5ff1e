"""integrations/cvat/sam3-tracker/main.py as Nuclio's Python runtime calls it (init_context once, then
handler with a parsed JSON body), called as CVAT's UI calls a tracker: the rectangles with no states
on the frame they were drawn on, then frame by frame with the shapes and states it returned."""
import base64
import importlib.util
import io
import json
import os
from pathlib import Path

import numpy as np
import yaml
from PIL import Image

from test_cvat_function import Context, Event

MODELS = Path(os.environ.get("SAM3_TEST_MODELS", ""))
FUNCTION = Path(__file__).resolve().parents[2] / "integrations" / "cvat" / "sam3-tracker"


def frame(i):
    """Grey 120 x 160, a red square moving 3 pixels right a frame, a blue one standing still."""
    f = np.full((120, 160, 3), 128, np.uint8)
    f[40:62, 10 + 3 * i:32 + 3 * i] = (255, 0, 0)
    f[10:28, 110:128] = (0, 0, 255)
    return f


def png(image):
    out = io.BytesIO()
    Image.fromarray(image).save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


def iou(a, b):
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def load_function(monkeypatch, sessions=3):
    spec = yaml.safe_load((FUNCTION / "function.yaml").read_text())
    assert spec["metadata"]["annotations"]["type"] == "tracker"
    assert spec["spec"]["triggers"]["myHttpTrigger"]["numWorkers"] == 1, "the sessions are one worker's memory"
    monkeypatch.setenv("SAM3_MODEL", str(MODELS / "sam3.1-video"))
    monkeypatch.setenv("SAM3_TRACKER_SESSIONS", str(sessions))
    module_spec = importlib.util.spec_from_file_location("sam3_nuclio_tracker", FUNCTION / "main.py")
    main = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(main)
    context = Context()
    main.init_context(context)
    return main, context


def call(main, context, index, shapes, states):
    response = main.handler(context, Event({"image": png(frame(index)), "shapes": shapes, "states": states}))
    return response.status_code, json.loads(response.body)


def test_the_nuclio_tracker_follows_the_rectangles_as_cvat_asks(monkeypatch):
    main, context = load_function(monkeypatch)
    shapes = [[10, 40, 32, 62], [110, 10, 128, 28]]
    status, started = call(main, context, 0, shapes, [])
    assert status == 200, started
    assert started["states"][0]["session"] == started["states"][1]["session"]
    states = started["states"]
    for i in range(1, 6):
        status, answer = call(main, context, i, shapes, states)
        assert status == 200, answer
        assert iou(answer["shapes"][0], [10 + 3 * i, 40, 32 + 3 * i, 62]) > 0.7, (i, answer["shapes"])
        assert iou(answer["shapes"][1], [110, 10, 128, 28]) > 0.7, (i, answer["shapes"])
        shapes, states = answer["shapes"], answer["states"]
    assert shapes[0][0] > 10 + 12, "the red rectangle went with the square"


def test_an_expired_state_is_410_and_bad_input_400(monkeypatch):
    main, context = load_function(monkeypatch, sessions=1)
    _, first = call(main, context, 0, [[10, 40, 32, 62]], [])
    _, second = call(main, context, 0, [[110, 10, 128, 28]], [])  # the LRU holds one session
    status, body = call(main, context, 1, [[10, 40, 32, 62]], first["states"])
    assert status == 410 and "expired" in body["error"]
    status, body = call(main, context, 1, [[1, 2, 3]], [])
    assert status == 400 and "shapes[0] must be a rectangle" in body["error"]
    status, body = call(main, context, 1, [[110, 10, 128, 28]], ["opaque"])
    assert status == 400 and "states[0]" in body["error"]
    status, body = call(main, context, 1, [[500, 500, 600, 600]], [])
    assert status == 400 and "no area inside" in body["error"]
    status, body = call(main, context, 1, [[110, 10, 128, 28]], second["states"])
    assert status == 200, "a refused call changed nothing"
