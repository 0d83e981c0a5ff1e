#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan/UBSan) and runs each for SECONDS.
#   scripts/fuzz.sh [--no-build] [SECONDS] [BUILD_DIR] [TARGET...]   default: 60 s, build-fuzz/, every target
# Targets (tests/fuzz/*_fuzz.cpp): tokenizer_fuzz (prompt text), image_decode_fuzz (image files of
# every format), request_parse_fuzz (POST /v1/segment bodies, base64, multipart), label_config_fuzz
# (Label Studio label configs), protocol_request_fuzz (X-AnyLabeling's /v1/predict and Label
# Studio's /setup and /predict bodies), onnx_wire_fuzz (the ONNX protobuf reader), zip_archive_fuzz
# (zip central directories and entries), output_manifest_fuzz (an output folder's
# .sam3-outputs.json and a crashed update's journal), shard_records_fuzz (label records,
# config.json, inputs.json, map shards and map tile records), video_resume_fuzz (a killed video
# run's checkpoint and record), cvat_tracker_state_fuzz (CVAT tracker shapes and states). --no-build runs targets already built, as the tests do
# (the main build builds them into build/fuzz). Run them longer by hand, e.g. scripts/fuzz.sh 3600.
# (ASan's quarantine is kept small: decoded images are large, and a big quarantine alone passes
# the RSS limit.) Findings are written to BUILD_DIR/findings/ and make the script fail.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build_first=1
if [ "${1:-}" = "--no-build" ]; then build_first=0; shift; fi
seconds=${1:-60}
build=${2:-$here/build-fuzz}
shift $(( $# > 2 ? 2 : $# ))
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$here"/tests/fuzz/*_fuzz.cpp; do targets+=("$(basename "$f" .cpp)"); done
fi
if [ $build_first = 1 ]; then
  command -v clang++ >/dev/null || { echo "fuzz: clang++ is needed (apt-get install clang)" >&2; exit 1; }
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ -DSAM3_FUZZ=ON -DSAM3_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build" --target "${targets[@]}" make_seeds --parallel "$(nproc)" >/dev/null
fi
built() {
  [ -x "$build/$1" ] || { echo "fuzz: $build/$1 is not built (build the project, or run without --no-build)" >&2; exit 1; }
}
for target in "${targets[@]}"; do built "$target"; done

# Debian's python3 (its onnx makes the ONNX seeds), as the tests use it.
python=python3
[ -x /usr/bin/python3 ] && python=/usr/bin/python3

# Seeds: the golden prompts, small images of every format, request bodies, label configs,
# ONNX graphs, zip archives.
seed() {
  local target=$1 corpus=$2
  [ -z "$(ls -A "$corpus" 2>/dev/null)" ] || return 0
  mkdir -p "$corpus"
  case "$target" in
    tokenizer_fuzz)
      "$python" - "$here/tests/data/clip/golden_public.jsonl" "$corpus" <<'PY'
import json, sys
for i, line in enumerate(open(sys.argv[1], encoding="utf-8")):
    open(f"{sys.argv[2]}/golden_{i}", "w", encoding="utf-8").write(json.loads(line)["text"])
PY
      ;;
    image_decode_fuzz) built make_seeds && "$build/make_seeds" images "$corpus" ;;
    request_parse_fuzz) built make_seeds && "$build/make_seeds" requests "$corpus" ;;
    *) "$python" "$here/tests/fuzz/seeds.py" "$target" "$corpus" ;;
  esac
}

# A private temporary folder: a target's own scratch files (zip_archive_fuzz writes its inputs
# to disk) go there, and it is removed however the script ends (libFuzzer skips atexit handlers).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
for target in "${targets[@]}"; do
  corpus="$build/corpus/$target"
  seed "$target" "$corpus"
  mkdir -p "$build/findings/$target"
  case "$target" in tokenizer_fuzz) max_len=512 ;; request_parse_fuzz | label_config_fuzz | protocol_request_fuzz | cvat_tracker_state_fuzz) max_len=16384 ;; *) max_len=65536 ;; esac
  echo "fuzz: $target for ${seconds}s" >&2
  if ! TMPDIR=$scratch ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:quarantine_size_mb=64 "$build/$target" -max_total_time="$seconds" \
      -max_len="$max_len" -rss_limit_mb=4096 -timeout=20 -print_final_stats=1 \
      -artifact_prefix="$build/findings/$target/" "$corpus" > "$build/$target.log" 2>&1; then
    status=1
    echo "fuzz: $target found a problem; see $build/$target.log and $build/findings/$target/" >&2
  fi
  tail -n 12 "$build/$target.log"
done
exit $status
