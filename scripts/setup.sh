#!/usr/bin/env bash
# Installs everything sam3cpp needs to build on Debian 12 (idempotent; safe to rerun).
#  - build tools and libraries from Debian's archive (apt-get, as root or via sudo);
#  - ONNX Runtime into .deps/onnxruntime (ignored by git), unless one is already available:
#    SAM3_ORT_ROOT=/path/with/include+lib, a system libonnxruntime-dev, or pkg-config.
#    The library comes from the npm package onnxruntime-node (Microsoft's official build),
#    the C/C++ headers from Debian 13's libonnxruntime-dev (the C API is versioned, so the
#    1.21 headers work with the 1.30 library).
#
#   scripts/setup.sh [--test] [--gpu]
#     --test  also installs what the tests need (Chromium, QGIS, the npm packages of tests/web,
#             clang for the fuzzer).
#     --gpu   also fetches an ONNX Runtime with the CUDA and TensorRT providers (Linux x64) into
#             .deps/onnxruntime-gpu; see the README's "Using a GPU".
set -euo pipefail
with_tests=0 with_gpu=0
for arg in "$@"; do
  case "$arg" in
    --test) with_tests=1 ;;
    --gpu) with_gpu=1 ;;
    *) printf 'setup: unknown option %s (use --test, --gpu)\n' "$arg" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")/.." && pwd)
deps="$here/.deps"
ort_version=1.30.0
ort_headers_suite=trixie
# The GPU build: npm's com.github.asus4.onnxruntime packages carry Microsoft's Linux GPU build
# (the core library, and the CUDA and TensorRT providers built for CUDA 13). Its ONNX Runtime
# version is its own (1.29.0 for 0.4.9): core and providers must come from the same release,
# which the script checks; the 1.21 headers serve it as they serve 1.30 (versioned C API).
gpu_package_version=0.4.9
gpu_ort_version=1.29.0

log() { printf 'setup: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

packages=(build-essential cmake ninja-build pkg-config git clang clang-format ccache
  libopencv-dev libcurl4-openssl-dev nlohmann-json3-dev libcli11-dev libcpp-httplib-dev
  libpugixml-dev libgdal-dev libboost-dev libjpeg-dev libpng-dev libwebp-dev libtiff-dev zlib1g-dev libssl-dev libzip-dev zip libavformat-dev libavcodec-dev libswscale-dev libgtest-dev libgmock-dev
  python3 python3-dev python3-onnx python3-numpy pybind11-dev python3-pytest python3-pil python3-venv python3-pip python3-gdal gdal-bin time
  emscripten
  ca-certificates curl)
# oneDNN (optional: int8 products on VNNI/AMX); not built for every architecture.
apt-cache show libdnnl-dev >/dev/null 2>&1 && packages+=(libdnnl-dev)
# clang-22 and lld-22 (optional: the browser's relaxed-SIMD int8 kernel, apps/web/int8_kernels.cmake;
# Debian 12 has them in bookworm-security).
apt-cache show clang-22 lld-22 >/dev/null 2>&1 && packages+=(clang-22 lld-22)
[ "$with_tests" = 1 ] && packages+=(chromium slurm-wlm munge qgis python3-qgis python3-yaml)
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
  log "installing the browser-test packages (npm ci in tests/web: playwright-core, Label Studio's editor, @thi.ng/rle-pack, transformers.js on onnxruntime-node as the interactive model's peer)"
  (cd "$here/tests/web" && npm ci --ignore-scripts --no-audit --no-fund --silent &&
    cp package-lock.json node_modules/.sam3-installed-lock)
fi

# ONNX Runtime's C/C++ headers from Debian's libonnxruntime-dev into $2 ($1: a scratch folder).
fetch_headers() {
  local work=$1 dest=$2 deb_arch
  deb_arch=$(dpkg --print-architecture)
  log "fetching ONNX Runtime C/C++ headers (Debian $ort_headers_suite libonnxruntime-dev)"
  local apt_dir="$work/apt"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$dest"
  echo "deb [arch=$deb_arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $ort_headers_suite main" \
    > "$apt_dir/sources.list"
  local apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o Debug::NoLocking=1
    -o APT::Sandbox::User=root)
  apt-get "${apt_opts[@]}" update -qq
  (cd "$work" && apt-get "${apt_opts[@]}" download -qq "libonnxruntime-dev:$deb_arch")
  dpkg -x "$work"/libonnxruntime-dev_*.deb "$work/dev"
  cp -r "$work/dev/usr/include/onnxruntime/." "$dest/"
}

