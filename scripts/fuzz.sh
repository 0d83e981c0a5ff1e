#!/usr/bin/env bash
# Builds the tokenizer fuzz target with clang (libFuzzer + ASan/UBSan) and runs it.
#   scripts/fuzz.sh [SECONDS] [BUILD_DIR]     default: 60 s, build-fuzz/
# The test suite runs it for a few seconds; run it longer by hand, e.g. scripts/fuzz.sh 3600.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
build=${2:-$here/build-fuzz}
command -v clang++ >/dev/null || { echo "fuzz: clang++ is needed (apt-get install clang)" >&2; exit 1; }
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DSAM3_FUZZ=ON -DSAM3_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target tokenizer_fuzz --parallel "$(nproc)" >/dev/null
mkdir -p "$build/corpus"
# Seed with the golden texts when the shared data is there.
golden="$here/../shared/data/clip/golden_public.jsonl"
if [ -f "$golden" ] && [ -z "$(ls -A "$build/corpus")" ]; then
  i=0
  while IFS= read -r line; do
    printf '%s' "$line" | sed -e 's/^{"text": "//' -e 's/", "ids".*//' > "$build/corpus/golden_$i"
    i=$((i + 1))
  done < "$golden"
fi
"$build/tokenizer_fuzz" -max_total_time="$seconds" -max_len=512 -print_final_stats=1 "$build/corpus" 2>&1 | tail -n 12
