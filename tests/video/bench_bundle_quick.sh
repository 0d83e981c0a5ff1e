#!/usr/bin/env bash
# Quick mode of the SAM 3.1-shaped bench (docs/video.md, "At SAM 3.1's real size"): `sam3 track`
# and `sam3-bench-video` each run a few frames on the quick bench bundle, and
# `sam3-bench-video-graphs` times each graph once at the steady-state shapes, so that the benches
# and the bundle keep working; no timing is checked.
#   bench_bundle_quick.sh SAM3_CLI SAM3_BENCH_VIDEO BUNDLE_DIR [SAM3_BENCH_VIDEO_GRAPHS]
set -euo pipefail
cli=$1 bench=$2 bundle=$3 graphs=${4:-}
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
if [[ -n $graphs ]]; then
  "$graphs" --models "$bundle" --memory-frames 1,7 --threads 2 | tee "$tmp/graphs.txt"
  # every graph timed; the memory attention with its self- and cross-attention fused (quick: one layer)
  for g in image_encoder grounding tracking_mask_decoder memory_encoder obj_ptr_proj obj_ptr_tpos_proj; do
    grep -q "^| $g |" "$tmp/graphs.txt" || { echo "no row for $g" >&2; exit 1; }
  done
  [[ $(grep -c '^| memory_attention | .* | 2 | ' "$tmp/graphs.txt") == 2 ]] || { echo "memory attention rows missing or not fused" >&2; exit 1; }
fi
