#!/usr/bin/env bash
# Side-by-side benchmark on SAM3-shaped models with random weights (the real shapes and the
# public files' uint8 quantization): sam3cpp against the model card's pipeline in Node.js
# (onnxruntime-node, same ONNX Runtime version), same files, same run, median of 3. sam3cpp runs
# once per kernel choice (--kernels ort,onednn-int8 by default: ONNX Runtime's int8 kernels, and
# the int8 products on oneDNN where the build and CPU have them), each a column.
#   scripts/bench.sh [--quick] [extra sam3-bench options]
# Full size needs about 1 GB of disk for the models and up to ~12 GB of memory; it takes
# 15-30 minutes on 2 cores. --quick uses fewer blocks (same shapes) and takes a few minutes.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
size=full
if [ "${1:-}" = "--quick" ]; then size=quick; shift; fi
"$here/scripts/build.sh" >/dev/null
models="$here/build/bench-models/$size"
# Regenerated whenever the generator changed (its hash is kept next to the models).
stamp=$(cat "$here/tools/make_bench_models.py" "$here/tools/onnx_graph.py" | sha256sum | cut -c1-16)
if [ "$(cat "$models/.generator" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$models"
  /usr/bin/python3 "$here/tools/make_bench_models.py" --out "$models" $([ "$size" = quick ] && echo --quick)
  echo "$stamp" > "$models/.generator"
fi
if [ ! -d "$here/tools/reference/node_modules/onnxruntime-node" ]; then
  (cd "$here/tools/reference" && npm ci --ignore-scripts --no-audit --no-fund --silent)
fi
"$here/build/bin/sam3-bench" --models "$models" --repeats 3 --reference --json "$here/build/bench-$size.json" "$@"
