"""integrations/cvat/sam3-detector/main.py as Nuclio's Python runtime calls it (init_context once,
then handler with a parsed JSON body), answering CVAT's detector payload; the masks, decoded the way
CVAT decodes them, equal `sam3 segment`'s."""
import base64
import importlib.util
import io
import json
import subprocess
import tracemalloc
from pathlib import Path

import numpy as np
import yaml
from PIL import Image

from test_sam3cpp import CLI, MODELS, rle_decode, scene

FUNCTION = Path(__file__).resolve().parents[2] / "integrations" / "cvat" / "sam3-detector"


class Context:
    """The parts of nuclio-sdk's Context the handler uses."""

    class UserData:
        pass

    class Logger:
        def info(self, message):
            self.last = message

    class Response:
        def __init__(self, headers=None, body=None, content_type=None, status_code=200):
            self.headers, self.body, self.content_type, self.status_code = headers, body, content_type, status_code

    def __init__(self):
        self.user_data = Context.UserData()
        self.logger = Context.Logger()


class Event:
    def __init__(self, body):
        self.body, self.content_type = body, "application/json"


def load_function(tmp_path, monkeypatch, labels):
    spec = yaml.safe_load((FUNCTION / "function.yaml").read_text())
    spec["metadata"]["annotations"]["spec"] = json.dumps([{"id": i, "name": n, "type": "mask"} for i, n in enumerate(labels)])
    (tmp_path / "function.yaml").write_text(yaml.safe_dump(spec))
    monkeypatch.setenv("SAM3_FUNCTION_YAML", str(tmp_path / "function.yaml"))
    monkeypatch.setenv("SAM3_MODEL", str(MODELS / "usls"))
    module_spec = importlib.util.spec_from_file_location("sam3_nuclio_main", FUNCTION / "main.py")
    main = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(main)
    context = Context()
    main.init_context(context)
    return main, context


def cvat_decode(field, width, height):
    """datumaro's mask_to_rle over the flat crop, then cvat-core's rle2Mask into the box."""
    *flat, xtl, ytl, xbr, ybr = field
    runs, current, run = [], 0, 0
    for v in flat:
        if (1 if v else 0) != current:
            runs.append(run)
            run, current = 0, current ^ 1
        run += 1
    runs.append(run)
    w = xbr - xtl + 1
    crop = np.zeros(len(flat), bool)
    pos, value = 0, 0
    for r in runs:
        crop[pos:pos + r] = bool(value)
        pos, value = pos + r, value ^ 1
    full = np.zeros((height, width), bool)
    full[ytl:ybr + 1, xtl:xbr + 1] = crop.reshape(-1, w)
    return full


def test_the_nuclio_function_answers_cvats_detector_payload_as_the_cli(tmp_path, monkeypatch):
    main, context = load_function(tmp_path, monkeypatch, ["red", "blue"])
    png = io.BytesIO()
    Image.fromarray(scene()).save(png, format="PNG")
    response = main.handler(context, Event({"image": base64.b64encode(png.getvalue()).decode(), "threshold": 0.5}))
    assert response.status_code == 200
    items = json.loads(response.body)
    assert json.dumps(items) == response.body, "the text is json.dumps's of the items, written without a list per mask"
    assert {item["label"] for item in items} == {"red", "blue"}
    (tmp_path / "scene.png").write_bytes(png.getvalue())
    cli = json.loads(subprocess.run([CLI, "segment", "--models", str(MODELS / "usls"), "--image", str(tmp_path / "scene.png"),
                                     "--prompt", "red", "--prompt", "blue", "--json"], check=True, capture_output=True,
                                    text=True).stdout)
    for prompt in cli["images"][0]["prompts"]:
        ours = [item for item in items if item["label"] == prompt["text"]]
        assert len(ours) == len(prompt["instances"]), prompt["text"]
        for item, instance in zip(ours, prompt["instances"]):
            assert isinstance(item["confidence"], str)
            assert abs(float(item["confidence"]) - instance["score"]) < 1e-4
            expected = rle_decode(instance["mask"]["counts"], 240, 400)
            assert np.array_equal(cvat_decode(item["mask"], 400, 240), expected), prompt["text"]


def test_a_frame_that_is_not_an_image_is_a_400(tmp_path, monkeypatch):
    main, context = load_function(tmp_path, monkeypatch, ["red"])
    response = main.handler(context, Event({"image": base64.b64encode(b"not an image").decode()}))
    assert response.status_code == 400
    assert "image" in json.loads(response.body)["error"]


def test_the_answer_costs_its_text_not_a_python_int_per_mask_pixel(tmp_path, monkeypatch):
    """A 2000 x 1500 frame all red: 3 M mask pixels. As a list of ints and json.dumps's pieces of it
    the answer took about 30 bytes per pixel of Python memory (about 90 MB); as text, a few."""
    main, context = load_function(tmp_path, monkeypatch, ["red"])
    frame = np.zeros((1500, 2000, 3), dtype=np.uint8)
    frame[..., 0] = 255
    png = io.BytesIO()
    Image.fromarray(frame).save(png, format="PNG")
    event = Event({"image": base64.b64encode(png.getvalue()).decode()})
    main.handler(context, event)  # the model's first run, outside the count
    tracemalloc.start()
    response = main.handler(context, event)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    pixels = sum(len(item["mask"]) - 4 for item in json.loads(response.body))
    assert pixels > 2_800_000, "nearly every pixel of the red frame is in the crop of an instance"
    print(f"the Nuclio function's peak Python memory: {peak / pixels:.1f} bytes per mask pixel")
    assert peak < 12 * pixels, f"{peak / pixels:.1f} bytes of Python memory per mask pixel"
