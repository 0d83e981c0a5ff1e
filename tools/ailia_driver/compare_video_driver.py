#!/usr/bin/env python3
"""Runs ailia-models' own SAM 3.1 video driver (video_tracking.Sam3Tracker, from a checkout the
user names) and sam3's tracker on the same generated bundle and the same generated video, and
compares them frame by frame: objects matched by mask IoU, their ids, the frames on which each
appears and disappears, and the masks (IoU). See docs/video.md, "Compared with ailia's driver".

The driver runs unmodified, on ONNX Runtime through this folder's `onnxruntime` module (sam3's
own ONNX Runtime, built as build/ailia-driver/) and a CPU-only `ailia` stand-in. It reads the
SAM 3.1 shapes (1008-pixel input, 288-pixel masks, 72x72 features, 1152-pixel memory masks), so
the bundle must be generated at that size: tools/make_video_models.py --size 1008.

  compare_video_driver.py --ailia AILIA_MODELS_DIR --models BUNDLE_1008 --scene agree|differ|late
      --out DIR [--shim build/ailia-driver] [--sam3-python build/python] [--check]

Objects are named by the colour of their square. Every difference (an object shown by one and
not the other on some frames, different ids, mask IoU below --min-iou) is listed with the rule
that explains it, from the scene's `expected` table; --check exits with 1 when a difference is
not in that table or an expected one did not happen. The report goes to DIR/report.md and
stdout; both runs' results to DIR/driver.npz and DIR/sam3.npz.
"""
import argparse
import json
import os
import subprocess
import sys
import types

import numpy as np

WIDTH, HEIGHT = 320, 240

# Squares on grey, drawn in this order: rgb, frames it is shown on (first, last), top-left at its
# first frame, pixels per frame, side, and the leftmost x it moves to (it stops there).
def square(rgb, first, last, x0, y0, vx=0.0, vy=0.0, side=30, xmin=-1000):
    return dict(rgb=rgb, first=first, last=last, x0=x0, y0=y0, vx=vx, vy=vy, side=side, xmin=xmin)


SCENES = {
    # Every rule that the driver and sam3 apply alike: every object from frame 0, a text prompt,
    # all of them well inside the frame (no boundary suppression), fewer than 16, none crossing,
    # leaving or entering (no keep-alive, hot-start, confirmation or occlusion difference).
    "agree": {
        "frames": 24,
        "squares": [square((255, 0, 0), 0, 23, 40, 60, 3.0, 1.0, 36),
                    square((0, 0, 255), 0, 23, 220, 40, -2.0, 1.5, 32),
                    square((255, 255, 0), 0, 23, 120, 160, 1.5, -1.0, 30)],
        "expected": {},
    },
    # Nothing on frame 0: red enters at frame 3.
    "late": {
        "frames": 12,
        "squares": [square((255, 0, 0), 3, 11, 100, 80, 3.0, 1.0, 36)],
        "expected": {
            ("red", "only sam3 shows it", "3-11"):
                "nothing detected on frame 0: the driver's tracking stops after frame 0",
        },
    },
    # Where the rules differ (docs/video.md, "Which reference, where they differ"):
    # green enters at frame 6 and crosses red (both pack it into the bucket of frame 0's
    # objects; the confirmation differs); blue is gone on frames 8-19 and back at 20 (keep-alive
    # hides it in the driver until its credit is above 0 again), yellow moves to the left edge
    # and stays there from frame 16, where both drop its detections (keep-alive hides it in the
    # driver only); cyan sits on the edge from frame 0 (sam3 starts it on frame 0, where SAM 3.1
    # does not check the edge, so the later objects' ids are one higher; hot-start removes it
    # unshown).
    "differ": {
        "frames": 30,
        "squares": [square((255, 0, 0), 0, 29, 30, 90, 4.0, 0.5, 40),
                    square((0, 255, 0), 6, 29, 250, 100, -5.0, 0.0, 36),
                    square((0, 0, 255), 0, 7, 200, 20),
                    square((0, 0, 255), 20, 29, 200, 20),
                    square((255, 255, 0), 0, 29, 60, 170, -4.0, 0.0, 20, xmin=-6),
                    square((0, 255, 255), 0, 29, 0, 200, side=12)],
        # Each difference and the row of docs/video.md's table that explains it. (Until
        # 2026-12-07 the generated memory read an empty slot as half of every object, so the
        # driver lost green, which it packs into its one bucket, and filled that bucket with
        # objects started on green's detections: see docs/video.md.)
        "expected": {
            ("green", "only sam3 shows it", "6"):
                "confirmation: the driver's new objects start at 0 consecutive detections, SAM 3.1 counts "
                "the start frame as the first, so the driver confirms green, and shows it, one frame later",
            ("blue", "only sam3 shows it", "20-23"):
                "keep-alive: blue is gone on frames 8-19, so its credit falls to the minimum (-4); back on "
                "frame 20 it gains 1 a matched frame, and the driver hides it until the credit is above 0 "
                "(frame 24); SAM 3.1 hides nothing by it",
            ("yellow", "only sam3 shows it", "23-29"):
                "keep-alive: both drop yellow's detections once its centre is within 2.5% of the edge "
                "(frame 16 on), so its track goes unmatched; the driver hides it when its credit is spent, "
                "SAM 3.1 hides nothing by it (and hot-start removal is over: yellow started on frame 0)",
            ("red", "driver id 2, sam3 id 3", "0-29"):
                "frame 0 (no track yet): the driver drops the edge detection (cyan) on frame 0, SAM 3.1 "
                "checks no edge there and starts it as id 2 (never shown: its edge detections never match it, so it is "
                "never confirmed and hot-start removes it after 8 unmatched frames)",
            ("yellow", "driver id 3, sam3 id 4", "0-22"):
                "frame 0 (no track yet): as red, cyan took id 2",
            ("green", "driver id 4, sam3 id 5", "7-29"):
                "frame 0 (no track yet): as red, cyan took id 2",
        },
    },
}


