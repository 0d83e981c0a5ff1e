"""Model.track on the generated SAM 3.1 bundle (tools/make_video_models.py): numpy frames in,
per-frame numpy results out, ids that stay (the C++ tests cover the rules case by case)."""
import os

import numpy as np
import pytest

import sam3cpp

MODELS = os.environ.get("SAM3_TEST_MODELS", "")


def frame(i):
    """Grey 120 x 160 with a red square moving right and a blue one standing still."""
    f = np.full((120, 160, 3), 128, np.uint8)
    x = 10 + 3 * i
    f[40:62, x:x + 22] = (255, 0, 0)
    f[10:28, 110:128] = (0, 0, 255)
    return f


@pytest.fixture(scope="module")
def model():
    return sam3cpp.Model(os.path.join(MODELS, "sam3.1-video"))


def test_track_yields_every_frame_with_stable_ids(model):
    results = list(model.track((frame(i) for i in range(10)), "car", hotstart_delay=4, hotstart_unmatched=2,
                               hotstart_duplicate=2))
    assert [r.index for r in results] == list(range(10))
    red_ids = set()
    for r in results:
        assert r.masks.shape == (len(r.ids), 120, 160) and r.masks.dtype == np.bool_
        assert r.boxes.shape == (len(r.ids), 4)
        assert set(r.prompts.tolist()) <= {0}
        owner = [int(r.ids[k]) for k in range(len(r.ids)) if r.masks[k, 51, 21 + 3 * r.index]]
        assert len(owner) == 1, r.index
        red_ids.add(owner[0])
    assert len(red_ids) == 1


def test_track_a_clicked_object(model):
    results = list(model.track((frame(i) for i in range(6)), objects=[{"frame": 2, "points": [(119, 19)]}], hotstart_delay=2,
                               hotstart_unmatched=1, hotstart_duplicate=1))
    assert [len(r.ids) for r in results] == [0, 0, 1, 1, 1, 1]
    assert results[3].masks[0, 19, 119]


def test_track_errors_are_typed(model):
    with pytest.raises(sam3cpp.InvalidArgumentError, match="no frames"):
        list(model.track([], "car"))
    with pytest.raises(sam3cpp.InvalidArgumentError, match="outside"):
        list(model.track([frame(0)], objects=[{"frame": 0, "points": [(900, 10)]}]))
