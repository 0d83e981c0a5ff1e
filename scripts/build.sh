#!/usr/bin/env bash
# Sets up dependencies (scripts/setup.sh) and builds sam3cpp into build/ (Release).
#   scripts/build.sh [--test] [CMAKE_ARGS...]   --test: also the test dependencies
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
setup_args=()
if [ "${1:-}" = "--test" ]; then setup_args=(--test); shift; fi
"$here/scripts/setup.sh" "${setup_args[@]}"
generator=()
command -v ninja >/dev/null 2>&1 && [ ! -f "$here/build/Makefile" ] && generator=(-G Ninja)
cmake -S "$here" -B "$here/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$here/build" --parallel "$(nproc)"