def frame_image(scene, index):
    img = np.full((HEIGHT, WIDTH, 3), 128, np.uint8)
    for q in scene["squares"]:
        if q["first"] <= index <= q["last"]:
            t = index - q["first"]
            x, y, side = max(q["xmin"], int(q["x0"] + q["vx"] * t)), int(q["y0"] + q["vy"] * t), q["side"]
            img[max(0, y):max(0, y + side), max(0, x):max(0, x + side)] = q["rgb"]
    return img


def write_frames(scene, folder):
    from PIL import Image
    os.makedirs(folder, exist_ok=True)
    paths = []
    for i in range(scene["frames"]):
        p = os.path.join(folder, f"{i:05d}.png")
        Image.fromarray(frame_image(scene, i)).save(p)
        paths.append(p)
    return paths


def save_results(path, results):
    """results: {frame: [(id, score, box, mask)]} -> one npz."""
    arrays = {}
    for f, objs in results.items():
        arrays[f"ids_{f}"] = np.array([o[0] for o in objs], np.int64)
        arrays[f"scores_{f}"] = np.array([o[1] for o in objs], np.float32)
        arrays[f"masks_{f}"] = np.array([o[3] for o in objs], bool).reshape(len(objs), HEIGHT, WIDTH)
    np.savez_compressed(path, **arrays)


def load_results(path):
    data = np.load(path)
    frames = sorted({int(k.split("_")[1]) for k in data.files})
    return {f: {int(i): (float(s), m) for i, s, m in zip(data[f"ids_{f}"], data[f"scores_{f}"], data[f"masks_{f}"])}
            for f in frames}


