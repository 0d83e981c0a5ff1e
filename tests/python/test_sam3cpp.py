"""The Python module as a user calls it, on the generated test models (see tools/make_test_models.py:
the decoder finds the prompt's colour per image quadrant)."""
import json
import os
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import sam3cpp

MODELS = Path(os.environ["SAM3_TEST_MODELS"])
CLI = os.environ["SAM3_CLI"]


def scene() -> np.ndarray:
    """400x240 RGB: a red block in the top-left quadrant, a blue one in the bottom-right."""
    im = np.zeros((240, 400, 3), np.uint8)
    im[20:100, 40:160] = (255, 0, 0)
    im[140:220, 240:380] = (0, 0, 255)
    return im


def rle_decode(counts: str, h: int, w: int) -> np.ndarray:
    """pycocotools' compressed RLE string to a mask, written independently of sam3cpp."""
    runs, i = [], 0
    while i < len(counts):
        x, k, more = 0, 0, True
        while more:
            c = ord(counts[i]) - 48
            x |= (c & 0x1F) << (5 * k)
            more = bool(c & 0x20)
            i, k = i + 1, k + 1
            if not more and (c & 0x10):
                x |= -1 << (5 * k)
        if len(runs) > 2:
            x += runs[-2]
        runs.append(x)
    flat, value = [], 0
    for r in runs:
        flat += [value] * r
        value ^= 1
    return np.array(flat, bool).reshape(w, h).T  # column-major


@pytest.fixture(scope="module")
def model():
    return sam3cpp.Model(MODELS / "usls")


@pytest.fixture()
def scene_png(tmp_path):
    path = tmp_path / "scene.png"
    Image.fromarray(scene()).save(path)
    return path


def test_numpy_pil_and_path_give_the_masks_the_cli_gives(model, scene_png):
    cli = json.loads(subprocess.run([CLI, "segment", "--models", str(MODELS / "usls"), "-i", str(scene_png), "-p", "red",
                                     "--json"], check=True, capture_output=True, text=True).stdout)
    want = cli["images"][0]["prompts"][0]["instances"]
    assert len(want) >= 1
    for image in (scene(), Image.open(scene_png), scene_png, str(scene_png)):
        result = model.segment(model.encode(image), "red")
        assert len(result) == len(want)
        for inst, w in zip(result.instances, want):
            expected = rle_decode(w["mask"]["counts"], *w["mask"]["size"])
            assert inst.mask.dtype == np.bool_ and inst.mask.shape == (240, 400)
            assert np.array_equal(inst.mask, expected)
            assert inst.score == pytest.approx(w["score"], abs=1e-4)
            assert list(inst.box) == pytest.approx(w["box"], abs=1e-3)
    best = model.segment(scene(), "red").instances[0]
    assert best.mask[20:100, 40:160].mean() > 0.8 and best.mask[140:, 200:].sum() == 0  # where the red block is


def test_array_views_are_ready_for_numpy(model):
    r = model.segment(model.encode(scene()), "blue")
    assert r.masks.shape == (len(r), 240, 400) and r.masks.dtype == np.bool_
    assert r.boxes.shape == (len(r), 4) and r.boxes.dtype == np.float32
    assert r.scores.shape == (len(r),) and np.all(np.diff(r.scores) <= 0), "best first"
    x0, y0, x1, y1 = r.boxes[0]
    assert 200 <= x0 < x1 <= 400 and 120 <= y0 < y1 <= 240
    assert r.instances[0].area == int(r.masks[0].sum())


def test_gray_and_rgba_arrays(model):
    rgba = np.dstack([scene(), np.full((240, 400), 255, np.uint8)])
    assert len(model.segment(rgba, "red")) == len(model.segment(scene(), "red"))
    gray = scene()[:, :, 0].copy()
    assert model.encode(gray).width == 400
    with pytest.raises(sam3cpp.InvalidArgumentError, match="uint8"):
        model.encode(scene().astype(np.float32))
    with pytest.raises(sam3cpp.InvalidArgumentError, match="HxW"):
        model.encode(np.zeros((4, 4, 2), np.uint8))


