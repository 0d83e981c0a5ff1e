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
. "$here/scripts/start-server.sh"
start_server "$models" --workers 2 --queue 64
pid=$server_pid port=$server_port
echo "sam3 serve on port $port, model $models, image $image"
"$here/build/bin/sam3-load" --port "$port" --image "$image" --prompt car --prompt road --prompt "yellow school bus" \
  --requests "$requests" --concurrency "$concurrency" --max-seconds 60
