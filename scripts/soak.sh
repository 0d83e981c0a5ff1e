#!/usr/bin/env bash
# Soak test of `sam3 serve` on loopback: starts the server on a free port, sends mixed good
# and hostile traffic for MINUTES (build/bin/sam3-soak), samples its memory and descriptors,
# prints the tables, stops the server. Exits non-zero if any request was answered wrongly,
# /health ever went unanswered, or the server did not stop cleanly.
#   scripts/soak.sh [MINUTES] [MODEL_DIR] [IMAGE]    defaults: 30, build/test-models/usls, examples/street.png
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
minutes=${1:-30}
models=${2:-$here/build/test-models/usls}
image=${3:-$here/examples/street.png}
[ -d "$models" ] || { echo "soak: no models at $models (run scripts/test.sh once to generate the test models)" >&2; exit 1; }
. "$here/scripts/start-server.sh"
start_server "$models" --workers 2 --queue 16 --cache-mb 64 --max-request-mb 8 \
  --header-timeout 5
pid=$server_pid port=$server_port
echo "soak: sam3 serve (pid $pid) on port $port, model $models, $minutes minutes"
status=0
"$here/build/bin/sam3-soak" --port "$port" --pid "$pid" --image "$image" --minutes "$minutes" || status=1
kill -TERM "$pid"
start=$(date +%s.%N)
wait "$pid" || { echo "soak: the server exited with status $?"; status=1; }
echo "soak: the server stopped $(echo "$(date +%s.%N) - $start" | bc) s after SIGTERM"
trap - EXIT
exit $status
