#!/usr/bin/env bash
# A model `tessera train` exported runs in ONNX Runtime (PyPI's, in the test venv) with the
# outputs `tessera run` gives: the scores and the loss of one batch, and onnx's full checker
# accepts it. Exits 77 (skipped) without the dataset, PyPI or onnxruntime.
#   onnxruntime_check.sh TESSERA_CLI WORK_DIR
set -euo pipefail
cli=$1 work=$2
root="$(cd "$(dirname "$0")/../.." && pwd)"
[ -d /usr/share/datasets/fashion-mnist ] || { echo "skipped: Debian's dataset-fashion-mnist is not installed"; exit 77; }
rc=0; "$root/scripts/test-venv.sh" || rc=$?
[ "$rc" -eq 0 ] || exit "$rc"
py="$root/.venv/bin/python"
"$py" -c "import onnxruntime" 2>/dev/null || { echo "skipped: onnxruntime is not in the test venv (PyPI out of reach?)"; exit 77; }
rm -rf "$work" && mkdir -p "$work/out"
"$cli" train --model resnet-small --limit 512 --batch 32 --export "$work/model.onnx" --json > "$work/train.json"
"$py" - "$work" <<'PY'
import sys, numpy as np
w = sys.argv[1]
rng = np.random.default_rng(1)
np.save(f"{w}/images.npy", rng.random((4, 1, 28, 28), dtype=np.float32))
np.save(f"{w}/labels.npy", np.array([0, 3, 7, 9], dtype=np.int64))
PY
"$cli" run "$work/model.onnx" --input "images=$work/images.npy" --input "labels=$work/labels.npy" --output-dir "$work/out" --iterations 1 > /dev/null
"$py" - "$work" <<'PY'
import sys, numpy as np, onnx, onnxruntime as ort
w = sys.argv[1]
onnx.checker.check_model(onnx.load(f"{w}/model.onnx"), full_check=True)
s = ort.InferenceSession(f"{w}/model.onnx", providers=["CPUExecutionProvider"])
feeds = {"images": np.load(f"{w}/images.npy"), "labels": np.load(f"{w}/labels.npy")}
got = dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))
for name in ("scores", "loss"):
    mine = np.load(f"{w}/out/{name}.npy")
    diff = float(np.max(np.abs(mine - got[name])))
    scale = float(np.max(np.abs(got[name])))
    print(f"{name}: tessera vs onnxruntime, largest difference {diff:.3g} of values up to {scale:.3g}")
    assert diff <= 1e-4 * max(scale, 1.0), name
print("onnxruntime runs the exported model with tessera's outputs")
PY
