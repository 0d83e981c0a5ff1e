#!/usr/bin/env bash
# Short, bounded load test of `sam3 serve` on loopback: starts the server on a free port,
# uploads one image, sends prompt requests against the cached embedding, prints req/s and
# latency percentiles, stops the server.
#   scripts/load-test.sh [MODEL_DIR] [IMAGE] [REQUESTS] [CONCURRENCY]
# Defaults: the generated test models (build/test-models/usls), examples/street.png, 200, 4.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
models=${1:-$here/build/test-models/usls}
image=${2:-$here/examples/street.png}
requests=${3:-200}
concurrency=${4:-4}
[ -d "$models" ] || { echo "load-test: no models at $models (run scripts/test.sh once to generate the test models)" >&2; exit 1; }
out=$(mktemp)
"$here/build/bin/sam3" serve --models "$models" --port 0 --workers 2 --queue 64 >"$out" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$out"' EXIT
for _ in $(seq 100); do grep -q listening "$out" && break; sleep 0.1; done
port=$(grep -o '[0-9]*$' "$out")
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
echo "sam3 serve on port $port, model $models, image $image"
"$here/build/bin/sam3-load" --port "$port" --image "$image" --prompt car --prompt road --prompt "yellow school bus" \
  --requests "$requests" --concurrency "$concurrency" --max-seconds 60
