#!/usr/bin/env bash
# Quick start: sets up, builds, then segments the example picture with the default model
# (downloaded on first use into ~/.cache/sam3cpp/models; see README "Models").
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/build.sh"
"$here/build/bin/sam3" segment --image "$here/examples/street.png" \
  --prompt "yellow school bus" --prompt car --prompt road --out "$here/out/example" "$@"
echo "overlays: $here/out/example/street/*/overlay.jpg"