def load_driver(ailia, shim, models_dir, frames_dir, prompt):
    """The driver's Sam3Tracker over the bundle, as its --tracking --onnx mode makes it; returns
    (tracker, the driver's module, cv2, the frames' paths). The driver parses its command line
    and reads npy/ and the vocabulary relative to the working directory, as when it is run from
    its own folder: call it in a child process. Also used by bench_video_driver.py."""
    sam_dir = os.path.join(os.path.abspath(ailia), "image_segmentation", "segment-anything-3.1")
    frames = sorted(os.path.join(frames_dir, f) for f in os.listdir(frames_dir) if f.endswith(".png"))
    sys.path[:0] = [os.path.abspath(shim), os.path.join(os.path.abspath(ailia), "util"), sam_dir]
    try:
        import ftfy  # noqa: F401
    except ImportError:
        # Debian 12 has no python3-ftfy; the tokenizer's fix_text leaves ASCII untouched.
        assert prompt.isascii(), "without ftfy only ASCII prompts tokenize as the driver would"
        sys.modules["ftfy"] = types.SimpleNamespace(fix_text=lambda text: text)
    os.chdir(models_dir)
    # --normal: the generated bundle has sam3.1_image_encoder.onnx, not the .opt variant.
    sys.argv = ["segment_anything_3_1.py", "--onnx", "--tracking", "--normal", "--video", frames_dir,
                "--caption", prompt]
    import onnxruntime
    import cv2
    import segment_anything_3_1 as sam
    import video_tracking as vt

    files = {"encoder": sam.WEIGHT_ENC_PATH if sam.args.normal else sam.WEIGHT_ENC_OPT_PATH,
             "grounder": sam.WEIGHT_GND_PATH, "prompt_enc": sam.WEIGHT_PE_PATH, "mask_dec": sam.WEIGHT_DEC_PATH,
             "track_dec": sam.WEIGHT_TDEC_PATH, "mem_enc": sam.WEIGHT_MENC_PATH, "mem_attn": sam.WEIGHT_MATTN_PATH,
             "obj_proj": sam.WEIGHT_PROJ_PATH, "iobj_proj": sam.WEIGHT_IPROJ_PATH, "tpos_proj": sam.WEIGHT_TPOS_PATH}
    # As main() builds them for --onnx (sessions kept instead of LazyModel's reloads: same results).
    models = {k: onnxruntime.InferenceSession(f, providers=["CPUExecutionProvider"]) for k, f in files.items()}
    no_obj_params = (np.load(sam.NO_OBJ_EMBED_PATH), np.load(sam.NO_OBJ_PTR_LINEAR_W_PATH), np.load(sam.NO_OBJ_PTR_LINEAR_B_PATH))
    tracker = vt.Sam3Tracker(models, np.load(sam.TPOS_ENC_PATH), no_obj_params, threshold=sam.args.threshold)
    return tracker, sam, cv2, frames


def run_driver(args):
    """In a child process: the driver over the scene's frames, its results saved."""
    tracker, sam, cv2, frames = load_driver(args.ailia, args.shim, args.models, args.frames, args.prompt)
    # As recognize_from_tracking: add_prompt on frame 0, then propagate_in_video from frame 1.
    scores0, boxes0, masks0 = tracker.add_prompt(cv2.imread(frames[0]), sam.args.caption)
    results = {}
    # add_prompt returns the objects whose mask is not empty, without their ids (the driver's own
    # display numbers them from 2); they are tracker.obj_ids when none was empty.
    if len(scores0) != len(tracker.obj_ids):
        raise SystemExit("compare_video_driver: an object of frame 0 has an empty mask; its id is unknown")
    ids0 = list(tracker.obj_ids)
    results[0] = [(i, float(s), b, m) for i, s, b, m in zip(ids0, scores0, boxes0, masks0)]
    trace = []  # the driver's objects after each frame it yields (its output runs 2 frames behind)
    for fi, scores, boxes, masks, ids in tracker.propagate_in_video(frames, start_frame=1):
        results[fi] = [(int(i), float(s), b, m) for i, s, b, m in zip(ids, scores, boxes, masks)]
        trace.append({"yielded": fi, "processed": tracker.current_frame, "ids": list(map(int, tracker.obj_ids)),
                      "keep_alive": list(map(int, tracker.keep_alive)), "confirmed": list(map(bool, tracker.confirmed)),
                      "unmatched": list(map(int, tracker.unmatch_total))})
    save_results(args.result, results)
    with open(os.path.splitext(args.result)[0] + "_trace.json", "w") as f:
        json.dump(trace, f, indent=0)


def run_sam3(args, frames_dir):
    sys.path.insert(0, os.path.abspath(args.sam3_python))
    import sam3cpp
    model = sam3cpp.Model(args.models)
    results = {}
    for r in model.track(frames_dir, args.prompt):
        results[r.index] = [(int(i), float(s), b, m) for i, s, b, m in zip(r.ids, r.scores, r.boxes, r.masks)]
    return results