def test_boxes_positive_and_negative(model):
    e = model.encode(scene())
    by_box = model.segment(e, boxes=[(40, 20, 160, 100)])
    assert len(by_box) >= 1 and by_box.instances[0].mask[20:100, 40:160].mean() > 0.8
    both = model.segment(e, "red", boxes=[(40, 20, 160, 100, True), (240, 140, 380, 220, "neg")])
    assert len(both) >= 1
    with pytest.raises(sam3cpp.InvalidArgumentError):
        model.segment(e, "red", boxes=[(0, 0, 900, 10)])


def test_several_prompts_on_one_encode(model):
    e = model.encode(scene())
    results = model.segment_many(e, ["red", {"text": "blue"}, {"boxes": [(40, 20, 160, 100)]}])
    assert [r.text for r in results] == ["red", "blue", ""]
    assert all(len(r) >= 1 for r in results)
    assert results[0].instances[0].mask[20:100, 40:160].mean() > 0.8
    assert results[1].instances[0].mask[140:220, 240:380].mean() > 0.8


def test_threads_segment_at_once_while_python_keeps_running(model):
    e = model.encode(np.ascontiguousarray(np.kron(scene(), np.ones((4, 4, 1), np.uint8))))  # 1600x960: slow masks
    done = threading.Event()
    ticks = [0]
    answers = []

    def python_work():
        while not done.is_set():
            ticks[0] += 1

    def segmenting():
        for _ in range(5):
            answers.append(len(model.segment(e, "red")))

    ticker = threading.Thread(target=python_work)
    ticker.start()
    workers = [threading.Thread(target=segmenting) for _ in range(2)]
    t0 = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - t0
    done.set()
    ticker.join()
    assert len(answers) == 10 and len(set(answers)) == 1, "both threads get the same answer"
    # With the GIL held by the segmenting threads the ticker would barely run.
    assert ticks[0] > 1000 * max(elapsed, 0.01), (ticks[0], elapsed)


def test_precision_fast_gives_the_exact_masks(model):
    fast = sam3cpp.Model(MODELS / "usls", precision="fast")
    assert model.bf16_nodes == 0
    assert fast.bf16_nodes >= 0  # 0 where the CPU has no bf16 instructions: the exact path
    for text in ("red", "blue"):
        a, b = model.segment(scene(), text), fast.segment(scene(), text)
        assert len(a.instances) == len(b.instances) > 0
        for x, y in zip(a.instances, b.instances):
            assert abs(x.score - y.score) <= 0.01
            assert (x.mask & y.mask).sum() >= 0.99 * (x.mask | y.mask).sum()
    with pytest.raises(sam3cpp.InvalidArgumentError, match="precision"):
        sam3cpp.Model(MODELS / "usls", precision="fastest")


def test_every_error_is_a_typed_python_exception(model, tmp_path):
    for name in ("InvalidArgumentError", "InvalidTextError", "ImageUnreadableError", "ImageUnsupportedError",
                 "ImageCorruptError", "ImageTooLargeError", "ModelNotFoundError", "ModelMismatchError", "TokenizerError",
                 "RuntimeFailure", "OutputError", "NetworkError"):
        assert issubclass(getattr(sam3cpp, name), sam3cpp.Error)
    (tmp_path / "notes.txt").write_text("not an image")
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 30)
    cases = [
        (sam3cpp.ImageUnreadableError, "no such file", lambda: model.encode(tmp_path / "missing.png")),
        (sam3cpp.ImageUnsupportedError, "unrecognised", lambda: model.encode(tmp_path / "notes.txt")),
        (sam3cpp.ImageCorruptError, "bad.png", lambda: model.encode(tmp_path / "bad.png")),
        (sam3cpp.ImageTooLargeError, "over the limit", lambda: model.encode(scene(), max_pixels=100)),
        (sam3cpp.InvalidArgumentError, "threshold", lambda: model.segment(scene(), "red", threshold=float("nan"))),
        (sam3cpp.InvalidArgumentError, "empty prompt", lambda: model.segment(scene())),
        (sam3cpp.ModelNotFoundError, "does not exist", lambda: sam3cpp.Model(tmp_path / "nothing")),
        (sam3cpp.ImageUnreadableError, "is a directory", lambda: model.encode(tmp_path)),
    ]
    for cls, text, call in cases:
        with pytest.raises(cls, match=text) as info:
            call()
        assert info.value.code == cls.code
    broken = tmp_path / "broken-model"
    broken.mkdir()
    for f in ("vision-encoder.onnx", "text-encoder.onnx", "decoder.onnx"):
        (broken / f).write_bytes(b"broken")
    with pytest.raises(sam3cpp.Error):
        sam3cpp.Model(broken)


