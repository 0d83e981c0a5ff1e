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
# ccache when installed: scripts/build_core.sh's second tree then reuses these objects.
launcher=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$here}"
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$here" -B "$here/build" "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$here/build" --parallel "$(nproc)"
