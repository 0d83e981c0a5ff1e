"""Model.track on the generated SAM 3.1 bundle (tools/make_video_models.py): numpy frames in,
per-frame numpy results out, ids that stay (the C++ tests cover the rules case by case)."""
import json
import os
import subprocess

import numpy as np
import pytest
from PIL import Image

import sam3cpp

MODELS = os.environ.get("SAM3_TEST_MODELS", "")
CLI = os.environ.get("SAM3_CLI", "sam3")
SHORT = dict(hotstart_delay=4, hotstart_unmatched=2, hotstart_duplicate=2)


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


def owners(results):
    """Per frame, the id whose mask covers the red square's centre and the blue one's."""
    return [(int(r.ids[r.masks[:, 51, 21 + 3 * r.index]][0]), int(r.ids[r.masks[:, 19, 119]][0])) for r in results]


def test_track_a_folder_and_a_video_file_as_numpy_frames(model, tmp_path):
    want = list(model.track([frame(i) for i in range(10)], "car", **SHORT))
    folder = tmp_path / "clip"
    folder.mkdir()
    for i in range(10):  # frame10 after frame9: natural order
        Image.fromarray(frame(i)).save(folder / f"frame{i}.png")
    got = list(model.track(folder, "car", fps=5, **SHORT))
    assert [r.index for r in got] == list(range(10))
    assert [r.time for r in got] == pytest.approx([i / 5 for i in range(10)])
    for a, b in zip(got, want):
        assert a.ids.tolist() == b.ids.tolist() and np.array_equal(a.masks, b.masks), a.index

    # An MP4 of the frames: sam3 track's overlay of a word the generated detector never finds
    # ("purple") is the frames themselves, encoded by FFmpeg (no Python encoder is needed).
    subprocess.run([CLI, "track", str(folder), "--models", os.path.join(MODELS, "sam3.1-video"), "--prompt", "purple",
                    "--format", "overlay", "--overlay-encoder", "mpeg4", "--out", str(tmp_path / "enc")], check=True,
                   capture_output=True)
    video = tmp_path / "enc" / "overlay.mp4"
    source = sam3cpp.read_video(video)
    assert (source.info["width"], source.info["height"]) == (160, 120)
    decoded = list(source)
    assert [f.index for f in decoded] == list(range(10))
    assert np.abs(decoded[3].image.astype(int) - frame(3)).mean() < 4, "lossy, but the frames"

    got = list(model.track(video, "car", every=2, **SHORT))
    assert [r.index for r in got] == [0, 2, 4, 6, 8]
    assert len(set(owners(got))) == 1, "the red and the blue square keep their ids"
    assert owners(got)[0][0] != owners(got)[0][1]

    # An MP4 declares its frame count exactly: a click past its end is refused before anything
    # is tracked or written, as sam3 track refuses it (it was found after the whole video).
    assert source.info["frame_count_exact"] and source.info["frame_count"] == 10
    with pytest.raises(sam3cpp.InvalidArgumentError, match="frame 50"):
        next(model.track(video, objects=[{"frame": 50, "points": [(10, 10)]}], out=tmp_path / "past"))
    assert not (tmp_path / "past").exists()


def test_track_a_missing_video_is_a_typed_error(model, tmp_path):
    with pytest.raises(sam3cpp.ImageUnreadableError, match="none.mp4"):
        list(model.track(tmp_path / "none.mp4", "car"))
    with pytest.raises(sam3cpp.InvalidArgumentError, match="every"):
        list(model.track([frame(0)], "car", every=0))


