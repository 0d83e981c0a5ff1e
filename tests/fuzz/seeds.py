#!/usr/bin/env python3
"""Seed inputs for the fuzz targets of the labeling-tool protocols, ONNX files and zip archives
(make_seeds.cpp writes the image and /v1/segment seeds).

  seeds.py label_config_fuzz|protocol_request_fuzz|onnx_wire_fuzz|zip_archive_fuzz|output_manifest_fuzz|
           shard_records_fuzz|video_resume_fuzz|cvat_tracker_state_fuzz DIR
"""
import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile

CONFIG = """<View>
  <Image name="image" value="$image" zoom="true"/>
  <BrushLabels name="mask" toName="image">
    <Label value="Car" predicted_values="car, automobile"/><Label value="Tree"/>
  </BrushLabels>
  <PolygonLabels name="outline" toName="image"><Label value="Car"/></PolygonLabels>
  <RectangleLabels name="box" toName="image"><Label value="Person"/></RectangleLabels>
  <KeyPointLabels name="click" toName="image"><Label value="Car"/></KeyPointLabels>
  <TextArea name="prompt" toName="image"/>
</View>"""

CONFIGS = [
    CONFIG,
    '<View><Image name="i" value="$img"/><PolygonLabels name="p" toName="i"><Label value="a"/></PolygonLabels></View>',
    '<View><Image name="i" value="img"/><BrushLabels name="b" toName="i"/></View>',
    '<?xml version="1.0"?><!DOCTYPE v [<!ENTITY e "x">]><View><Image name="i" value="$a&e;"/></View>',
    "<View><View><Image name='i' value='$x'/></View><brushlabels name='b' toName='i'><Label value=','/></brushlabels></View>",
]

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"


def protocol_requests():
    """The first byte picks the route (0 /v1/predict, 1 /setup, 2 /predict), the rest is the body."""
    x_any = [
        {"model": "segment_anything_3", "image": PNG, "params": {"text_prompt": "car, tree. dog", "conf_threshold": 0.3}},
        {"model": "segment_anything_3", "image": "data:image/png;base64," + PNG,
         "params": {"marks": [{"type": "rectangle", "data": [1, 2, 30, 40], "label": 1},
                              {"type": "rectangle", "data": [5, 5, 9, 9], "label": 0}], "epsilon_factor": 0.01}},
        {"model": "other", "image": PNG},
        {"model": "segment_anything_3", "image": PNG, "params": {"iou_threshold": 2, "marks": [{"type": "point", "data": [1, 2]}]}},
        {"model": "segment_anything_3_clicks", "image": PNG,
         "params": {"marks": [{"type": "point", "data": [0.5, 0.5], "label": 1}, {"type": "point", "data": ["x", 2], "label": 0},
                              {"type": "rectangle", "data": [0, 0, 1, 1], "label": 1}]}},
    ]
    setup = [
        {"project": "1.1700000000", "schema": CONFIG, "hostname": "http://localhost:8080", "access_token": "abc",
         "model_version": "x"},
        {"schema": "<View/>"},
    ]
    context = {"result": [
        {"from_name": "prompt", "to_name": "image", "type": "textarea", "value": {"text": ["red car"]}},
        {"from_name": "box", "to_name": "image", "type": "rectanglelabels", "is_positive": True,
         "value": {"x": 10, "y": 20, "width": 30, "height": 40, "rectanglelabels": ["Car"]}},
        {"from_name": "click", "to_name": "image", "type": "keypointlabels",
         "value": {"x": 50, "y": 50, "keypointlabels": ["Car"]}}]}
    clicks = {"result": [
        {"original_width": 1, "original_height": 1, "type": "keypointlabels", "is_positive": False,
         "value": {"x": 50, "y": "50", "width": 0.3, "keypointlabels": ["Car"]}},
        {"type": "keypointlabels", "is_positive": 1, "value": {"x": 150, "y": 20}},
        {"type": "rectanglelabels", "value": {"x": 0, "y": 0, "width": 100, "height": 100}}]}
    predict = [
        {"tasks": [{"id": 8, "data": {"image": "data:image/png;base64," + PNG}}], "label_config": CONFIG,
         "params": {"context": clicks}},
        {"tasks": [{"id": 1, "data": {"image": "/data/upload/1/a.png"}}], "label_config": CONFIG,
         "project": "1.17", "params": {"login": None, "password": None, "context": None}},
        {"tasks": [{"id": 7, "data": {"image": "data:image/png;base64," + PNG}}], "label_config": CONFIG,
         "params": {"context": context}},
        {"tasks": [{"id": 2, "data": {"img": "s3://bucket/a.jpg"}}, {"data": {}}], "label_config": CONFIGS[1]},
    ]
    for route, bodies in enumerate((x_any, setup, predict)):
        for body in bodies:
            yield bytes([route]) + json.dumps(body).encode()
    # Regressions: fields of the wrong JSON type were a 500 (an exception out of json::value).
    yield b'\x00{"model": 1, "image": "' + PNG.encode() + b'"}'
    yield b'\x00{"model": "segment_anything_3", "image": "' + PNG.encode() + b'", "params": {"marks": [{"type": 1, "data": [1, 2, 3, 4]}]}}'
    yield b"\x00[1, 2, 3]"
    yield b'\x02{"tasks": "no"}'


