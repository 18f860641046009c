#!/usr/bin/env bash
# Makes the test-time virtual environment (.venv at the repository root, git-ignored) with the
# PyPI packages the tests use as oracles: the newest `onnx`, whose backend node tests
# `tessera conformance` runs, and `onnxruntime`, which runs a model `tessera train` exported.
# Debian's /usr/bin/python3 makes it with --system-site-packages, so Debian's torch stays
# visible. Quick when it is already there.
#
# Exits 77 (ctest's "skipped") with a message when PyPI cannot be reached and no usable
# environment exists, so an offline machine skips the conformance tests instead of failing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv"
lock="$root/.venv.lock"

exec 9>"$lock"
flock 9

# onnxruntime: the exported trained model's check (tests/train); optional, so a failure to
# install it skips that test only.
with_onnxruntime() {
  "$venv/bin/python" -c "import onnxruntime" 2>/dev/null ||
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check onnxruntime ||
    echo "test-venv: cannot install onnxruntime from PyPI (offline?); its test is skipped" >&2
}

if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import onnx" 2>/dev/null; then
  with_onnxruntime
  exit 0
fi
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv"
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade onnx; then
  rm -rf "$venv"
  echo "test-venv: cannot install onnx from PyPI (offline?); the ONNX conformance tests are skipped" >&2
  exit 77
fi
with_onnxruntime
echo "test-venv: $("$venv/bin/python" -c 'import onnx; print("onnx", onnx.__version__)') in $venv"
