#!/usr/bin/env bash
# `pip install .` as a user runs it (Debian's python3 and pip, in a venv, offline): the wheel
# installs, and the installed module runs from anywhere without the source or build tree
# (its ONNX Runtime and vocabulary inside the package, RUNPATH $ORIGIN only).
set -euo pipefail
#   install_test.sh TEST_MODELS_DIR [PYTHON]    PYTHON: the interpreter the module is built for
root=$(cd "$(dirname "$0")/../.." && pwd)
models=$1
python=${2:-python3}
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
"$python" -m venv --system-site-packages "$venv"  # Debian's numpy comes from the system
"$venv/bin/pip" install --no-index --no-cache-dir --quiet "$root"  # no wheel cache left under ~/.cache/pip
cd /
"$venv/bin/python" - "$models" "$root" <<'PY'
import subprocess, sys
from pathlib import Path
import numpy as np
import sam3cpp

models, root = sys.argv[1], sys.argv[2]
package = Path(sam3cpp.__file__).parent
assert not str(package).startswith(root), f"imported from the source tree: {package}"
native = next(package.glob("_native*.so"))
dynamic = subprocess.run(["readelf", "-d", str(native)], check=True, capture_output=True, text=True).stdout
assert root not in dynamic, "the installed module points into the source tree"
for line in subprocess.run(["ldd", str(native)], check=True, capture_output=True, text=True).stdout.splitlines():
    assert root not in line and "not found" not in line, line
image = np.zeros((240, 400, 3), np.uint8)
image[20:100, 40:160] = (255, 0, 0)
model = sam3cpp.Model(Path(models) / "usls")
result = model.segment(model.encode(image), "red")
assert len(result) >= 1 and result.masks[0][20:100, 40:160].mean() > 0.8
assert sam3cpp.tokenize("road")["ids"][:3] == [49406, 1759, 49407]
print("installed sam3cpp works from", package)
PY
