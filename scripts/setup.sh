#!/usr/bin/env bash
# Installs everything sam3cpp needs to build on Debian 12 (idempotent; safe to rerun).
#  - build tools and libraries from Debian's archive (apt-get, as root or via sudo);
#  - ONNX Runtime into .deps/onnxruntime (ignored by git), unless one is already available:
#    SAM3_ORT_ROOT=/path/with/include+lib, a system libonnxruntime-dev, or pkg-config.
#    The library comes from the npm package onnxruntime-node (Microsoft's official build),
#    the C/C++ headers from Debian 13's libonnxruntime-dev (the C API is versioned, so the
#    1.21 headers work with the 1.30 library).
#
#   scripts/setup.sh [--test]   --test also installs what the tests need (Chromium, the npm
#                               packages of tests/web, clang for the fuzzer).
set -euo pipefail
with_tests=0
[ "${1:-}" = "--test" ] && with_tests=1
here=$(cd "$(dirname "$0")/.." && pwd)
deps="$here/.deps"
ort_version=1.30.0
ort_headers_suite=trixie

log() { printf 'setup: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

packages=(build-essential cmake ninja-build pkg-config git clang
  libopencv-dev libcurl4-openssl-dev nlohmann-json3-dev libcli11-dev libcpp-httplib-dev
  libutf8proc-dev libpugixml-dev libgdal-dev libboost-dev libjpeg-dev libpng-dev libwebp-dev zlib1g-dev libssl-dev libzip-dev zip libgtest-dev libgmock-dev
  python3 python3-dev python3-onnx python3-numpy pybind11-dev python3-pytest python3-pil python3-venv python3-pip python3-gdal gdal-bin time
  ca-certificates curl)
# oneDNN (optional: int8 products on VNNI/AMX); not built for every architecture.
apt-cache show libdnnl-dev >/dev/null 2>&1 && packages+=(libdnnl-dev)
[ "$with_tests" = 1 ] && packages+=(chromium slurm-wlm munge)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js may come from elsewhere (e.g. NodeSource); only install Debian's npm when none exists.
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Installed again whenever the lock file changed since the last install.
if [ "$with_tests" = 1 ] && ! cmp -s "$here/tests/web/package-lock.json" "$here/tests/web/node_modules/.sam3-installed-lock"; then
  log "installing the browser-test packages (npm ci in tests/web: playwright-core, Label Studio's editor, @thi.ng/rle-pack)"
  (cd "$here/tests/web" && npm ci --ignore-scripts --no-audit --no-fund --silent &&
    cp package-lock.json node_modules/.sam3-installed-lock)
fi

# ONNX Runtime: use what the user already has, else fetch it into .deps/.
if [ -n "${SAM3_ORT_ROOT:-}" ] || [ -f /usr/include/onnxruntime/onnxruntime_cxx_api.h ] \
   || pkg-config --exists libonnxruntime 2>/dev/null; then
  log "using the ONNX Runtime already installed"
  exit 0
fi
ort="$deps/onnxruntime"
if [ -f "$ort/.complete-$ort_version" ]; then
  exit 0
fi
case "$(uname -m)" in
  x86_64) npm_arch=x64; deb_arch=amd64 ;;
  aarch64) npm_arch=arm64; deb_arch=arm64 ;;
  *) log "no prebuilt ONNX Runtime for $(uname -m); set SAM3_ORT_ROOT"; exit 1 ;;
esac
work="$deps/download"
rm -rf "$work" "$ort"
mkdir -p "$work" "$ort/lib" "$ort/include"

log "fetching ONNX Runtime $ort_version (npm package onnxruntime-node)"
(cd "$work" && npm pack --silent "onnxruntime-node@$ort_version" >/dev/null)
tar -xzf "$work/onnxruntime-node-$ort_version.tgz" -C "$work" \
  "package/bin/napi-v6/linux/$npm_arch/libonnxruntime.so.1"
cp "$work/package/bin/napi-v6/linux/$npm_arch/libonnxruntime.so.1" "$ort/lib/"
ln -sf libonnxruntime.so.1 "$ort/lib/libonnxruntime.so"

log "fetching ONNX Runtime C/C++ headers (Debian $ort_headers_suite libonnxruntime-dev)"
apt_dir="$work/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
echo "deb [arch=$deb_arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $ort_headers_suite main" \
  > "$apt_dir/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o Debug::NoLocking=1
  -o APT::Sandbox::User=root)
apt-get "${apt_opts[@]}" update -qq
(cd "$work" && apt-get "${apt_opts[@]}" download -qq "libonnxruntime-dev:$deb_arch")
dpkg -x "$work"/libonnxruntime-dev_*.deb "$work/dev"
cp -r "$work/dev/usr/include/onnxruntime/." "$ort/include/"
echo "$ort_version" > "$ort/VERSION"
rm -rf "$work"
touch "$ort/.complete-$ort_version"
log "ONNX Runtime ready in $ort"
