#!/usr/bin/env bash
# The ONNX conformance test: the test-time venv (scripts/test-venv.sh) with the newest onnx,
# its backend node tests written to OUT_DIR (once per onnx version), then
# `tessera conformance` over them with the checked-in exclusion file. Exits 77 (skipped) when
# the venv cannot be made (no PyPI).
#   run_conformance.sh TESSERA_CLI OUT_DIR EXCLUSIONS
set -euo pipefail
cli="$1" out="$2" exclusions="$3"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

"$root/scripts/test-venv.sh" || exit $?
py="$root/.venv/bin/python"
version="$("$py" -c 'import onnx; print(onnx.__version__)')"
if [ "$(cat "$out/ONNX_VERSION" 2>/dev/null)" != "$version" ]; then
  "$py" -W ignore "$here/generate_node_tests.py" "$out"
fi
exec "$cli" conformance "$out" --exclude "$exclusions"
