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
    available_providers,
    usable_providers,
    decode_rle,
    encode_rle,
    onnxruntime_version,
)
from . import _native

__all__ = [
    "Model", "Embedding", "Result", "Instance", "Box", "tokenize", "encode_rle", "decode_rle", "label", "pull",
    "Error", "InvalidArgumentError", "InvalidTextError", "ImageUnreadableError", "ImageUnsupportedError",
    "ImageCorruptError", "ImageTooLargeError", "ModelNotFoundError", "ModelMismatchError", "TokenizerError",
    "RuntimeFailure", "OutputError", "NetworkError", "CancelledError", "onnxruntime_version", "available_providers", "usable_providers",
]


def _vocabulary() -> Path:
    """CLIP's BPE vocabulary shipped in the package (for model folders without a tokenizer file)."""
    return Path(__file__).parent / "data" / "clip" / "bpe_simple_vocab_16e6.txt.gz"


class Model(_native.Model):
    """A SAM3 ONNX model folder (either public layout), loaded once; share it between threads."""

    def __init__(self, path: str | os.PathLike, *, threads: int = 0, providers=None) -> None:
        """providers: execution providers as a fallback order, e.g. ["cuda", "cpu"], "auto" or
        [("cuda", {"device_id": 1})]; None runs on the CPU (see sam3cpp.available_providers())."""
        super().__init__(os.fspath(path), threads=threads, vocabulary=_vocabulary(), providers=providers)

    @classmethod
    def from_registry(cls, name: str | None = None, *, threads: int = 0, providers=None) -> "Model":
        """A model of the registry that is already downloaded (never downloads: see sam3cpp.pull)."""
        return cls(_native.registry_path(name), threads=threads, providers=providers)


def tokenize(text: str) -> dict:
    """The 32 token ids and attention mask SAM3's text encoder receives for `text`."""
    return _native.tokenize(text, _vocabulary())


def label(inputs, prompts, out, *, model: Model, formats: str = "coco", threshold: float = 0.5, progress=None) -> dict:
    """Batch-labels images (files, folders, list files) into `out` as `sam3 label` does: one category per
    prompt, formats "coco,yolo,masks,geojson", resumable. progress(dict) is called as images finish;
    an exception raised in it stops the run after the image in flight and is raised again."""
    return _native.label([os.fspath(i) for i in inputs], list(prompts), os.fspath(out), model=model, formats=formats,
                         threshold=threshold, progress=progress)


def pull(name: str | None = None, progress=None) -> Path:
    """Downloads a registry model (default: the default model) and returns its folder; resumable and
    verified like `sam3 models pull`. progress(dict) gets file, done, total, bytes_per_second."""
    return Path(_native.pull(name, progress))
