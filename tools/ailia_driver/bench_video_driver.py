#!/usr/bin/env python3
"""Times sam3's video tracker and ailia-models' own SAM 3.1 driver (video_tracking.Sam3Tracker,
its ONNX Runtime path, through this folder's `onnxruntime` module over sam3's ONNX Runtime) on the
same generated SAM-3.1-shaped bundle and the same frames, and prints one table side by side:
per-frame wall time, time by stage, peak resident memory, for 1, 4, 15, 16 and 32 objects
(docs/video.md, "sam3 and ailia's driver timed").

  bench_video_driver.py --ailia AILIA_MODELS_DIR --models BUNDLE_1008 --out DIR
      [--objects 1,4,16,32] [--frames 20] [--size 320] [--threads N] [--bench build/bin/sam3-bench-video]
      [--shim build/ailia-driver]

--models may also be the SAM 3.1-shaped bench bundle (tools/make_sam31_bench_bundle.py, real layer
structure and widths): then each frame costs what SAM 3.1's does. --threads N gives both runners N
intra-op threads (sam3-bench-video --threads, the shim's SAM3_ORT_THREADS); pin the whole run with
taskset for single-core figures.

The frames are sam3-bench-video's (--write-frames: squares of distinct colours drifting on grey,
one object each), written once as PNG folders and read by both. Each run is its own process,
so each peak is its own; both peaks are taken after the models are loaded (reset through
/proc/self/clear_refs), so they are the tracking's peak with the models in memory.

Stages: sam3's are its VideoTrackerStats (each includes its own host work: the encoder's
resize, the detector's NMS, ...); `other` is the rest of the frame (the PNG decode, rules).
The driver's are the time in each graph's run() (the shim keeps them per file name): encoder
(image_encoder), detector (grounding), tracker (memory_attention, tracking_mask_decoder,
obj_ptr_proj, obj_ptr_tpos_proj), memory (memory_encoder), new objects (prompt_encoder,
mask_decoder, interactive_obj_ptr_proj); `other` is the rest: its numpy host work and imread.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time

STAGES = {
    "encode": ["sam3.1_image_encoder.onnx", "sam3.1_image_encoder.opt.onnx"],
    "detect": ["sam3.1_grounding.onnx"],
    "track": ["sam3.1_memory_attention.onnx", "sam3.1_tracking_mask_decoder.onnx", "sam3.1_obj_ptr_proj.onnx",
              "sam3.1_obj_ptr_tpos_proj.onnx"],
    "memory": ["sam3.1_memory_encoder.onnx"],
    "new_objects": ["sam3.1_prompt_encoder.onnx", "sam3.1_mask_decoder.onnx", "sam3.1_interactive_obj_ptr_proj.onnx"],
}
DRIVER_MAX_OBJECTS = 16  # the driver's one bucket: MULTIPLEX_COUNT slots, new objects only while fewer


def peak_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def run_driver(args):
    """In a child process: the driver over one folder of frames, timed; a JSON line on stdout."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from compare_video_driver import load_driver
    tracker, sam, cv2, frames = load_driver(args.ailia, args.shim, args.models, args.frames_dir, args.prompt)
    import onnxruntime
    before = onnxruntime.sam3_run_times()  # loading runs nothing; kept in case a session warms up
    reset_peak()
    t0 = time.perf_counter()
    # As recognize_from_tracking: add_prompt on frame 0 (read as it reads it), then propagate_in_video.
    tracker.add_prompt(cv2.imread(frames[0]), sam.args.caption)
    yielded = sum(1 for _ in tracker.propagate_in_video(frames, start_frame=1))
    wall = time.perf_counter() - t0
    times = {f: (c - before.get(f, (0, 0.0))[0], s - before.get(f, (0, 0.0))[1]) for f, (c, s) in onnxruntime.sam3_run_times().items()}
    print(json.dumps({"frames": len(frames), "yielded": 1 + yielded, "wall_s": wall, "run_times": times,
                      "peak_mb": peak_mb(), "live": len(tracker.obj_ids)}))


def driver_row(args, folder):
    env = dict(os.environ)
    if args.threads:
        env["SAM3_ORT_THREADS"] = str(args.threads)
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--driver-only", "--ailia", os.path.abspath(args.ailia),
                          "--models", os.path.abspath(args.models), "--shim", os.path.abspath(args.shim),
                          "--frames-dir", os.path.abspath(folder), "--out", args.out, "--prompt", args.prompt],
                         stdout=subprocess.PIPE, text=True, env=env)
    if out.returncode != 0:  # e.g. killed by the kernel when its unfused attention outgrows the memory
        how = f"killed by signal {-out.returncode}" if out.returncode < 0 else f"exit status {out.returncode}"
        return {"failed": how + (" (SIGKILL: the kernel's out-of-memory killer, see dmesg)" if out.returncode == -9 else "")}
    r = json.loads(out.stdout.strip().splitlines()[-1])
    # Frames it processed: one encoder run each. The driver stops when it tracks nothing (with
    # 16 objects it runs no detector, so hot-start removes them all after 8 frames).
    n = max(1, sum(r["run_times"].get(f, (0, 0.0))[0] for f in STAGES["encode"]))
    row = {"frames": n, "ms_per_frame": 1000 * r["wall_s"] / n, "peak_mb": r["peak_mb"], "live": r["live"]}
    graphs = 0.0
    for stage, files in STAGES.items():
        s = sum(r["run_times"].get(f, (0, 0.0))[1] for f in files)
        row[stage] = 1000 * s / n
        graphs += s
    row["other"] = 1000 * (r["wall_s"] - graphs) / n
    row["calls"] = {f: c for f, (c, _) in r["run_times"].items()}
    return row


