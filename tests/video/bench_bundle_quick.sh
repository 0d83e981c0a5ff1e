#!/usr/bin/env bash
# Quick mode of the SAM 3.1-shaped bench (docs/video.md, "At SAM 3.1's real size"): `sam3 track`
# and `sam3-bench-video` each run a few frames on the quick bench bundle, so that the bench and
# the bundle keep working; no timing is checked.
#   bench_bundle_quick.sh SAM3_CLI SAM3_BENCH_VIDEO BUNDLE_DIR
set -euo pipefail
cli=$1 bench=$2 bundle=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bench" --write-frames "$tmp/frames" --objects 2 --frames 3 --size 320
"$cli" track "$tmp/frames/objects-2" --models "$bundle" --prompt car --out "$tmp/out" --threads 2 --format json
python3 - "$tmp/out/tracks.json" <<'PY'
import json, sys
tracks = json.load(open(sys.argv[1]))
assert len(tracks["frames"]) == 3, tracks["frames"]
print("sam3 track: 3 frames,", sum(len(f["objects"]) for f in tracks["frames"]), "objects shown")
PY
"$bench" --models "$bundle" --objects 2 --frames 3 --memory-objects 0 --size 320 --threads 2 | tee "$tmp/bench.txt"
grep -q '^| 2 | 3.1 | 3 |' "$tmp/bench.txt"