def iou(a, b):
    union = np.logical_or(a, b).sum()
    return float(np.logical_and(a, b).sum() / union) if union else 1.0


def match_ids(driver, sam3):
    """One-to-one driver id -> sam3 id, by the number of frames on which their masks overlap
    (IoU >= 0.5), greedily from the pair that agrees on most frames."""
    votes = {}
    for f in driver.keys() & sam3.keys():
        for d, (_, dm) in driver[f].items():
            for s, (_, sm) in sam3[f].items():
                if iou(dm, sm) >= 0.5:
                    votes[(d, s)] = votes.get((d, s), 0) + 1
    pairs, used_d, used_s = {}, set(), set()
    for (d, s), _ in sorted(votes.items(), key=lambda kv: (-kv[1], kv[0])):
        if d not in used_d and s not in used_s:
            pairs[d] = s
            used_d.add(d)
            used_s.add(s)
    return pairs


COLOURS = {(255, 0, 0): "red", (0, 255, 0): "green", (0, 0, 255): "blue", (255, 255, 0): "yellow",
           (0, 255, 255): "cyan"}


def name_objects(results, scene):
    """Each id by the colour of the square most of its mask covers over the video."""
    counts = {}
    for f, objs in results.items():
        img = frame_image(scene, f)
        for i, (_, mask) in objs.items():
            px = img[mask]
            c = counts.setdefault(i, {})
            for rgb, name in COLOURS.items():
                c[name] = c.get(name, 0) + int(np.all(px == rgb, axis=1).sum())
    return {i: max(c, key=c.get) for i, c in counts.items()}


def shown(results, obj):
    return [f for f in sorted(results) if obj is not None and obj in results[f]]


def compare(driver, sam3, scene, min_iou):
    """-> (summary table lines, per-frame table lines, differences as (object, what, frames))."""
    pairs = match_ids(driver, sam3)
    inverse = {s: d for d, s in pairs.items()}
    d_names, s_names = name_objects(driver, scene), name_objects(sam3, scene)
    objects = [(d, pairs.get(d)) for d in sorted(d_names)] + [(None, s) for s in sorted(s_names) if s not in inverse]
    summary = ["| object | driver id | sam3 id | driver shows it on | sam3 shows it on | lowest mask IoU where both do |",
               "|---|---:|---:|---|---|---:|"]
    differences = []
    for d, s in objects:
        name = d_names[d] if d is not None else s_names[s]
        fd, fs = shown(driver, d), shown(sam3, s)
        both = [f for f in fd if f in fs]
        ious = {f: iou(driver[f][d][1], sam3[f][s][1]) for f in both}
        worst = min(ious.values(), default=float("nan"))
        summary.append(f"| {name} | {d if d is not None else '-'} | {s if s is not None else '-'} | {ranges(fd)} | "
                       f"{ranges(fs)} | {worst:.3f} |")
        for what, frames in (("only the driver shows it", [f for f in fd if f not in fs]),
                             ("only sam3 shows it", [f for f in fs if f not in fd]),
                             (f"mask IoU below {min_iou}", [f for f in both if ious[f] < min_iou])):
            if frames:
                differences.append((name, what, ranges(frames)))
        if d is not None and s is not None and d != s:
            differences.append((name, f"driver id {d}, sam3 id {s}", ranges(both)))
    lines = ["| frame | driver | sam3 | mask IoU |", "|---:|---|---|---|"]
    for f in sorted(driver.keys() | sam3.keys()):
        d_objs, s_objs = driver.get(f, {}), sam3.get(f, {})
        ious = [f"{d_names[d]} {iou(d_objs[d][1], s_objs[pairs[d]][1]):.3f}" for d in sorted(d_objs)
                if pairs.get(d) in s_objs]
        lines.append(f"| {f} | {', '.join(f'{d_names[d]} {d}' for d in sorted(d_objs))} | "
                     f"{', '.join(f'{s_names[s]} {s}' for s in sorted(s_objs))} | {', '.join(ious)} |")
    return summary, lines, differences