# The GPU build of ONNX Runtime into .deps/onnxruntime-gpu (include/ + lib/, for SAM3_ORT_ROOT).
fetch_gpu_ort() {
  local gpu="$deps/onnxruntime-gpu" work="$deps/download-gpu"
  if [ -f "$gpu/.complete-$gpu_ort_version" ]; then return 0; fi
  if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
    log "--gpu: npm has a GPU build for Linux x64 only; elsewhere use Microsoft's GPU release (see the README's 'Using a GPU')"
    exit 1
  fi
  rm -rf "$work" "$gpu"
  mkdir -p "$work" "$gpu/lib"
  log "fetching ONNX Runtime $gpu_ort_version with CUDA and TensorRT (npm com.github.asus4.onnxruntime $gpu_package_version, about 330 MB)"
  if ! (cd "$work" && npm pack --silent "com.github.asus4.onnxruntime@$gpu_package_version" \
          "com.github.asus4.onnxruntime.linux-x64-gpu@$gpu_package_version" >/dev/null); then
    log "--gpu: the npm registry cannot be reached from here; download Microsoft's onnxruntime-linux-x64-gpu tarball"
    log "instead and build with SAM3_ORT_ROOT=<its folder> (see the README's 'Using a GPU')"
    rm -rf "$work" "$gpu"
    exit 1
  fi
  local pkg
  for pkg in com.github.asus4.onnxruntime com.github.asus4.onnxruntime.linux-x64-gpu; do
    mkdir -p "$work/$pkg"
    tar -xzf "$work/$pkg-$gpu_package_version.tgz" -C "$work/$pkg"
    # Core and providers must be one release of ONNX Runtime: each package names it in its README.
    if ! grep -q "ONNX Runtime: \[$gpu_ort_version\]" "$work/$pkg/package/README.md"; then
      log "--gpu: $pkg $gpu_package_version is not ONNX Runtime $gpu_ort_version; refusing to mix releases"
      rm -rf "$work" "$gpu"
      exit 1
    fi
    cp "$work/$pkg"/package/Plugins/Linux/x64/*.so "$gpu/lib/"
  done
  mv "$gpu/lib/libonnxruntime.so" "$gpu/lib/libonnxruntime.so.1"
  ln -sf libonnxruntime.so.1 "$gpu/lib/libonnxruntime.so"
  fetch_headers "$work" "$gpu/include"
  echo "$gpu_ort_version" > "$gpu/VERSION"
  rm -rf "$work"
  touch "$gpu/.complete-$gpu_ort_version"
  log "ONNX Runtime $gpu_ort_version (CUDA, TensorRT) ready in $gpu"
  local missing
  missing=$(ldd "$gpu/lib/libonnxruntime_providers_cuda.so" 2>/dev/null | awk '/not found/ {print $1}' | tr '\n' ' ')
  if [ -n "$missing" ]; then log "the CUDA provider still needs NVIDIA's libraries: $missing(CUDA 13 and cuDNN 9)"; fi
  log "build with: SAM3_ORT_ROOT=$gpu cmake -S $here -B $here/build-gpu -DCMAKE_BUILD_TYPE=Release && cmake --build $here/build-gpu"
}
if [ "$with_gpu" = 1 ]; then fetch_gpu_ort; fi

# ONNX Runtime Web (npm onnxruntime-web, the release of the native library) for sam3 in the
# browser (`sam3 serve`'s /app/, `sam3 web export`): its ES modules and WebAssembly files in
# .deps/onnxruntime-web (source maps left out), served from disk, never committed.
fetch_ort_web() {
  local dest="$deps/onnxruntime-web" work="$deps/download-ort-web"
  [ -f "$dest/.complete-$ort_version" ] && return 0
  log "fetching ONNX Runtime Web $ort_version (npm package onnxruntime-web)"
  rm -rf "$work" "$dest"
  mkdir -p "$work" "$dest"
  (cd "$work" && npm pack --silent "onnxruntime-web@$ort_version" >/dev/null)
  tar -xzf "$work/onnxruntime-web-$ort_version.tgz" -C "$work" package/dist package/README.md
  find "$work/package/dist" -maxdepth 1 -type f \( -name 'ort*.mjs' -o -name 'ort-wasm*.wasm' \) \
    ! -name 'ort.node*' -exec cp {} "$dest/" \;
  cp "$work/package/README.md" "$dest/"
  rm -rf "$work"
  touch "$dest/.complete-$ort_version"
  log "ONNX Runtime Web ready in $dest"
}
command -v npm >/dev/null 2>&1 && fetch_ort_web

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
  x86_64) npm_arch=x64 ;;
  aarch64) npm_arch=arm64 ;;
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

fetch_headers "$work" "$ort/include"
echo "$ort_version" > "$ort/VERSION"
rm -rf "$work"
touch "$ort/.complete-$ort_version"
log "ONNX Runtime ready in $ort"
