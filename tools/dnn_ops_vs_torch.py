#!/usr/bin/python3
"""tessera's dropout, losses and indexing operations against PyTorch's (Debian python3-torch,
CPU): the same op, dims and thread counts, one row per case with both times and their ratio
(tessera / PyTorch). tessera's time comes from `tessera bench dnn train|move --json`, which
also gives its ratio to a memory copy of the bytes the case must move.

PyTorch runs in a fresh process per case and thread count (OMP_NUM_THREADS set to it), once
with OpenMP's default wait policy and once with OMP_WAIT_POLICY=PASSIVE; the faster is the
anchor. A training op's backward is timed as autograd's backward of the op alone: the forward
runs first, outside the timed region, and the graph is kept for the repeats. The anchors of the
indexing cases: index_select (gather), gather (gather_elements), scatter / scatter_add /
scatter_reduce (scatter_elements), advanced indexing x[i0, i1] (gather_nd), index_put with
accumulate for add (scatter_nd), zeros + scatter_ of ones (one_hot, f32), topk (top_k, sorted,
largest). Usage:

    /usr/bin/python3 tools/dnn_ops_vs_torch.py [--suite train|indexing]
        [--tessera build/release/bin/tessera] [--threads 1,2] [--min-time 0.3] [--ops a,b,...]
        train:    [--dims 4096x4096] [--dir fwd,bwd] [--reduction mean] [--ratio 0.1]
        indexing: the built-in cases below, or those whose op is in --ops
"""
import argparse
import json
import subprocess
import sys

from torch_timing import print_step_times, worker_best

TRAIN_OPS = "dropout,softmax_ce,nll,mse,l1,smooth_l1,bce_with_logits"

# The indexing cases: the bench flags of each (`bench dnn move`).
INDEXING_CASES = [
    {"op": "gather", "dims": "50000x512", "axis": 0, "index-dims": "4096"},  # an embedding lookup
    {"op": "gather", "dims": "4096x4096", "axis": 1, "index-dims": "2048"},  # columns picked
    {"op": "gather_elements", "dims": "4096x4096", "axis": 1},
    {"op": "gather_elements", "dims": "4096x4096", "axis": 0},
    {"op": "scatter_elements", "dims": "4096x4096", "axis": 1, "reduce": "none"},
    {"op": "scatter_elements", "dims": "4096x4096", "axis": 1, "reduce": "add"},
    {"op": "scatter_elements", "dims": "4096x4096", "axis": 0, "reduce": "add"},
    {"op": "gather_nd", "dims": "4096x4096", "index-dims": "1000000x2"},  # single elements
    {"op": "gather_nd", "dims": "1024x1024x16", "index-dims": "200000x2"},  # rows of 64 bytes
    {"op": "scatter_nd", "dims": "4096x4096", "index-dims": "1000000x2", "reduce": "add"},
    {"op": "scatter_nd", "dims": "4096x4096", "index-dims": "2000x1", "reduce": "none"},  # rows
    {"op": "one_hot", "dims": "65536", "depth": 1000},
    {"op": "top_k", "dims": "4096x4096", "axis": 1, "k": 8},
    {"op": "top_k", "dims": "4096x4096", "axis": 0, "k": 8},
    {"op": "top_k", "dims": "512x32000", "axis": 1, "k": 50},  # a language model's sampling
]


def dims_of(text):
    return [int(v) for v in text.split("x")]


def uniform_indices(torch, dims, hi):
    return torch.randint(0, hi, dims, dtype=torch.int64)


def train_step(torch, case):
    import torch.nn.functional as F
    dims = dims_of(case["dims"])
    bwd = case["dir"] == "bwd"
    x = (torch.rand(*dims) * 4 - 2).requires_grad_(bwd)
    op = case["op"]
    if op in ("softmax_ce", "nll"):
        labels = torch.randint(0, dims[1], [dims[0]] + dims[2:])
        loss = F.cross_entropy if op == "softmax_ce" else F.nll_loss
        f = lambda: loss(x, labels, reduction=case["reduction"])
    elif op == "dropout":
        f = lambda: F.dropout(x, case["ratio"], training=True)
    else:
        t = torch.rand(*dims) if op == "bce_with_logits" else torch.rand(*dims) * 4 - 2
        fn = {"mse": F.mse_loss, "l1": F.l1_loss, "smooth_l1": F.smooth_l1_loss,
              "bce_with_logits": F.binary_cross_entropy_with_logits}[op]
        f = lambda: fn(x, t, reduction=case["reduction"])
    if not bwd:
        def step():
            with torch.no_grad():
                f()
        return step
    y = f()
    g = torch.ones_like(y) if y.dim() > 0 else torch.tensor(1.0)

    def step():
        x.grad = None
        y.backward(g, retain_graph=True)
    return step