def ranges(frames):
    out, start = [], None
    for i, f in enumerate(frames):
        if start is None:
            start = f
        if i + 1 == len(frames) or frames[i + 1] != f + 1:
            out.append(f"{start}" if start == f else f"{start}-{f}")
            start = None
    return ", ".join(out) if out else "never"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.path.join(here, "..", "..", "build")
    ap.add_argument("--ailia", required=True, help="an ailia-models checkout (its util/ and image_segmentation/)")
    ap.add_argument("--models", required=True, help="a bundle made by tools/make_video_models.py --size 1008")
    ap.add_argument("--scene", choices=sorted(SCENES), default="agree")
    ap.add_argument("--out", required=True)
    ap.add_argument("--prompt", default="car")
    ap.add_argument("--shim", default=os.path.join(build, "ailia-driver"), help="folder of the onnxruntime and ailia modules")
    ap.add_argument("--sam3-python", default=os.path.join(build, "python"), help="folder of the sam3cpp module")
    ap.add_argument("--min-iou", type=float, default=0.9)
    ap.add_argument("--check", action="store_true", help="exit 1 unless the differences are exactly the scene's expected ones")
    ap.add_argument("--reuse", action="store_true", help="compare the results already in --out again")
    ap.add_argument("--driver-only", action="store_true", help=argparse.SUPPRESS)  # the child process
    ap.add_argument("--frames", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.models = os.path.abspath(args.models)
    if args.driver_only:
        run_driver(args)
        return 0
    for name, path in (("--ailia", os.path.join(args.ailia, "image_segmentation", "segment-anything-3.1", "video_tracking.py")),
                       ("--models", os.path.join(args.models, "sam3.1_memory_attention.onnx")),
                       ("--shim", os.path.join(args.shim, "ailia.py"))):
        if not os.path.exists(path):
            print(f"compare_video_driver: {name}: {path} is missing", file=sys.stderr)
            return 2
    os.makedirs(args.out, exist_ok=True)
    scene = SCENES[args.scene]
    frames_dir = os.path.join(os.path.abspath(args.out), "frames")
    write_frames(scene, frames_dir)
    driver_file = os.path.join(os.path.abspath(args.out), "driver.npz")
    sam3_file = os.path.join(os.path.abspath(args.out), "sam3.npz")
    if not (args.reuse and os.path.exists(driver_file)):
        subprocess.run([sys.executable, os.path.abspath(__file__), "--driver-only", "--ailia", os.path.abspath(args.ailia),
                        "--models", args.models, "--shim", os.path.abspath(args.shim), "--out", args.out,
                        "--frames", frames_dir, "--result", driver_file, "--prompt", args.prompt], check=True)
    if not (args.reuse and os.path.exists(sam3_file)):
        save_results(sam3_file, run_sam3(args, frames_dir))
    driver, sam3 = load_results(driver_file), load_results(sam3_file)
    summary, lines, differences = compare(driver, sam3, scene, args.min_iou)
    expected = scene["expected"]
    unexplained = [d for d in differences if d not in expected]
    missing = [d for d in expected if d not in differences]
    report = [f"# ailia's driver and sam3 on scene '{args.scene}' ({scene['frames']} frames, {WIDTH}x{HEIGHT}, "
              f"prompt '{args.prompt}')", "", "Objects (named by their square's colour; driver and sam3 objects "
              "matched by mask IoU >= 0.5):", "", *summary, "", "Differences:", ""]
    report += [f"- {name}: {what}: frames {frames} ({expected.get((name, what, frames), 'NOT EXPLAINED')})"
               for name, what, frames in differences] or ["- none"]
    report += [f"- expected but not found: {name}: {what}: frames {frames}" for name, what, frames in missing]
    report += ["", "Per frame (object colour and id):", "", *lines]
    text = "\n".join(report) + "\n"
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump({"differences": differences, "unexplained": unexplained, "missing": missing}, f, indent=1)
    print(text)
    if args.check and (unexplained or missing):
        print(f"compare_video_driver: scene {args.scene}: {len(unexplained)} differences not explained by a "
              f"documented rule, {len(missing)} expected ones not found", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
