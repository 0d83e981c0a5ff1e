"""Clicks from Python on the generated interactive model (tools/make_tracker_model.py: one click
gives the clicked colour within 250 model pixels; a box gives that colour within the box)."""
import math
import os
from pathlib import Path

import numpy as np
import pytest

import sam3cpp

MODELS = Path(os.environ["SAM3_TEST_MODELS"])


@pytest.fixture(scope="module")
def tracker():
    return sam3cpp.Model(MODELS / "tracker", threads=1)


@pytest.fixture(scope="module")
def scene():
    """The C++ tests' click scene: 640x480, two red squares, a blue bar."""
    im = np.zeros((480, 640, 3), np.uint8)
    im[100:220, 100:220] = (255, 0, 0)
    im[100:220, 400:520] = (255, 0, 0)
    im[300:420, 200:500] = (0, 0, 255)
    return im


def iou(mask, y0, y1, x0, x1):
    rect = np.zeros_like(mask)
    rect[y0:y1, x0:x1] = True
    return (mask & rect).sum() / (mask | rect).sum()


def test_a_click_and_a_negative_click(tracker, scene):
    assert tracker.interactive and tracker.layout == "sam3-tracker"
    embedding = tracker.encode(scene)
    r = tracker.segment(embedding, points=[(160, 160)])
    assert len(r) == 1 and r.masks.shape == (1, 480, 640)
    assert iou(r.masks[0], 100, 220, 100, 220) > 0.95
    assert not r.masks[0][160, 460], "the other square is another object"
    assert r.scores[0] == pytest.approx(0.9, abs=1e-5)
    assert r.object_score > 0.9
    cut = tracker.segment(embedding, points=[(160, 160), (105, 105, False)])
    assert not cut.masks[0][110, 110] and cut.masks[0][200, 200]
    assert tracker.segment(embedding, points=[(160, 160), (105, 105, "neg")]).masks[0].sum() == cut.masks[0].sum()


def test_a_box_alone_and_multimask(tracker, scene):
    embedding = tracker.encode(scene)
    r = tracker.segment(embedding, box=(380, 80, 540, 240))
    assert iou(r.masks[0], 100, 220, 400, 520) > 0.95
    three = tracker.segment(embedding, points=[(160, 160)], multimask=True)
    assert three.scores == pytest.approx([0.9, 0.75, 0.5], abs=1e-5)


def test_everything(tracker, scene):
    r = tracker.segment_everything(tracker.encode(scene), points_per_side=16, min_area=200)
    found = sum(iou(m, 100, 220, 100, 220) > 0.9 or iou(m, 100, 220, 400, 520) > 0.9 for m in r.masks)
    assert found == 2


def test_everything_with_crop_layers_needs_the_image(tracker, scene):
    embedding = tracker.encode(scene)
    with pytest.raises(sam3cpp.InvalidArgumentError, match="pass the image too"):
        tracker.segment_everything(embedding, crop_layers=1)
    r = tracker.segment_everything(embedding, points_per_side=16, min_area=200, crop_layers=1, image=scene)
    assert r.masks.shape[1:] == (480, 640)
    found = sum(iou(m, 100, 220, 100, 220) > 0.9 or iou(m, 100, 220, 400, 520) > 0.9 for m in r.masks)
    assert found == 2, "each square once across the image and its crops"


def test_everything_with_crop_layers_refuses_another_image_of_the_same_size(tracker, scene):
    """A new user's trial: the crops of another image were decoded and merged with this one's objects."""
    embedding = tracker.encode(scene)
    other = scene.copy()
    other[300:420, 200:500] = (0, 255, 0)
    with pytest.raises(sam3cpp.InvalidArgumentError, match="not the one it was encoded from"):
        tracker.segment_everything(embedding, crop_layers=1, image=other)
    assert len(tracker.segment_everything(embedding, min_area=200, crop_layers=1, image=scene.copy())) > 0, "the same pixels, another array"


def test_bad_clicks_raise_with_the_point(tracker, scene):
    embedding = tracker.encode(scene)
    with pytest.raises(sam3cpp.InvalidArgumentError, match=r"object 1, point 2 \(700, 20\) is outside"):
        tracker.segment(embedding, points=[(10, 10), (700, 20)])
    with pytest.raises(sam3cpp.InvalidArgumentError, match="not a pair of numbers"):
        tracker.segment(embedding, points=[(math.nan, 10)])
    with pytest.raises(sam3cpp.InvalidArgumentError, match="neither a positive point nor a box"):
        tracker.segment(embedding, points=[(10, 10, False)])
    with pytest.raises(sam3cpp.InvalidArgumentError, match="5000 points"):
        tracker.segment(embedding, points=[(10, 10)] * 5000)
    with pytest.raises(sam3cpp.InvalidArgumentError, match=r"\(x, y\) or \(x, y, positive\)"):
        tracker.segment(embedding, points=[(10,)])
    # Values of the wrong type: sam3's error naming the value, not pybind's bare cast error.
    for points, words in (([("a", "b")], "point 1's x must be a number"), ([(1, 2), (3, None)], "point 2's y must be a number"),
                          ([(1, 2, 7)], "point 1's third item"), ("10,10", "a list of")):
        with pytest.raises(sam3cpp.InvalidArgumentError, match=words):
            tracker.segment(embedding, points=points)
    with pytest.raises(sam3cpp.InvalidArgumentError, match="box's x0 must be a number"):
        tracker.segment(embedding, box=("a", 1, 2, 3))
    with pytest.raises(sam3cpp.InvalidArgumentError, match="either points/box"):
        tracker.segment(embedding, "red", points=[(10, 10)])
    with pytest.raises(sam3cpp.InvalidArgumentError, match="not text"):
        tracker.segment(embedding, "red")


def test_a_16_bit_pil_image_is_the_same_picture_as_its_file(tracker, tmp_path):
    """Pillow's convert("RGB") clips 16-bit pixels at 255: the image given as a PIL image was white."""
    from PIL import Image
    gray16 = np.zeros((480, 640), np.uint16)
    gray16[100:220, 100:220] = 60000  # a bright square (high byte 234) on black
    path = tmp_path / "gray16.png"
    Image.fromarray(gray16).save(path)
    opened = Image.open(path)
    assert opened.mode.startswith("I"), opened.mode
    from_path = tracker.segment(str(path), points=[(160, 160)])
    from_pil = tracker.segment(opened, points=[(160, 160)])
    assert iou(from_path.masks[0], 100, 220, 100, 220) > 0.9, "the file's square is the clicked object"
    assert np.array_equal(from_pil.masks, from_path.masks)
    with pytest.raises(sam3cpp.InvalidArgumentError, match="mode F"):
        tracker.encode(Image.fromarray(gray16.astype(np.float32)))
