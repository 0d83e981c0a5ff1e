"""sam3cpp: find every instance of a text prompt in an image with Meta's SAM3, on ONNX Runtime.

    import sam3cpp
    model = sam3cpp.Model("models/sam3-v2-int8")       # or sam3cpp.Model.from_registry()
    embedding = model.encode("street.jpg")             # a path, numpy uint8 array or PIL.Image
    for result in model.segment_many(embedding, ["car", "person"]):
        print(result.text, result.scores, result.boxes.shape, result.masks.shape)

Encoding and segmenting release the GIL, and a Model may be shared by threads. Errors are
sam3cpp.Error subclasses carrying the library's one-line message.
"""
from __future__ import annotations

import collections
import json
import math
import os
from pathlib import Path

from ._native import (  # noqa: F401  (re-exported)
    Box,
    Embedding,
    Error,
    ImageCorruptError,
    ImageTooLargeError,
    ImageUnreadableError,
    ImageUnsupportedError,
    Instance,
    InvalidArgumentError,
    InvalidTextError,
    ModelMismatchError,
    ModelNotFoundError,
    NetworkError,
    CancelledError,
    OutputError,
    Result,
    RuntimeFailure,
    TokenizerError,
    VideoFrame,
    VideoFrameResult,
    available_providers,
    usable_providers,
    decode_rle,
    encode_rle,
    onnxruntime_version,
    __version__,
)
from . import _native

__all__ = [
    "Model", "Embedding", "Result", "Instance", "Box", "tokenize", "encode_rle", "decode_rle", "label", "label_map", "pull",
    "read_video", "VideoFrame", "VideoFrameResult",
    "Error", "InvalidArgumentError", "InvalidTextError", "ImageUnreadableError", "ImageUnsupportedError",
    "ImageCorruptError", "ImageTooLargeError", "ModelNotFoundError", "ModelMismatchError", "TokenizerError",
    "RuntimeFailure", "OutputError", "NetworkError", "CancelledError", "__version__", "onnxruntime_version", "available_providers", "usable_providers",
]


def _vocabulary() -> Path:
    """CLIP's BPE vocabulary shipped in the package (for model folders without a tokenizer file)."""
    return Path(__file__).parent / "data" / "clip" / "bpe_simple_vocab_16e6.txt.gz"