def indexing_step(torch, case):
    op = case["op"]
    dims = dims_of(case["dims"])
    if op == "one_hot":
        depth = case["depth"]
        idx = uniform_indices(torch, dims, depth).unsqueeze(-1)
        return lambda: torch.zeros(dims + [depth]).scatter_(-1, idx, 1.0)
    x = torch.rand(*dims) * 4 - 2
    if op in ("gather_nd", "scatter_nd"):
        idims = dims_of(case["index-dims"])
        tuples = tuple(uniform_indices(torch, idims[:-1], dims[j]) for j in range(idims[-1]))
        if op == "gather_nd":
            return lambda: x[tuples]
        u = torch.rand(*(idims[:-1] + dims[idims[-1]:])) * 4 - 2
        return lambda: x.index_put(tuples, u, accumulate=case["reduce"] == "add")
    a = case["axis"]
    n = dims[a]
    if op == "gather":
        idx = uniform_indices(torch, dims_of(case.get("index-dims", str(n))), n)
        flat = idx.flatten()
        return lambda: torch.index_select(x, a, flat)
    if op == "top_k":
        return lambda: torch.topk(x, case["k"], dim=a, largest=True, sorted=True)
    idx = uniform_indices(torch, dims, n)
    if op == "gather_elements":
        return lambda: torch.gather(x, a, idx)
    u = torch.rand(*dims) * 4 - 2
    red = case["reduce"]
    if red == "none":
        return lambda: x.scatter(a, idx, u)
    if red == "add":
        return lambda: x.scatter_add(a, idx, u)
    mode = {"mul": "prod", "max": "amax", "min": "amin"}[red]
    return lambda: x.scatter_reduce(a, idx, u, mode, include_self=True)


def torch_worker(a):
    import torch
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    case = json.loads(a.case)
    if case["kind"] == "train":
        step = train_step(torch, case)
    else:
        torch.set_grad_enabled(False)
        step = indexing_step(torch, case)
    print_step_times(step, a.min_time, torch.__version__)


def torch_time(a, case, threads):
    cmd = [__file__, "--torch-worker", "--case", json.dumps(case), "--threads", str(threads), "--min-time", str(a.min_time)]
    return worker_best(cmd, threads)


def tessera_time(a, case, threads):
    kind = "train" if case["kind"] == "train" else "move"
    cmd = [a.tessera, "bench", "dnn", kind]
    for key, value in case.items():
        if key != "kind":
            cmd += ["--" + key, str(value)]
    cmd += ["--threads", str(threads), "--min-time", str(a.min_time), "--json"]
    if kind == "move":
        cmd += ["--vs", "none"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["results"][0]


def cases(a):
    if a.suite == "train":
        return [{"kind": "train", "op": op, "dir": d, "dims": a.dims, "reduction": a.reduction, "ratio": a.ratio}
                for op in (a.ops or TRAIN_OPS).split(",") for d in a.dir.split(",")]
    ops = a.ops.split(",") if a.ops else None
    return [dict(c, kind="indexing") for c in INDEXING_CASES if ops is None or c["op"] in ops]


def label(case):
    skip = ("kind", "op", "dims", "reduction", "ratio")
    extra = " ".join(f"{k}={v}" for k, v in case.items() if k not in skip)
    return f"{case['op']} {case['dims']} {extra}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--suite", choices=["train", "indexing"], default="train")
    p.add_argument("--tessera", default="build/release/bin/tessera")
    p.add_argument("--ops", default="")
    p.add_argument("--dims", default="4096x4096")
    p.add_argument("--dir", default="fwd,bwd")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--reduction", default="mean")
    p.add_argument("--ratio", type=float, default=0.1)
    p.add_argument("--min-time", type=float, default=0.3)
    p.add_argument("--torch-worker", action="store_true")
    p.add_argument("--case", default="")
    a = p.parse_args()
    if a.torch_worker:
        a.threads = int(a.threads)
        torch_worker(a)
        return
    print(f"{'case':46} {'threads':>7} {'tessera ms':>11} {'torch ms':>9} {'ratio':>6} {'copy ratio':>10}")
    for case in cases(a):
        for threads in [int(v) for v in a.threads.split(",")]:
            t = tessera_time(a, case, threads)
            r = torch_time(a, case, threads)
            print(f"{label(case):46} {threads:7d} {t['best_ms']:11.3f} {r['best_ms']:9.3f} "
                  f"{t['best_ms'] / r['best_ms']:6.2f} {t['ratio']:10.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
