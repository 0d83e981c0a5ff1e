#!/usr/bin/env bash
# Times sam3's video tracker and ailia-models' own SAM 3.1 driver (video_tracking.py, its ONNX
# Runtime path) side by side on the same generated bundle of SAM 3.1's shapes and the same
# generated frames: per-frame wall time, time by stage, peak resident memory, for 1, 4, 15, 16 and
# 32 objects (the driver holds at most 16). docs/video.md, "sam3 and ailia's driver timed".
#
#   scripts/bench_video_driver.sh AILIA_MODELS_DIR [OUT_DIR] [BUILD_DIR] [-- bench_video_driver.py options]
#
# AILIA_MODELS_DIR is a checkout of github.com/ailia-ai/ailia-models (nothing is downloaded).
# BUILD_DIR (build) must hold bin/sam3-bench-video and the ailia-driver shim (pybind11).
# Prints the table and writes OUT_DIR/report.md (OUT_DIR: a temporary folder, removed, if not given).
# With `-- --models DIR` (e.g. the SAM 3.1-shaped bench bundle) that bundle is timed instead of
# the behaviour-only one generated here.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
ailia=${SAM3_AILIA_MODELS:-} out= build=$here/build
for var in ailia out build; do  # the positional arguments, up to a "--"
  if [[ $# -gt 0 && $1 != -- ]]; then printf -v "$var" '%s' "$1"; shift; fi
done
if [[ ${1:-} == -- ]]; then shift; fi
if [[ -z $ailia || ! -f $ailia/image_segmentation/segment-anything-3.1/video_tracking.py ]]; then
  echo "bench_video_driver: give an ailia-models checkout (with image_segmentation/segment-anything-3.1/video_tracking.py)" >&2
  exit 2
fi
for need in "$build/bin/sam3-bench-video" "$build/ailia-driver/ailia.py"; do
  [[ -e $need ]] || { echo "bench_video_driver: $need is missing (cmake --build $build --target sam3_bench_video sam3_ailia_shim)" >&2; exit 2; }
done
python=/usr/bin/python3
cleanup=
if [[ -z $out ]]; then
  out=$(mktemp -d)
  cleanup=$out
fi
trap 'if [[ -n $cleanup ]]; then rm -rf "$cleanup"; fi' EXIT
models=()
if [[ " $* " != *" --models "* ]]; then  # no bundle given: the behaviour-only one at 1008 pixels
  $python "$here/tools/make_video_models.py" --out "$out/models" --size 1008
  models=(--models "$out/models")
fi
$python "$here/tools/ailia_driver/bench_video_driver.py" --ailia "$ailia" "${models[@]}" --out "$out" \
  --bench "$build/bin/sam3-bench-video" --shim "$build/ailia-driver" "$@"
