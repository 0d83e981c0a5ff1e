# Sourced by the load and soak scripts: start_server MODEL_DIR [SERVE_OPTIONS...] starts
# `sam3 serve` on a free loopback port, waits until /health answers, and sets $server_pid and
# $server_port; the server is killed when the script exits.
start_server() {
  local models=$1 out
  shift
  out=$(mktemp)
  "$here/build/bin/sam3" serve --models "$models" --port 0 "$@" >"$out" &
  server_pid=$!
  trap 'kill $server_pid 2>/dev/null' EXIT
  for _ in $(seq 100); do grep -q listening "$out" && break; sleep 0.1; done
  server_port=$(grep -o '[0-9]*$' "$out")
  rm -f "$out"
  for _ in $(seq 300); do curl -sf "http://127.0.0.1:$server_port/health" >/dev/null && break; sleep 0.1; done
}