def test_errors_name_pythons_arguments_not_the_clis_flags(model, tmp_path):
    """A new user's trial: sam3cpp.Model(missing) said "pass --models DIR", a flag Python has not."""
    (tmp_path / "file.onnx").write_bytes(b"not a folder")
    (tmp_path / "in").mkdir()
    Image.fromarray(scene()).save(tmp_path / "in" / "scene.png")
    calls = [
        lambda: sam3cpp.Model(tmp_path / "nothing"),
        lambda: sam3cpp.Model(tmp_path / "file.onnx"),
        lambda: sam3cpp.label(tmp_path / "in", [], tmp_path / "out", model=model),
        lambda: sam3cpp.label(tmp_path / "in", "red", tmp_path / "out", model=model, formats=""),
    ]
    for call in calls:
        with pytest.raises(sam3cpp.Error) as info:
            call()
        assert "--" not in str(info.value), str(info.value)


def test_rle_round_trips_and_reads_pycocotools_dicts():
    rng = np.random.default_rng(1)
    for shape in ((1, 1), (7, 3), (240, 400)):
        mask = rng.random(shape) > 0.6
        rle = sam3cpp.encode_rle(mask)
        assert tuple(rle["size"]) == shape
        assert np.array_equal(sam3cpp.decode_rle(rle), mask)
        assert np.array_equal(rle_decode(rle["counts"], *shape), mask), "the counts are pycocotools' format"
        as_bytes = {"size": list(shape), "counts": rle["counts"].encode()}  # as pycocotools returns them
        assert np.array_equal(sam3cpp.decode_rle(as_bytes), mask)
    with pytest.raises(sam3cpp.InvalidArgumentError):
        sam3cpp.decode_rle({"size": [2, 2], "counts": "!!!"})


def test_tokenize_is_what_the_text_encoder_gets():
    t = sam3cpp.tokenize("yellow school bus")
    assert t["ids"][:5] == [49406, 4481, 1228, 2840, 49407] and len(t["ids"]) == 32
    assert t["mask"][:5] == [1, 1, 1, 1, 1] and t["mask"][5] == 0


