#!/usr/bin/env bash
# sam3::sam3 alone, as a user who wants only the library builds it: configures build-core/ with
# every optional module off (hub, server, video I/O, the sam3 program, benchmarks, maps, Python,
# the browser module, oneDNN, the fuzz targets), checks that the configure looked for nothing
# beyond ONNX Runtime, the image codecs, OpenCV core/imgproc, zlib and nlohmann-json (and the
# tests' own GoogleTest, cpp-httplib and OpenCV imgcodecs), builds the library and its tests that
# need no generated model, and runs them. With ccache the objects are the full build's
# (scripts/build.sh): the same sources and flags, paths made relative by CCACHE_BASEDIR.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out="$here/build-core"
launcher=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$here}"
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
mkdir -p "$out"
generator=()
command -v ninja >/dev/null 2>&1 && [ ! -f "$out/Makefile" ] && generator=(-G Ninja)
cmake -S "$here" -B "$out" "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DSAM3_HUB=OFF -DSAM3_SERVER=OFF -DSAM3_VIDEO_IO=OFF -DSAM3_CLI=OFF -DSAM3_BENCH=OFF -DSAM3_MAPS=OFF \
  -DSAM3_PYTHON=OFF -DSAM3_WASM=OFF -DSAM3_ONEDNN=OFF -DSAM3_FUZZ_SMOKE=OFF >"$out/configure.log"
# What an optional module would have looked for must not be in the cache.
if grep -E '^(CURL_|OpenSSL_|OPENSSL_|LIBZIP_|pugixml_|Boost_|FFMPEG_|GDAL_|CLI11_|dnnl_|DNNL_|pybind11_)' "$out/CMakeCache.txt"; then
  echo "build_core: the library-only configure looked for an optional module's library (above)" >&2
  exit 1
fi
grep -q "sam3 optional modules on: none" "$out/configure.log" || { cat "$out/configure.log" >&2; exit 1; }
rm -f "$out/configure.log"
# The libraries and the tests that need no generated model (those that do link the same
# libraries, and run in the full build).
cmake --build "$out" --parallel "$(nproc)" --target sam3 sam3_label sam3_model_free_tests
ctest --test-dir "$out" --label-exclude models --exclude-regex "_NOT_BUILT$" --output-on-failure --parallel "$(nproc)" --timeout 600
