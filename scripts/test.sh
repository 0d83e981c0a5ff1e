#!/usr/bin/env bash
# Sets up, builds and runs every test (unit, end-to-end on generated models, CLI), then builds
# the library alone with every optional module off and runs its tests (scripts/build_core.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/build.sh" --test
cd "$here/build"
ctest --output-on-failure --parallel "$(nproc)" --timeout 600
"$here/scripts/build_core.sh"