class Model(_native.Model):
    """A SAM3 ONNX model folder (either public layout), loaded once; share it between threads."""

    def __init__(self, path: str | os.PathLike, *, threads: int = 0, providers=None, precision: str = "exact") -> None:
        """providers: execution providers as a fallback order, e.g. ["cuda", "cpu"], "auto" or
        [("cuda", {"device_id": 1})]; None runs on the CPU (see sam3cpp.available_providers()).
        precision: "exact", or "fast": attention and large float products in bf16 on oneDNN where
        the CPU has bf16 instructions (masks may differ slightly; see docs/performance.md)."""
        super().__init__(os.fspath(path), threads=threads, vocabulary=_vocabulary(), providers=providers,
                         precision=precision)

    @classmethod
    def from_registry(cls, name: str | None = None, *, threads: int = 0, providers=None,
                      precision: str = "exact") -> "Model":
        """A model of the registry that is already downloaded (never downloads: see sam3cpp.pull)."""
        return cls(_native.registry_path(name), threads=threads, providers=providers, precision=precision)

    def track(self, frames, text=None, *, objects=(), fps: float = 0.0, every: int = 1, out=None,
              formats=("json", "davis"), overlay_encoder: str = "auto", checkpoint_every: int = 25, restart: bool = False,
              **options):
        """Tracks through a video (SAM 3.1's bundle, docs/video.md), yielding one
        VideoFrameResult per frame in order (ids, prompts, scores, boxes N x 4, masks N x H x W),
        `hotstart_delay` frames behind the frames consumed. frames: a video file or a folder of
        images (a path: decoded one frame at a time, as `sam3 track` reads it; fps: the folder's
        rate, default 25), or any iterable of images (numpy uint8 HxWx3, paths, PIL images),
        indexed from 0 (time = index / fps, or the index without fps). every: keep the frames
        whose index is a multiple of it (indices stay the source's). text: a word or a list of
        words (each object's `prompt` is its index). objects: dicts {"frame": i, "points": [(x,
        y) or (x, y, positive)], "box": (x0, y0, x1, y1)} in frame pixels (prompt = len(texts) +
        position). options: detection_threshold, new_object_threshold, hotstart_delay,
        hotstart_unmatched, hotstart_duplicate, confirmation_detections, boundary_margin,
        max_objects, recondition_every, fill_hole_area, pack_new_objects (True: later objects join
        free slots of an existing bucket, as SAM 3.1).

        out: a folder to write the results into as `sam3 track --out` does, in `formats` (any of
        "json", "davis", "mots", "overlay"; overlay_encoder "auto", "h264", "mpeg4" or "png"),
        atomically (the files appear when the video is done) and resumably: a run interrupted
        (an exception, Ctrl-C, a killed process) continues from its last checkpoint when run
        again with the same settings (restart=True starts over). The results are yielded too."""
        texts = [text] if isinstance(text, str) else list(text or [])
        objects = list(objects)
        try:
            rate = float(fps)
        except (TypeError, ValueError):
            rate = math.nan
        if isinstance(fps, bool) or not math.isfinite(rate) or rate < 0:
            raise InvalidArgumentError(f"fps must be a finite number from 0 (0: 25 for a folder, none for frames), got {fps!r}")
        fps = rate
        if out is not None:
            yield from self._track_into(frames, texts, objects, fps, every, out, formats, overlay_encoder,
                                        checkpoint_every, restart, options)
            return
        if isinstance(frames, (str, os.PathLike)):
            source = _native.open_frame_source(os.fspath(frames), every=every, fps=fps)  # errors before the tracker loads
            tracker = _native.VideoTracker(self, texts, objects, **options)
            _check_prompt_frames(frames, source.info, every, objects)
            for frame in source:
                yield from tracker.push_frame(frame)
        else:
            if every < 1:
                raise InvalidArgumentError(f"every must be at least 1, got {every}")
            tracker = _native.VideoTracker(self, texts, objects, **options)
            for index, frame in enumerate(frames):
                if index % every == 0:
                    yield from tracker.push(frame, index, index / fps if fps > 0 else float(index))
        yield from tracker.finish()

    def _track_into(self, frames, texts, objects, fps, every, out, formats, overlay_encoder, checkpoint_every, restart,
                    options):
        """track(out=...): sam3 track's loop (apps/cli/track_video.cpp) over sam3cpp's sources,
        tracker and outputs (sam3/video_outputs.h)."""
        if isinstance(formats, str):
            formats = formats.split(",")
        if every < 1:
            raise InvalidArgumentError(f"every must be at least 1, got {every}")
        tracker = _native.VideoTracker(self, texts, objects, **options)  # bad prompts fail before `out` is touched
        labels = texts + [f"object{i + 1}" for i in range(len(objects))]
        model = {"directory": str(self.directory), "generation": self.generation}
        # What the results depend on: a run with other settings in the same folder starts over.
        settings = {"model": model, "prompts": {"texts": texts, "objects": [_plain(o) for o in objects]},
                    "every": every, "fps": fps, "options": {k: options[k] for k in sorted(options)}}
        path = isinstance(frames, (str, os.PathLike))
        source_json = "null"  # frames from an iterable: only their size identifies them
        if path:
            source = _native.open_frame_source(os.fspath(frames), every=every, fps=fps)
            info = source.info
            pending = iter(())
            _check_prompt_frames(frames, info, every, objects)
            source_json = _native.video_source_identity(os.fspath(frames))
        else:
            numbered = ((i, f) for i, f in enumerate(frames) if i % every == 0)
            first = next(numbered, None)
            if first is None:
                raise InvalidArgumentError("no frames: the iterable of frames is empty")
            first_frame = _native.make_frame(first[1], first[0], first[0] / fps if fps > 0 else float(first[0]))
            height, width = first_frame.image.shape[:2]
            info = {"name": "frames", "width": width, "height": height, "fps": fps, "frame_count": 0}
            pending = iter([first_frame])
        formats = list(formats)
        hold = "overlay" in formats  # the only output that needs the frames' pixels
        tracker.check_prompt_places(info["width"], info["height"])  # before the writer touches a partial run
        _native.check_video_tracking_memory(info["name"], info["width"], info["height"],
                                            options.get("hotstart_delay", 15), hold)
        writer = _native.VideoOutputs(os.fspath(out), name=info["name"], width=info["width"], height=info["height"],
                                      fps=info["fps"], frame_count=info["frame_count"],
                                      frame_count_exact=info.get("frame_count_exact", False), formats=list(formats),
                                      labels=labels, model_json=json.dumps(model),
                                      settings_json=json.dumps(settings, sort_keys=True),
                                      checkpoint_every=checkpoint_every, resume=not restart,
                                      overlay_encoder=overlay_encoder, source_json=source_json)
        if writer.resume_point()["complete"]:  # every frame was written (and yielded) by an earlier call
            writer.finish()
            return
        start = writer.resume_point()["restart_index"] if writer.resume_point()["committed_frames"] > 0 else 0
        start = min([start] + [int(o["frame"]) for o in objects])  # the tracker needs each click's frame
        if path:
            if start > 0:
                source = _native.open_frame_source(os.fspath(frames), every=every, fps=fps, start=start)
            feed = iter(source)
        else:
            def iterable_frames():
                yield from pending
                for index, image in numbered:
                    yield _native.make_frame(image, index, index / fps if fps > 0 else float(index))
            feed = (f for f in iterable_frames() if f.index >= start)
        # Frames whose results are still delayed, held only when the overlay needs their pixels.
        # What is yielded is what is written: the ids carried over from an interrupted run, and
        # not the frames that run had written (and yielded) already.
        held = collections.deque()

        def deliver(results):
            for r in results:
                frame = None
                if hold:
                    while held and held[0].index < r.index:
                        held.popleft()
                    frame = held.popleft()
                written = writer.write(frame, r)
                if written is not None:
                    yield written
        for frame in feed:
            if hold:
                held.append(frame)
            yield from deliver(tracker.push_frame(frame))
        yield from deliver(tracker.finish())
        writer.finish()


