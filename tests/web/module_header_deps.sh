#!/bin/bash
# The browser module (apps/web/wasm, built by Emscripten's toolchain in BUILD/web-wasm) is
# rebuilt when a header it includes changes: ninja's record of the compiler's header
# dependencies (`ninja -t deps`, from the depfiles of the last build) must name, for the
# module's objects, the headers below. (A header edit then recompiles those objects and
# relinks sam3.wasm; nothing is built here.)  Usage: module_header_deps.sh WASM_BUILD_DIR SOURCE_DIR
set -eu
dir=$1
src=$2
deps=$(ninja -C "$dir" -t deps)
fail=0
# object (a suffix of its path) -> a header it must depend on
# A header is named absolutely, or relative to the build folder (as compilers write depfiles
# when the build is reached through relative paths, e.g. under ccache's base_dir).
check() {
  local relative
  relative=$(realpath -m --relative-to="$dir" "$2")
  if ! awk -v obj="$1" -v header="$2" -v relative="$relative" '
      /^[^ ]/ { current = $1; sub(/:$/, "", current); next }
      { if (index(current, obj) && current ~ (obj "$") && ($1 == header || $1 == relative)) found = 1 }
      END { exit !found }' <<<"$deps"; then
    echo "FAIL: ninja records no dependency of $1 on $2: editing it would not rebuild sam3.wasm" >&2
    fail=1
  fi
}
check apps/web/sam3_wasm.cpp.o "$src/apps/web/sam3_wasm.h"
check apps/web/sam3_wasm.cpp.o "$src/src/pure/tracker.h"
check apps/web/sam3_wasm.cpp.o "$src/src/pure/generation.h"
check apps/web/sam3_wasm.cpp.o "$src/include/sam3/interactive.h"
check src/pure/tracker.cpp.o "$src/src/pure/tracker.h"
check src/pure/tracker.cpp.o "$src/src/pure/compact_mask.h"
check src/pure/generation.cpp.o "$src/src/pure/generation.h"
check src/predictor/postprocess.cpp.o "$src/src/predictor/postprocess.h"
# The module is linked from those objects (a rebuilt object relinks it).
out=$(ninja -C "$dir" -t targets all | sed -n 's/^\(.*sam3\.mjs\): .*/\1/p' | head -1)
inputs=$(ninja -C "$dir" -t query "$out")
for input in sam3_wasm.cpp.o libsam3_pure_wasm.a; do
  grep -q "$input" <<<"$inputs" || { echo "FAIL: ${out:-sam3.mjs} is not linked from $input" >&2; fail=1; }
done
[ "$fail" = 0 ] && echo "the module's objects depend on the headers they include; sam3.mjs/sam3.wasm link them"
exit $fail