def files_under(folder):
    """Every file under `folder`: relative path -> bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_track_out_writes_the_files_sam3_track_writes(tmp_path):
    one_thread = sam3cpp.Model(os.path.join(MODELS, "sam3.1-video"), threads=1)  # the CLI's --threads 1: same sums
    folder = tmp_path / "clip"
    folder.mkdir()
    for i in range(8):
        Image.fromarray(frame(i)).save(folder / f"frame{i}.png")
    formats = ["json", "davis", "mots", "overlay"]
    subprocess.run([CLI, "track", str(folder), "--models", os.path.join(MODELS, "sam3.1-video"), "--prompt", "car",
                    "--point", "119,19@2", "--format", ",".join(formats), "--overlay-encoder", "png", "--threads", "1",
                    "--hotstart-delay", "4", "--hotstart-unmatched", "2", "--hotstart-duplicate", "2",
                    "--out", str(tmp_path / "cli")], check=True, capture_output=True)
    got = list(one_thread.track(folder, "car", objects=[{"frame": 2, "points": [(119, 19)]}], out=tmp_path / "py",
                                formats=formats, overlay_encoder="png", **SHORT))
    assert [r.index for r in got] == list(range(8)), "the results are yielded as they are written"
    cli, py = files_under(tmp_path / "cli"), files_under(tmp_path / "py")
    assert sorted(py) == sorted(cli)
    assert any(name.startswith("davis/") for name in py) and "mots.txt" in py and any(n.startswith("overlay/") for n in py)
    for name in cli:
        # The lock names the process that wrote; tracks.json and sam3-video.json hold the settings (below).
        if name not in ("tracks.json", "sam3-video.json", ".sam3-lock"):
            assert py[name] == cli[name], name
    a, b = json.loads(cli["tracks.json"]), json.loads(py["tracks.json"])
    assert set(a) == set(b)
    for key in a:
        if key not in ("settings", "model"):  # how each front was run: its own words
            assert a[key] == b[key], key
    assert b["settings"]["prompts"] == {"texts": ["car"], "objects": [{"frame": 2, "points": [[119, 19]]}]}


def test_track_out_is_atomic_and_resumes(model, tmp_path):
    frames = [frame(i) for i in range(8)]
    out = tmp_path / "out"
    run = model.track(frames, "car", out=out, formats="json,davis", checkpoint_every=2, **SHORT)
    first = [next(run) for _ in range(5)]  # the consumer stops after 5 frames
    run.close()
    assert [r.index for r in first] == list(range(5))
    assert not (out / "tracks.json").exists() and not (out / "davis").exists(), "nothing final before the video is done"
    assert (out / "sam3-video.partial").is_dir(), "the checkpointed frames are kept for a rerun"
    # The rerun resumes the partial run (VideoOutputs' own tests cover the restart point; with
    # 8 frames its 16-frame window reaches back to frame 0) and swaps the finished files in.
    again = list(model.track(frames, "car", out=out, formats="json,davis", checkpoint_every=2, **SHORT))
    assert [r.index for r in again] == list(range(5, 8)), "the frames the first call yielded are not yielded again"
    tracks = json.loads((out / "tracks.json").read_text())
    assert [f["index"] for f in tracks["frames"]] == list(range(8))
    assert sorted(p.name for p in (out / "davis").iterdir()) == [f"{i:05d}.png" for i in range(8)]
    assert not (out / "sam3-video.partial").exists()
    with pytest.raises(sam3cpp.InvalidArgumentError, match="overlay|json|format"):
        list(model.track(frames, "car", out=tmp_path / "bad", formats=["gif"]))


def test_track_out_a_mistyped_box_leaves_a_partial_run_as_it_was(model, tmp_path):
    """A new user's finding (session 16): a box outside the frames threw away the partial run of
    an earlier call (other prompts: the outputs start over) before the tracker refused it."""
    frames = [frame(i) for i in range(8)]
    out = tmp_path / "out"
    run = model.track(frames, "car", out=out, formats="json", checkpoint_every=2, **SHORT)
    [next(run) for _ in range(5)]
    run.close()
    before = files_under(out)
    assert any(name.startswith("sam3-video.partial/") for name in before)
    with pytest.raises(sam3cpp.InvalidArgumentError, match=r"object1's box on frame 0 \(1000, 1000, 1100, 1100\) must satisfy"):
        list(model.track(frames, "car", objects=[{"frame": 0, "box": (1000, 1000, 1100, 1100)}], out=out, formats="json",
                         checkpoint_every=2, **SHORT))
    assert files_under(out) == before, "the partial run was touched"


def test_track_out_resumed_yields_what_it_writes_each_frame_once(model, tmp_path):
    """Issue 42 item 13: a resumed track(out=...) yielded other ids than it wrote, and the frames
    of its re-run window a second time."""
    frames = [frame(i) for i in range(26)]
    out = tmp_path / "out"
    run = model.track(frames, "car", out=out, formats="json", checkpoint_every=3, **SHORT)
    first = [next(run) for _ in range(21)]
    run.close()  # the frames yielded so far are checkpointed: the rerun starts a window before them
    again = list(model.track(frames, "car", out=out, formats="json", checkpoint_every=3, **SHORT))
    yielded = first + again
    assert [r.index for r in yielded] == list(range(26)), "each frame yielded once over the two calls"
    tracks = json.loads((out / "tracks.json").read_text())
    assert [r.ids.tolist() for r in yielded] == [[o["id"] for o in f["objects"]] for f in tracks["frames"]]


def test_track_bounds_and_writers_are_typed_errors(model, tmp_path):
    """Issue 42 item 17: hotstart_delay unbounded, frame 2**70 pybind's bare cast error, NaN fps
    reaching the JSON writers, a second writer of one folder named as this very process."""
    with pytest.raises(sam3cpp.InvalidArgumentError, match="hotstart_delay must be from 0 to 1000"):
        list(model.track([frame(0)], "car", hotstart_delay=10**6))
    with pytest.raises(sam3cpp.InvalidArgumentError, match="frame"):
        list(model.track([frame(0)], objects=[{"frame": 2**70, "points": [(1, 1)]}]))
    with pytest.raises(sam3cpp.InvalidArgumentError, match="fps"):
        list(model.track([frame(0)], "car", fps=float("nan"), out=tmp_path / "nan"))
    assert not (tmp_path / "nan").exists()
    run = model.track([frame(i) for i in range(8)], "car", out=tmp_path / "w", **SHORT)
    next(run)
    with pytest.raises(sam3cpp.OutputError) as second:
        list(model.track([frame(i) for i in range(8)], "car", out=tmp_path / "w", **SHORT))
    assert "this process" in str(second.value) and f"pid {os.getpid()}" not in str(second.value), str(second.value)
    run.close()
    assert list(model.track([frame(i) for i in range(8)], "car", out=tmp_path / "w", **SHORT)), "once closed, free again"


def test_track_pack_new_objects_is_a_bool_keyword(model):
    """pack_new_objects (docs/video.md, "Buckets"): the tracker option, True or False only; with a
    square entering on frame 3, packed or not, the same ids."""
    def entering(i):
        f = frame(i)
        if i >= 3:
            f[80:100, 40:60] = (0, 255, 0)
        return f
    runs = {pack: [r.ids.tolist() for r in model.track((entering(i) for i in range(10)), "car", pack_new_objects=pack, **SHORT)]
            for pack in (True, False)}
    assert runs[True] == runs[False]
    assert len(runs[True][-1]) == 3, runs[True]
    with pytest.raises(sam3cpp.InvalidArgumentError, match="pack_new_objects must be True or False"):
        list(model.track([frame(0)], "car", pack_new_objects=1))


def test_track_objects_refuse_unknown_keys_and_wrong_shapes(model):
    """Trial finding 6: an unknown key was ignored (SAM2's "labels" made a negative click
    positive; "label" passed; "point" was told "neither a positive point nor a box"), and a flat
    "points" raised pybind's TypeError. Each is refused naming the key (as the server's JSON
    prompts are) and the keys a tracked object takes, or the shape it must have."""
    known = '"frame", "points", "box"'
    for key, value, hint in [("labels", [1, 0], "(x, y, False) is a negative click"), ("label", "car", "object1, object2"),
                             ("point", [(10, 5)], '"points": [(x, y), ...]')]:
        obj = {"frame": 0, "points": [(119, 19), (50, 60)], key: value}
        if key == "point":
            del obj["points"]
        with pytest.raises(sam3cpp.InvalidArgumentError) as refused:
            list(model.track([frame(0)], objects=[obj]))
        message = str(refused.value)
        assert f"objects[0] has an unknown key '{key}'" in message and known in message and hint in message, message
    for obj, words in [({"frame": 0, "points": [160, 80]}, "objects[0]'s point 0 must be (x, y) or (x, y, positive)"),
                       ({"frame": 0, "points": 160}, "objects[0]'s \"points\" must be a list of points"),
                       ({"frame": 0, "points": "160,80"}, "objects[0]'s \"points\" must be a list of points"),
                       ({"frame": 0, "points": [(1, 2, 0)]}, "third item (positive) must be True or False"),
                       ({"frame": 0, "box": 5}, "objects[0]'s \"box\" must be (x0, y0, x1, y1)"),
                       ({"frame": 0, "box": (1, 2, 3)}, "objects[0]'s \"box\" must be (x0, y0, x1, y1)")]:
        with pytest.raises(sam3cpp.InvalidArgumentError) as refused:
            list(model.track([frame(0)], objects=[obj]))
        assert words in str(refused.value), str(refused.value)
    # The same objects, well formed, track (a numpy array of points too).
    results = list(model.track((frame(i) for i in range(3)), objects=[{"frame": 0, "points": np.array([[119.0, 19.0]])}],
                               **SHORT))
    assert [len(r.ids) for r in results] == [1, 1, 1]
