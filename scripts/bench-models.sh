#!/usr/bin/env bash
# Whole-model latency, side by side: tessera (as it runs by default, and without the layout
# pass: every convolution channels-first) and PyTorch (Debian's
# python3-torch, torch.no_grad, same threads), and ONNX Runtime when ORT_PYTHON names a Python
# with onnxruntime (PyPI) installed. Median ms of N runs after 3 warm-up runs, per model and
# batch; the models are those tests/models exports (build them with the test suite first).
#   scripts/bench-models.sh [BUILD_DIR] [THREADS] [RUNS]
set -euo pipefail
build=${1:-build/release}
threads=${2:-2}
runs=${3:-20}
models=$build/tests/models/exported
[ -f "$models/resnet18/model.onnx" ] || { echo "bench-models: no exported models in $models (run the tests first)" >&2; exit 1; }

printf "%-14s %5s %12s %12s %10s %10s\n" model batch tessera_ms no_layout_ms torch_ms ort_ms
for m in resnet18 mobilenet_v2 squeezenet1_1 transformer; do
  for b in 1 8; do
    t=() ; n=()
    med() { "$build/bin/tessera" run "$models/$m/model.onnx" --threads "$threads" --batch "$b" --iterations "$runs" --warmup 3 --json "$@" |
            /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['latency_ms']['median'])"; }
    tess=$(med); plain=$(med --disable-pass layout)
    torch_ms=$(/usr/bin/python3 - "$m" "$b" "$threads" "$runs" <<'PY'
import sys, time, torch, torchvision
name, b, threads, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
torch.set_num_threads(threads)
torch.manual_seed(0)
if name == "transformer":
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, batch_first=True)
    net, x = torch.nn.TransformerEncoder(layer, num_layers=2).eval(), torch.randn(b, 32, 256)
else:
    net, x = getattr(torchvision.models, name)(weights=None).eval(), torch.randn(b, 3, 224, 224)
with torch.no_grad():
    for _ in range(3): net(x)
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter(); net(x); ts.append((time.perf_counter() - t0) * 1e3)
print(round(sorted(ts)[len(ts) // 2], 3))
PY
)
    ort_ms=-
    if [ -n "${ORT_PYTHON:-}" ]; then
      ort_ms=$("$ORT_PYTHON" - "$models/$m/model.onnx" "$b" "$threads" "$runs" <<'PY'
import sys, time, numpy as np, onnxruntime as ort
path, b, threads, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
o = ort.SessionOptions(); o.intra_op_num_threads = threads; o.inter_op_num_threads = 1
o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
s = ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])
i = s.get_inputs()[0]
x = np.random.default_rng(0).standard_normal([b if not isinstance(d, int) else d for d in i.shape]).astype(np.float32)
for _ in range(3): s.run(None, {i.name: x})
ts = []
for _ in range(runs):
    t0 = time.perf_counter(); s.run(None, {i.name: x}); ts.append((time.perf_counter() - t0) * 1e3)
print(round(sorted(ts)[len(ts) // 2], 3))
PY
)
    fi
    printf "%-14s %5s %12.2f %12.2f %10s %10s\n" "$m" "$b" "$tess" "$plain" "$torch_ms" "$ort_ms"
  done
done