def test_label_a_folder_with_progress(model, tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    for i in range(3):
        Image.fromarray(np.roll(scene(), i, axis=1)).save(images / f"img{i}.png")
    seen = []
    summary = sam3cpp.label([images], ["red", "blue"], tmp_path / "out", model=model, formats="coco,yolo",
                            progress=seen.append)
    assert summary["processed"] == 3 and summary["failed"] == 0
    coco = json.loads((tmp_path / "out" / "coco.json").read_text())
    assert len(coco["images"]) == 3 and [c["name"] for c in coco["categories"]] == ["red", "blue"]
    assert seen and seen[-1]["done"] == 3
    again = sam3cpp.label([images], ["red", "blue"], tmp_path / "out", model=model)
    assert again["skipped"] == 3, "resumable"

    def stop(progress):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        sam3cpp.label([images], ["car"], tmp_path / "out2", model=model, progress=stop)


def test_one_prompt_and_one_input_are_not_taken_letter_by_letter(model, tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    Image.fromarray(scene()).save(images / "img.png")
    summary = sam3cpp.label(str(images), "red", tmp_path / "out", model=model)
    assert summary["processed"] == 1
    coco = json.loads((tmp_path / "out" / "coco.json").read_text())
    assert [c["name"] for c in coco["categories"]] == ["red"], "a str prompt was split into its letters"
    with pytest.raises(sam3cpp.InvalidArgumentError, match="prompts must be a str or a list of str"):
        sam3cpp.label(images, ["red", 3], tmp_path / "out2", model=model)


def test_registry_models_are_never_downloaded_unasked(tmp_path, monkeypatch):
    monkeypatch.setenv("SAM3_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # the discard port: nothing listens
    with pytest.raises(sam3cpp.ModelNotFoundError, match="sam3cpp.pull"):
        sam3cpp.Model.from_registry()
    with pytest.raises(sam3cpp.NetworkError, match="cannot reach"):
        sam3cpp.pull()


def test_every_generation_loads_and_says_what_it_is():
    for folder, generation, size in [("usls-504x896", "usls", (896, 504)), ("osam", "osam", (252, 252)),
                                     ("usls-v1", "usls v1 (separate geometry encoder)", (224, 224)),
                                     ("geti", "geti-instant-learn", (224, 224)),
                                     ("efficientsam3", "EfficientSAM3", (224, 224)),
                                     ("sam3.1-ailia", "sam3.1 (ailia)", (224, 224))]:
        m = sam3cpp.Model(MODELS / folder)
        assert m.generation == generation
        assert (m.input_width, m.input_height) == size
        image = np.zeros((240, 400, 3), np.uint8)
        image[20:100, 40:160] = (255, 0, 0)
        result = m.segment(image, "red")
        assert len(result.instances) == 1, folder


def test_providers_cpu_and_auto_segment_and_missing_ones_are_refused(model):
    available = sam3cpp.available_providers()
    usable = sam3cpp.usable_providers()  # a listed provider may lack its library
    assert available[-1] == "cpu" and usable[-1] == "cpu" and set(usable) <= set(available)
    want = model.segment(scene(), "red")
    assert model.providers == ["cpu"]
    for providers in (["cpu"], "auto", [("cpu", {})], ["cuda", "cpu"] if "cuda" not in usable else ["cpu"]):
        m = sam3cpp.Model(MODELS / "usls", providers=providers)
        assert m.providers[-1] == "cpu"
        got = m.segment(scene(), "red")
        assert len(got) == len(want)
        assert np.array_equal(got.instances[0].mask, want.instances[0].mask)
    for name in ("cuda", "tensorrt", "openvino", "coreml", "dml"):
        if name in usable:
            continue
        for providers in ([name], [(name, {"device_id": 0})] if name in ("cuda", "tensorrt", "dml") else name):
            with pytest.raises(sam3cpp.RuntimeFailure, match=f"^execution provider '{name}' is (not in|listed by) the loaded"):
                sam3cpp.Model(MODELS / "usls", providers=providers)
    for providers, text in ((["gpu"], "unknown execution provider 'gpu'"), ([("cuda", {"device_id": -1})], "device_id must be"),
                            ([("cuda", {"devcie_id": 1})], "does not take the option 'devcie_id'"), ([3], "providers is a list"),
                            (["cpu", "cuda"], "put cpu last")):
        with pytest.raises(sam3cpp.InvalidArgumentError, match=text):
            sam3cpp.Model(MODELS / "usls", providers=providers)


def test_ctrl_c_stops_an_encode_inside_its_run():
    import signal
    import threading
    import time
    # usls-slow's encoder runs about a minute; SIGINT a second in must end it at once.
    slow = sam3cpp.Model(MODELS / "usls-slow", threads=1)
    image = np.zeros((64, 64, 3), np.uint8)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            slow.encode(image)
    finally:
        timer.cancel()
    assert time.monotonic() - start < 10, "Ctrl-C waited for the encode to end"


def test_efficientsam3_drops_what_repeats_across_the_prompts_of_one_image():
    # The PyTorch EfficientSAM3's post-processing: an instance overlapping a better one of any
    # prompt by more than half is dropped (the second "red" here); other families keep it.
    for folder, repeated in [("efficientsam3", 0), ("geti", 1)]:
        m = sam3cpp.Model(MODELS / folder)
        results = m.segment_many(m.encode(scene()), ["red", "blue", "red"])
        assert [len(r) for r in results] == [1, 1, repeated], folder


def test_one_version_everywhere():
    # CMakeLists.txt's project() version is the only source: the module, the CLI and the wheel.
    cmake = (Path(__file__).resolve().parents[2] / "CMakeLists.txt").read_text()
    declared = cmake.split("project(sam3cpp VERSION ", 1)[1].split()[0]
    cli = subprocess.run([CLI, "--version"], capture_output=True, text=True, check=True).stdout
    assert sam3cpp.__version__ == declared
    assert cli.startswith(f"sam3cpp {declared} "), cli