def _check_prompt_frames(frames, info, every, objects):
    """A click on a frame past a folder's last frame or a file's declared end, refused before tracking (sam3 track's check)."""
    _native.check_prompt_frames(os.fspath(frames), info["name"], info["frame_count"], info.get("frame_count_exact", False), every,
                                [o["frame"] for o in objects if isinstance(o, dict) and isinstance(o.get("frame"), int)])


def _plain(obj):
    """An object prompt as JSON (tuples and numpy numbers to lists and floats)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, (bool, int, str)) or obj is None:
        return obj
    return float(obj)


def read_video(path, *, every: int = 1, fps: float = 0.0, start: int = 0):
    """The frames of a video file (FFmpeg) or a folder of images (natural order), one at a time:
    VideoFrame objects with index (in the source, before the stride), time (seconds) and image
    (numpy uint8 H x W x 3). The iterator's `info` has name, width, height, fps, frame_count."""
    return _native.open_frame_source(os.fspath(path), every=every, fps=fps, start=start)


def tokenize(text: str) -> dict:
    """The 32 token ids and attention mask SAM3's text encoder receives for `text`, and `tokens`: how many
    the whole text needs (over 32, the ids hold its first 32, as SAM3 cuts it)."""
    return _native.tokenize(text, _vocabulary())


def _paths(given) -> list:
    """One path (str or os.PathLike) or a sequence of them: a str is one path, never its letters."""
    if isinstance(given, (str, bytes)) or hasattr(given, "__fspath__"):
        return [os.fspath(given)]
    return [os.fspath(g) for g in given]


def _texts(given) -> list:
    """One prompt or a sequence of them: "car" is the prompt car, never c, a and r."""
    if isinstance(given, str):
        return [given]
    texts = list(given)
    for t in texts:
        if not isinstance(t, str):
            raise InvalidArgumentError(f"prompts must be a str or a list of str, got {t!r} in the list")
    return texts


def label(inputs, prompts, out, *, model: Model, formats: str = "coco", threshold: float = 0.5, progress=None) -> dict:
    """Batch-labels images (files, folders, list files) into `out` as `sam3 label` does: one category per
    prompt, formats "coco,yolo,masks,geojson", resumable. progress(dict) is called as images finish;
    an exception raised in it stops the run after the image in flight and is raised again."""
    return _native.label(_paths(inputs), _texts(prompts), os.fspath(out), model=model, formats=formats,
                         threshold=threshold, progress=progress)


def label_map(rasters, prompts, out, *, model: Model, formats: str = "gpkg", threshold: float = 0.5, tile: int = 0,
              overlap: int = 0, bands=(), scale="auto", gsd: float = 0.0, t_srs: str = "", raster_out: str = "",
              allow_network: bool = False, progress=None) -> dict:
    """Labels georeferenced rasters of any size into `out` as `sam3 label RASTER --format gpkg` does:
    tile by tile, seams merged, resumable; formats "gpkg,fgb,shp,geojson", raster_out a class GeoTIFF
    name. scale: "auto", "minmax", ("percentile", low, high) or (min, max). progress(dict) gets
    raster, tiles_done, tiles_total, area_km2; an exception raised in it stops the run after the tile
    in flight (kept for a rerun) and is raised again."""
    kind, low, high = "auto", 2.0, 98.0
    if isinstance(scale, str):
        kind = scale
    elif len(scale) == 3 and scale[0] == "percentile":
        kind, low, high = "percentile", float(scale[1]), float(scale[2])
    elif len(scale) == 2:
        kind, low, high = "fixed", float(scale[0]), float(scale[1])
    else:
        raise InvalidArgumentError(f"scale must be 'auto', 'minmax', ('percentile', low, high) or (min, max), got {scale!r}")
    return _native.label_map(_paths(rasters), _texts(prompts), os.fspath(out), model=model,
                             formats=formats, threshold=threshold, tile=tile, overlap=overlap, bands=list(bands),
                             scale=kind, low=low, high=high, gsd=gsd, t_srs=t_srs, raster_out=raster_out,
                             allow_network=allow_network, progress=progress)


def pull(name: str | None = None, progress=None) -> Path:
    """Downloads a registry model (default: the default model) and returns its folder; resumable and
    verified like `sam3 models pull`. progress(dict) gets file, done, total, bytes_per_second."""
    return Path(_native.pull(name, progress))
