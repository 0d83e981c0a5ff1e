#!/usr/bin/env bash
# The installed package as a user meets it: `cmake --install` into a fresh prefix, the README's
# library example (examples/library) built against it with find_package(sam3) and with
# pkg-config, both run on a test model and compared with `sam3 segment`; a program that links
# sam3::sam3 alone must load no GDAL, libcurl, libzip or OpenSSL.
#   install_test.sh BUILD_DIR TEST_MODELS_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$1 models=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "install_test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$work/prefix" --component dev >/dev/null
[ -f "$work/prefix/include/sam3/model.h" ] || fail "headers not installed"
[ -f "$work/prefix/include/sam3/version.h" ] || fail "version header not installed"
# No public header includes a third-party header (only the standard library and sam3's own).
if grep -rhoE '#include [<"][^>"]+[>"]' "$work/prefix/include/sam3" | grep -vE '#include [<"]sam3/|#include <[a-z_0-9]+>' ; then
  fail "a public header includes a third-party header (above)"
fi

cmake -S "$root/examples/library" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/cmake-build" >/dev/null
pc_dir=$(dirname "$(find "$work/prefix" -name sam3.pc)")
# shellcheck disable=SC2046
g++ -O1 "$root/examples/library/segment.cpp" -o "$work/segment-pc" \
  $(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs --static sam3)

image="$root/examples/street.png"
expected=$("$build/bin/sam3" segment --models "$models/usls" --image "$image" --prompt red --json 2>/dev/null |
  python3 -c 'import json,sys; d=json.load(sys.stdin)
for i in d["images"][0]["prompts"][0]["instances"]: print("red\t%.4f\t%d" % (i["score"], i["area"]))')
[ -n "$expected" ] || fail "sam3 segment found no instance of \"red\" to compare with"
for program in "$work/cmake-build/segment" "$work/segment-pc"; do
  got=$(cd / && "$program" "$models/usls" "$image" red | awk -F'\t' '{printf "%s\t%s\t%s\n", $1, $2, $4}')
  [ "$got" = "$expected" ] || fail "$(basename "$program"): results differ from sam3 segment:
$got
--- expected
$expected"
  if ldd "$program" | grep -E 'libgdal|libcurl|libzip|libssl|libcrypto\.'; then
    fail "$(basename "$program") loads a library the core must not need (above)"
  fi
done
echo "installed package: example built with CMake and pkg-config, results equal sam3 segment's"
