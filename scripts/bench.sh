#!/usr/bin/env bash
# Side-by-side benchmark on SAM3-shaped models with random weights (the real shapes and the
# public files' uint8 quantization): sam3cpp against the model card's pipeline in Node.js
# (onnxruntime-node, same ONNX Runtime version), same files, same run, median of 3. sam3cpp runs
# once per kernel choice, each a column (--kernels ort,onednn-int8,onednn-int8+bf16 by default:
# ONNX Runtime's int8 kernels; the large int8 products on oneDNN where the build and CPU have
# them; and that with precision "fast", attention and large float products in bf16 on oneDNN
# where the CPU has bf16 instructions), with each choice's masks and scores against the first's.
# --growth 1,5,20 adds the time to the end of the 1st, 5th and 20th prompt (prompts cycled).
#   scripts/bench.sh [--quick] [extra sam3-bench options]
#   scripts/bench.sh [--quick] --clicks [extra sam3-bench-clicks options]
# --clicks: the interactive model instead (tools/make_bench_tracker.py: the same vision trunk,
# SAM2's decoder at its size): click latency on an encoded image (median of 20 clicks) and
# "segment everything" on one 1280x960 image, beside transformers.js's pipeline on
# onnxruntime-node (tools/reference/clicks_reference.mjs).
# Full size needs about 1 GB of disk for the models and up to ~12 GB of memory; it takes
# 15-30 minutes on 2 cores. --quick uses fewer blocks (same shapes) and takes a few minutes.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
size=full
if [ "${1:-}" = "--quick" ]; then size=quick; shift; fi
clicks=
if [ "${1:-}" = "--clicks" ]; then clicks=1; shift; fi
"$here/scripts/build.sh" >/dev/null
if [ -n "$clicks" ]; then
  generator="$here/tools/make_bench_tracker.py"
  models="$here/build/bench-models/$size-tracker"
else
  generator="$here/tools/make_bench_models.py"
  models="$here/build/bench-models/$size"
fi
# Regenerated whenever the generator changed (its hash is kept next to the models).
stamp=$(cat "$generator" "$here/tools/make_bench_models.py" "$here/tools/onnx_graph.py" | sha256sum | cut -c1-16)
if [ "$(cat "$models/.generator" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$models"
  /usr/bin/python3 "$generator" --out "$models" $([ "$size" = quick ] && echo --quick)
  echo "$stamp" > "$models/.generator"
fi
if [ ! -d "$here/tools/reference/node_modules/onnxruntime-node" ]; then
  (cd "$here/tools/reference" && npm ci --ignore-scripts --no-audit --no-fund --silent)
fi
if [ -n "$clicks" ]; then
  "$here/build/bin/sam3-bench-clicks" --models "$models" --repeats 3 --reference --json "$here/build/bench-$size-clicks.json" "$@"
else
  "$here/build/bin/sam3-bench" --models "$models" --repeats 3 --reference --json "$here/build/bench-$size.json" "$@"
fi
