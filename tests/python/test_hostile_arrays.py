"""Arrays and sizes a hostile or careless caller passes: huge zero-stride views, odd dtypes, negative
and enormous RLE sizes, junk boxes. Each is refused from its shape with sam3cpp's own error, before
anything is copied, and the interpreter survives."""
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import sam3cpp

MODELS = Path(os.environ["SAM3_TEST_MODELS"])


@pytest.fixture(scope="module")
def model():
    return sam3cpp.Model(MODELS / "usls")


def scene() -> np.ndarray:
    im = np.zeros((240, 400, 3), np.uint8)
    im[20:100, 40:160] = (255, 0, 0)
    im[140:220, 240:380] = (0, 0, 255)
    return im


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_a_huge_zero_stride_view_is_refused_without_crashing_the_interpreter():
    # In a child: a crash there is a failed assertion here, not a lost test run.
    probe = f"""
import numpy as np, sam3cpp
model = sam3cpp.Model({str(MODELS / "usls")!r})
view = np.broadcast_to(np.zeros(3, np.uint8), (200000, 200000, 3))
try:
    model.encode(view)
except sam3cpp.ImageTooLargeError as e:
    print("refused:", e)
"""
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"the interpreter died ({r.returncode}): {r.stderr[-2000:]}"
    assert "refused: the image is 200000x200000, over the limit of 250000000 pixels" in r.stdout, r.stdout + r.stderr


def test_a_view_over_the_limit_is_refused_before_any_copy(model):
    before = peak_rss_mb()
    view = np.broadcast_to(np.zeros(3, np.uint8), (20000, 20000, 3))  # 1.2 GB if it were copied
    with pytest.raises(sam3cpp.ImageTooLargeError, match="20000x20000"):
        model.encode(view)
    with pytest.raises(sam3cpp.ImageTooLargeError, match="over the limit of 100 pixels"):
        model.encode(np.zeros((20, 20, 3), np.uint8), max_pixels=100)
    with pytest.raises(sam3cpp.ImageTooLargeError, match="over the limit of 100 pixels"):
        model.encode(Image.new("RGB", (20, 20)), max_pixels=100)
    assert peak_rss_mb() - before < 200, f"peak memory grew by {peak_rss_mb() - before:.0f} MB: the view was copied"


def test_views_are_read_through_their_strides(model):
    im = scene()
    views = {
        "flipped": im[::-1],
        "every other column": im[:, ::2],
        "transposed back": np.ascontiguousarray(im.transpose(1, 0, 2)).transpose(1, 0, 2),
        "broadcast rows": np.broadcast_to(im[100:101], (240, 400, 3)),
        "gray broadcast": np.broadcast_to(np.uint8(255), (240, 400)),
        "rgba flipped": np.dstack([im, np.full(im.shape[:2], 7, np.uint8)])[:, ::-1],
    }
    for name, view in views.items():
        expected = model.segment(np.ascontiguousarray(view), "red").masks
        got = model.segment(view, "red").masks
        assert got.shape == expected.shape and np.array_equal(got, expected), name


def test_bad_image_arrays_get_sam3cpps_errors(model):
    for array, words in [
        (np.zeros((4, 4, 3), np.float32), "must be uint8"),
        (np.zeros((4, 4, 2), np.uint8), "HxW, HxWx3"),
        (np.zeros((4, 4, 400), np.uint8), "HxW, HxWx3"),
        (np.zeros((4,), np.uint8), "HxW, HxWx3"),
        (np.zeros((0, 4, 3), np.uint8), "empty"),
        (np.array([[object()]]), "must be uint8"),
    ]:
        with pytest.raises(sam3cpp.InvalidArgumentError, match=words):
            model.encode(array)


def test_masks_are_judged_by_their_shape_first():
    with pytest.raises(sam3cpp.ImageTooLargeError, match="the mask is 200000x200000"):
        sam3cpp.encode_rle(np.broadcast_to(np.zeros(1, bool), (200000, 200000)))
    with pytest.raises(sam3cpp.InvalidArgumentError, match="2-D"):
        sam3cpp.encode_rle(np.zeros((2, 2, 2), bool))
    with pytest.raises(sam3cpp.InvalidArgumentError, match="numbers or bools"):
        sam3cpp.encode_rle(np.array([[object(), None]]))
    flipped = (np.arange(12).reshape(3, 4) % 3 == 0)[::-1, ::-1]
    assert np.array_equal(sam3cpp.decode_rle(sam3cpp.encode_rle(flipped)), flipped)


def test_rle_sizes_get_sam3cpps_errors():
    for size in ([-1, 5], [5, -1], [2**40, 1], ["a", 1], [1, 2, 3], 7, None):
        with pytest.raises(sam3cpp.InvalidArgumentError, match=r'rle\["size"\] must be \[height, width\]'):
            sam3cpp.decode_rle({"size": size, "counts": ""})
    with pytest.raises(sam3cpp.ImageTooLargeError, match="over the limit of 250000000 pixels"):
        sam3cpp.decode_rle({"size": [200000, 200000], "counts": "0"})
    with pytest.raises(sam3cpp.InvalidArgumentError, match="an RLE is"):
        sam3cpp.decode_rle({"counts": ""})


def test_junk_boxes_and_prompts_get_sam3cpps_errors(model):
    e = model.encode(scene())
    for boxes, words in [(5, "list of boxes"), ("0,0,1,1", "list of boxes"), ([5], "a box is"), (["abcd"], "a box is"),
                         ([("a", 1, 2, 3)], "box 1's x0 must be a number"), ([(1, 2, 3, 4, 7)], "box 1's fifth item"), ([(1, 2, 3)], "a box is")]:
        with pytest.raises(sam3cpp.InvalidArgumentError, match=words):
            model.segment(e, boxes=boxes)
    with pytest.raises(sam3cpp.InvalidArgumentError, match="a prompt is a string or"):
        model.segment_many(e, ["red", 5])
