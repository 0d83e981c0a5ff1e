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

    def track(self, frames, text=None, *, objects=(), fps: float = 0.0, every: int = 1, **options):
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
        max_objects, recondition_every, fill_hole_area."""
        texts = [text] if isinstance(text, str) else list(text or [])
        if isinstance(frames, (str, os.PathLike)):
            source = _native.open_frame_source(os.fspath(frames), every=every, fps=fps)  # errors before the tracker loads
            tracker = _native.VideoTracker(self, texts, list(objects), **options)
            for frame in source:
                yield from tracker.push_frame(frame)
        else:
            if every < 1:
                raise InvalidArgumentError(f"every must be at least 1, got {every}")
            tracker = _native.VideoTracker(self, texts, list(objects), **options)
            for index, frame in enumerate(frames):
                if index % every == 0:
                    yield from tracker.push(frame, index, index / fps if fps > 0 else float(index))
        yield from tracker.finish()


def read_video(path, *, every: int = 1, fps: float = 0.0, start: int = 0):
    """The frames of a video file (FFmpeg) or a folder of images (natural order), one at a time:
    VideoFrame objects with index (in the source, before the stride), time (seconds) and image
    (numpy uint8 H x W x 3). The iterator's `info` has name, width, height, fps, frame_count."""
    return _native.open_frame_source(os.fspath(path), every=every, fps=fps, start=start)


def tokenize(text: str) -> dict:
    """The 32 token ids and attention mask SAM3's text encoder receives for `text`."""
    return _native.tokenize(text, _vocabulary())


def label(inputs, prompts, out, *, model: Model, formats: str = "coco", threshold: float = 0.5, progress=None) -> dict:
    """Batch-labels images (files, folders, list files) into `out` as `sam3 label` does: one category per
    prompt, formats "coco,yolo,masks,geojson", resumable. progress(dict) is called as images finish;
    an exception raised in it stops the run after the image in flight and is raised again."""
    return _native.label([os.fspath(i) for i in inputs], list(prompts), os.fspath(out), model=model, formats=formats,
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
    return _native.label_map([os.fspath(r) for r in rasters], list(prompts), os.fspath(out), model=model,
                             formats=formats, threshold=threshold, tile=tile, overlap=overlap, bands=list(bands),
                             scale=kind, low=low, high=high, gsd=gsd, t_srs=t_srs, raster_out=raster_out,
                             allow_network=allow_network, progress=progress)


def pull(name: str | None = None, progress=None) -> Path:
    """Downloads a registry model (default: the default model) and returns its folder; resumable and
    verified like `sam3 models pull`. progress(dict) gets file, done, total, bytes_per_second."""
    return Path(_native.pull(name, progress))