def onnx_models(out):
    """The attention test graphs, and a MatMulInteger graph as quantize_dynamic writes one."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    here = os.path.dirname(os.path.abspath(__file__))
    tools = os.path.join(here, "..", "..", "tools")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(tools, "make_attention_models.py"), "--out", tmp], check=True)
        for name in sorted(os.listdir(tmp)):
            path = os.path.join(tmp, name)
            if name.endswith(".onnx") and os.path.getsize(path) <= 65536:
                with open(path, "rb") as f, open(os.path.join(out, name), "wb") as g:
                    g.write(f.read())
    w = numpy_helper.from_array(np.arange(12, dtype=np.uint8).reshape(3, 4), "w")
    zp = numpy_helper.from_array(np.array(128, dtype=np.uint8), "w_zp")
    node = helper.make_node("MatMulInteger", ["x", "w", "", "w_zp"], ["y"], name="mm")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.INT32, [2, 4])], [w, zp])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with open(os.path.join(out, "matmulinteger.onnx"), "wb") as f:
        f.write(model.SerializeToString())


def zips():
    """Stored and deflated entries, folders, an empty file, a comment, zip64 extras."""
    def archive(entries, **kw):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", **kw) as z:
            for name, data, method in entries:
                z.writestr(zipfile.ZipInfo(name) if method is None else name, data,
                           compress_type=method if method is not None else zipfile.ZIP_STORED)
        return buf.getvalue()
    yield archive([("model/decoder.onnx", b"\x08\x07" + bytes(200), zipfile.ZIP_DEFLATED),
                   ("model/tokenizer.json", b'{"model": {}}', zipfile.ZIP_STORED)])
    yield archive([("a/", b"", None), ("a/empty", b"", zipfile.ZIP_STORED), ("../up.onnx", b"\x08", zipfile.ZIP_DEFLATED)])
    yield archive([("zeros.bin", bytes(100000), zipfile.ZIP_DEFLATED)])
    big = io.BytesIO()
    with zipfile.ZipFile(big, "w", allowZip64=True) as z:
        with z.open("forced64.bin", "w", force_zip64=True) as f:
            f.write(b"x" * 1000)
        z.comment = b"a comment"
    yield big.getvalue()


def output_manifests():
    """First byte even: .sam3-outputs.json; odd: a crashed update's journal.json."""
    manifests = [
        {"written_by": "sam3", "entries": ["coco", "masks"], "contents": {"coco": ["annotations.json"], "masks": ["a.png"]}},
        {"written_by": "sam3", "entries": ["coco", "notes.txt", "../outside.txt"], "contents": {"coco": []}},
        {"entries": "coco", "contents": ["coco"]},
    ]
    journals = [{"entries": ["coco"], "retired": ["masks"]}, {"entries": ["notes.txt", "coco-user", ".."], "retired": ["/"]}]
    yield from (b"\x00" + json.dumps(m).encode() for m in manifests)
    yield from (b"\x01" + json.dumps(j).encode() for j in journals)


def shard_records():
    """First byte % 5: 0 an item record, 1 config.json, 2 inputs.json, 3 a map shard, 4 a map tile."""
    inst = {"category": 1, "score": 0.5, "box": [0, 0, 2, 2], "crop": [0, 0, 2, 2], "counts": "04"}
    item = {"name": "a.png", "path": "/x/a.png", "width": 4, "height": 3, "config": "h",
            "source": {"size": 10, "mtime_ns": 5, "hash": "ab"}, "instances": [inst]}
    config = {"hash": "h", "categories": [{"name": "car"}, {"name": "tree"}], "outputs": {"formats": 1}}
    shard = {"sam3_map_shard": 2, "raster": "/x/map.tif", "size": [64, 48], "shard": 0, "shards": 2, "settings": "s",
             "categories": ["car", "tree"], "grid": [64, 48, 32, 4], "tiles_skipped": 0, "area_km2": 0.5, "extra": {},
             "instances": [dict(inst, tile=1)]}
    tile = {"settings": "settings", "nodata": False, "area_km2": 0.1, "instances": [inst]}
    for which, doc in [(0, item), (1, config), (2, ["a.png"]), (3, shard), (4, tile)]:
        yield bytes([which]) + json.dumps(doc).encode()


def video_resumes():
    """First byte % 3: 0 a merge patch of progress.json, 1 a whole progress.json, 2 the record's last line."""
    yield b"\x00" + json.dumps({"committed_frames": 2, "last_index": 7}).encode()
    yield b"\x00" + json.dumps({"max_id": 4294967296, "frame_count": "x"}).encode()
    yield b"\x01" + json.dumps({"version": 1, "committed_frames": 3, "sinks": {"json": {"bytes": 5}}}).encode()
    line = {"index": 2, "time_s": 0.08, "objects": [{"id": 1, "score": 0.9, "prompt": 0, "box": [2, 2, 6, 8],
                                                      "mask": {"size": [16, 24], "counts": "P11"}}]}
    yield b"\x02" + json.dumps(line).encode()


def cvat_tracker_states():
    yield json.dumps({"shapes": [[10, 10, 50, 40]], "states": [None]}).encode()
    yield json.dumps({"shapes": [[10, 10, 50, 40], [1e300, 0, -5, 9]],
                      "states": [{"session": "0123", "object": 4294967295}, {"session": "x", "object": -1}]}).encode()


def main():
    target, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    if target == "onnx_wire_fuzz":
        onnx_models(out)
        return
    seeds = {"label_config_fuzz": (c.encode() for c in CONFIGS), "protocol_request_fuzz": protocol_requests(),
             "zip_archive_fuzz": zips(), "output_manifest_fuzz": output_manifests(), "shard_records_fuzz": shard_records(),
             "video_resume_fuzz": video_resumes(), "cvat_tracker_state_fuzz": cvat_tracker_states()}[target]
    for i, seed in enumerate(seeds):
        with open(os.path.join(out, f"seed{i}"), "wb") as f:
            f.write(seed)


if __name__ == "__main__":
    main()