def sam3_row(args, objects):
    out = subprocess.run([args.bench, "--models", args.models, "--input", os.path.join(args.out, "frames"), "--objects",
                          str(objects), "--memory-objects", "0", "--json", "--threads", str(args.threads)], check=True, stdout=subprocess.PIPE, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    r["other"] = r["other"] + r.pop("output")  # output (masks at frame size, RLE) is host work the driver does in numpy too
    return r


def cpu():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown CPU"


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.path.join(here, "..", "..", "build")
    ap.add_argument("--ailia", required=True, help="an ailia-models checkout (its util/ and image_segmentation/)")
    ap.add_argument("--models", required=True, help="a bundle made by tools/make_video_models.py --size 1008")
    ap.add_argument("--out", required=True, help="a folder for the frames and the report (report.md)")
    ap.add_argument("--objects", default="1,4,15,16,32")
    ap.add_argument("--frames", type=int, default=20, help="frames per run")
    ap.add_argument("--size", type=int, default=320, help="frame width (height 3/4 of it)")
    ap.add_argument("--threads", type=int, default=0, help="intra-op threads of both runners (0: each one's default)")
    ap.add_argument("--prompt", default="car", help="the concept (the generated bundle finds its palette for \"car\"; sam3-bench-video tracks \"car\")")
    ap.add_argument("--bench", default=os.path.join(build, "bin", "sam3-bench-video"))
    ap.add_argument("--shim", default=os.path.join(build, "ailia-driver"), help="folder of the onnxruntime and ailia modules")
    ap.add_argument("--driver-only", action="store_true", help=argparse.SUPPRESS)  # the child process
    ap.add_argument("--frames-dir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.driver_only:
        run_driver(args)
        return 0
    counts = [int(n) for n in args.objects.split(",")]
    os.makedirs(args.out, exist_ok=True)
    frames_dir = os.path.join(args.out, "frames")
    subprocess.run([args.bench, "--write-frames", frames_dir, "--objects", args.objects, "--frames", str(args.frames),
                    "--size", str(args.size)], check=True)
    started, load_before = datetime.datetime.now(datetime.timezone.utc), loadavg()
    rows = []
    for n in counts:
        s = sam3_row(args, n)
        print(f"sam3, {n} objects: {s['ms_per_frame']:.0f} ms/frame", file=sys.stderr, flush=True)
        d = None
        if n <= DRIVER_MAX_OBJECTS:
            d = driver_row(args, os.path.join(frames_dir, f"objects-{n}"))
            print(f"driver, {n} objects: " + (d["failed"] if "failed" in d else f"{d['ms_per_frame']:.0f} ms/frame"),
                  file=sys.stderr, flush=True)
        rows.append((n, s, d))
    load_after = loadavg()
    cols = ["ms_per_frame", "encode", "detect", "track", "memory", "new_objects", "other"]
    lines = [f"# sam3 and ailia's driver, {args.frames} frames of {args.size}x{args.size * 3 // 4}, generated SAM-3.1-shaped "
             f"bundle ({args.models})", "",
             f"{started:%Y-%m-%d %H:%M} UTC; {cpu()}, {os.cpu_count()} cores; load average {load_before} before, "
             f"{load_after} after; threads: {args.threads or 'default'}", "",
             "| objects | runner | frames | ms/frame | encoder | detector | tracker | memory encoder | new objects | other | "
             "peak MB | objects at the end | buckets |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n, s, d in rows:
        lines.append(f"| {n} | sam3 | {s['frames']} | " + " | ".join(f"{s[c]:.0f}" for c in cols)
                     + f" | {s['peak_mb']:.0f} | {s['live']} | {s['buckets']} |")
        if d and "failed" in d:
            lines.append(f"| {n} | driver | | did not finish: {d['failed']} | | | | | | | | | |")
        elif d:
            lines.append(f"| {n} | driver | {d['frames']} | " + " | ".join(f"{d[c]:.0f}" for c in cols)
                         + f" | {d['peak_mb']:.0f} | {d['live']} | 1 |")
        else:
            lines.append(f"| {n} | driver | | not run: its one bucket holds {DRIVER_MAX_OBJECTS} objects (new objects only while "
                         f"fewer are tracked); more is sam3's second bucket | | | | | | | | | |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "rows.json"), "w") as f:
        json.dump([{"objects": n, "sam3": s, "driver": d} for n, s, d in rows], f, indent=1)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
