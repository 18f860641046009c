#!/usr/bin/python3
"""tessera's dropout and losses against PyTorch's (Debian python3-torch, CPU), same op, dims,
direction and thread counts, one row per case with both times and their ratio (tessera /
PyTorch). tessera's time comes from `tessera bench dnn train --json`.

PyTorch runs in a fresh process per thread count (OMP_NUM_THREADS set to it), once with
OpenMP's default wait policy and once with OMP_WAIT_POLICY=PASSIVE; the faster is the anchor.
Its backward is timed as autograd's backward of the op alone: the forward runs first, outside
the timed region, and the graph is kept for the repeats. Usage:

    /usr/bin/python3 tools/train_ops_vs_torch.py [--tessera build/release/bin/tessera]
        [--ops dropout,softmax_ce,nll,mse,l1,smooth_l1,bce_with_logits] [--dims 4096x4096]
        [--dir fwd,bwd] [--threads 1,2] [--reduction mean] [--ratio 0.1] [--min-time 0.3]
"""
import argparse
import json
import os
import subprocess
import sys
import time


def torch_worker(a):
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    dims = [int(v) for v in a.dims.split("x")]
    x = (torch.rand(*dims) * 4 - 2).requires_grad_(a.dir == "bwd")
    op = a.ops
    if op in ("softmax_ce", "nll"):
        labels = torch.randint(0, dims[1], [dims[0]] + dims[2:])
        if op == "softmax_ce":
            f = lambda: F.cross_entropy(x, labels, reduction=a.reduction)
        else:
            f = lambda: F.nll_loss(x, labels, reduction=a.reduction)
    elif op == "dropout":
        f = lambda: F.dropout(x, a.ratio, training=True)
    else:
        t = torch.rand(*dims) if op == "bce_with_logits" else torch.rand(*dims) * 4 - 2
        fn = {"mse": F.mse_loss, "l1": F.l1_loss, "smooth_l1": F.smooth_l1_loss,
              "bce_with_logits": F.binary_cross_entropy_with_logits}[op]
        f = lambda: fn(x, t, reduction=a.reduction)

    if a.dir == "fwd":
        def step():
            with torch.no_grad():
                f()
    else:
        y = f()
        g = torch.ones_like(y) if y.dim() > 0 else torch.tensor(1.0)

        def step():
            x.grad = None
            y.backward(g, retain_graph=True)
    step()
    times = []
    start = time.perf_counter()
    while len(times) < 3 or time.perf_counter() - start < a.min_time:
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    times.sort()
    print(json.dumps({"best_ms": times[0] * 1e3, "median_ms": times[len(times) // 2] * 1e3, "torch": torch.__version__}))


def torch_time(a, op, direction, threads):
    best = None
    for policy in [None, "PASSIVE"]:
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        if policy:
            env["OMP_WAIT_POLICY"] = policy
        cmd = [sys.executable, __file__, "--torch-worker", "--ops", op, "--dir", direction, "--threads", str(threads),
               "--dims", a.dims, "--reduction", a.reduction, "--ratio", str(a.ratio), "--min-time", str(a.min_time)]
        r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout)
        if best is None or r["best_ms"] < best["best_ms"]:
            best = r
    return best


def tessera_time(a, op, direction, threads):
    cmd = [a.tessera, "bench", "dnn", "train", "--op", op, "--dir", direction, "--dims", a.dims, "--threads", str(threads),
           "--reduction", a.reduction, "--ratio", str(a.ratio), "--min-time", str(a.min_time), "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["results"][0]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tessera", default="build/release/bin/tessera")
    p.add_argument("--ops", default="dropout,softmax_ce,nll,mse,l1,smooth_l1,bce_with_logits")
    p.add_argument("--dims", default="4096x4096")
    p.add_argument("--dir", default="fwd,bwd")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--reduction", default="mean")
    p.add_argument("--ratio", type=float, default=0.1)
    p.add_argument("--min-time", type=float, default=0.3)
    p.add_argument("--torch-worker", action="store_true")
    a = p.parse_args()
    if a.torch_worker:
        a.threads = int(a.threads)
        torch_worker(a)
        return
    print(f"{'case':40} {'threads':>7} {'tessera ms':>11} {'torch ms':>9} {'ratio':>6} {'copy ratio':>10}")
    for op in a.ops.split(","):
        for direction in a.dir.split(","):
            for threads in [int(v) for v in a.threads.split(",")]:
                t = tessera_time(a, op, direction, threads)
                r = torch_time(a, op, direction, threads)
                print(f"{op + ' ' + direction + ' ' + a.dims:40} {threads:7d} {t['best_ms']:11.3f} {r['best_ms']:9.3f} "
                      f"{t['best_ms'] / r['best_ms']:6.2f} {t['ratio']:10.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
