#!/usr/bin/env bash
# Compares sam3's video tracker with ailia-models' own SAM 3.1 driver (video_tracking.py) on a
# generated bundle of SAM 3.1's shapes and three generated videos (docs/video.md, "Compared with
# ailia's driver"):
#   agree:  every documented rule difference avoided; fails unless ids, frames and masks agree.
#   differ: the rule differences triggered; fails unless each difference is an expected one.
#   late:   nothing on frame 0 (the driver stops there); likewise.
#
#   scripts/compare_video_driver.sh AILIA_MODELS_DIR [OUT_DIR] [BUILD_DIR]
#
# AILIA_MODELS_DIR is a checkout of github.com/ailia-ai/ailia-models (its util/ and
# image_segmentation/segment-anything-3.1/ are used; nothing is downloaded). BUILD_DIR (build)
# must hold the built sam3cpp Python module and the ailia-driver shim (pybind11 builds both).
# Needs Debian's python3 with numpy, PIL, onnx, cv2 (python3-opencv), tqdm and regex.
# Exit: 0 as expected, 1 a difference no documented rule explains, 2 bad arguments, 77 nothing to compare with.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
ailia=${1:-${SAM3_AILIA_MODELS:-}}
out=${2:-}
build=${3:-$here/build}
if [[ -z $ailia ]]; then
  echo "compare_video_driver: no ailia-models checkout given (argument or SAM3_AILIA_MODELS): skipped" >&2
  exit 77
fi
if [[ ! -f $ailia/image_segmentation/segment-anything-3.1/video_tracking.py ]]; then
  echo "compare_video_driver: $ailia has no image_segmentation/segment-anything-3.1/video_tracking.py" >&2
  exit 2
fi
python=/usr/bin/python3
for module in numpy PIL onnx cv2 tqdm regex; do
  if ! $python -c "import $module" 2>/dev/null; then
    echo "compare_video_driver: $python lacks $module (apt-get install python3-opencv python3-tqdm python3-regex)" >&2
    exit 2
  fi
done
cleanup=
if [[ -z $out ]]; then
  out=$(mktemp -d)
  cleanup=$out
fi
trap 'if [[ -n $cleanup ]]; then rm -rf "$cleanup"; fi' EXIT
$python "$here/tools/make_video_models.py" --out "$out/models" --size 1008
run() {
  $python "$here/tools/ailia_driver/compare_video_driver.py" --ailia "$ailia" --models "$out/models" \
    --shim "$build/ailia-driver" --sam3-python "$build/python" --out "$out/$1" --scene "$@"
}
run agree --check
run differ --check
run late --check
