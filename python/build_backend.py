"""A PEP 517 build backend for sam3cpp using only the standard library: it builds the Python
module with CMake (in build/, configuring it if needed), installs it into a staging folder, adds the ONNX Runtime
library when it is not a system one (the module finds it beside itself, RPATH $ORIGIN), and
zips the wheel. No build requirement has to be downloaded."""
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _version() -> str:
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(sam3cpp VERSION ([0-9.]+)", text).group(1)


def _tag() -> str:
    impl = f"cp{sys.version_info.major}{sys.version_info.minor}"
    return f"{impl}-{impl}-{sysconfig.get_platform().replace('-', '_').replace('.', '_')}"


def _run(*cmd):
    print("sam3cpp build:", " ".join(str(c) for c in cmd), file=sys.stderr)
    subprocess.run([str(c) for c in cmd], check=True)


def _stage(staging: Path) -> None:
    # The project's own build tree (scripts/build.sh makes the same): after a build, a wheel
    # costs only the install step. A venv's interpreter builds for its base Python.
    build = ROOT / "build"
    if not (build / "CMakeCache.txt").exists():
        python = getattr(sys, "_base_executable", sys.executable)
        _run("cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release", f"-DPython3_EXECUTABLE={python}")
    _run("cmake", "--build", build, "--target", "sam3cpp_python", "--parallel", str(os.cpu_count() or 2))
    _run("cmake", "--install", build, "--prefix", staging, "--component", "python")
    package = staging / "sam3cpp"
    built = next((build / "python" / "sam3cpp").glob("_native*.so"))  # still with the build tree's RPATH
    # Bundle ONNX Runtime unless it comes from a system library folder.
    for line in subprocess.run(["ldd", str(built)], check=True, capture_output=True, text=True).stdout.splitlines():
        m = re.match(r"\s*(libonnxruntime\S*) => (\S+)", line)
        if m and not m.group(2).startswith(("/usr/lib", "/lib")):
            shutil.copy2(os.path.realpath(m.group(2)), package / m.group(1))


def _record_line(path: Path, arcname: str) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(path.read_bytes()).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{path.stat().st_size}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def _metadata(version: str) -> str:
    return (f"Metadata-Version: 2.1\nName: sam3cpp\nVersion: {version}\n"
            "Summary: SAM3 text-prompted instance segmentation on ONNX Runtime, without PyTorch\n"
            "Requires-Python: >=3.9\nRequires-Dist: numpy\n")


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = Path(metadata_directory) / f"sam3cpp-{_version()}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(_metadata(_version()))
    return info.name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    name = f"sam3cpp-{version}-{_tag()}.whl"
    with tempfile.TemporaryDirectory() as tmp:
        staging = Path(tmp)
        _stage(staging)
        info = staging / f"sam3cpp-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(_metadata(version))
        (info / "WHEEL").write_text(f"Wheel-Version: 1.0\nGenerator: sam3cpp build_backend\nRoot-Is-Purelib: false\nTag: {_tag()}\n")
        files = sorted(p for p in staging.rglob("*") if p.is_file())
        records = [_record_line(p, p.relative_to(staging).as_posix()) for p in files]
        records.append(f"{info.name}/RECORD,,")
        (info / "RECORD").write_text("\n".join(records) + "\n")
        with zipfile.ZipFile(Path(wheel_directory) / name, "w", zipfile.ZIP_DEFLATED) as wheel:
            for p in sorted(p for p in staging.rglob("*") if p.is_file()):
                wheel.write(p, p.relative_to(staging).as_posix())
    return name
