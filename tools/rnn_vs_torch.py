#!/usr/bin/python3
"""tessera's RNN training step against PyTorch's (Debian python3-torch, CPU), same sizes and
thread counts: the issue-5 target is tessera <= 1.2x PyTorch's time for LSTM and GRU at
seq 64, batch 32, hidden 512, 2 layers.

PyTorch runs in a fresh process per thread count with OMP_NUM_THREADS and OPENBLAS_NUM_THREADS
set to it (Debian's torch does its GEMMs in OpenBLAS, whose own threads torch.set_num_threads
does not limit), once with OpenMP's default wait policy and once with OMP_WAIT_POLICY=PASSIVE
(busy-waiting OpenMP threads slow it down badly on a 2-core VM); the faster is the anchor.
Usage:

    /usr/bin/python3 tools/rnn_vs_torch.py [--tessera build/release/bin/tessera] [--threads 1,2]
        [--cells lstm,gru] [--seq 64 --batch 32 --input 512 --hidden 512 --layers 2] [--dir fwd-bwd]
"""
import argparse
import json
import subprocess
import sys

from torch_timing import print_step_times, worker_best


def torch_worker(cell, a, threads, min_time=1.0):
    import torch
    torch.set_num_threads(threads)
    cls = torch.nn.LSTM if cell == "lstm" else torch.nn.GRU
    rnn = cls(a.input, a.hidden, num_layers=a.layers)
    x = torch.randn(a.seq, a.batch, a.input, requires_grad=a.dir == "fwd-bwd")
    dy = torch.randn(a.seq, a.batch, a.hidden)

    def step():
        if a.dir == "fwd":
            with torch.no_grad():
                rnn(x)
            return
        y, _ = rnn(x)
        y.backward(dy)

    print_step_times(step, min_time, torch.__version__)


def torch_time(cell, a, threads):
    cmd = [__file__, "--torch-worker", cell, "--threads", str(threads), "--seq", str(a.seq), "--batch", str(a.batch),
           "--input", str(a.input), "--hidden", str(a.hidden), "--layers", str(a.layers), "--dir", a.dir]
    best = worker_best(cmd, threads, {"OPENBLAS_NUM_THREADS": str(threads)})
    return best["best_ms"], best["median_ms"]


def tessera_time(cell, a, threads):
    cmd = [a.tessera, "bench", "dnn", "rnn", "--cell", cell, "--seq", str(a.seq), "--batch", str(a.batch),
           "--input", str(a.input), "--hidden", str(a.hidden), "--layers", str(a.layers), "--dir", a.dir,
           "--threads", str(threads), "--min-time", "1", "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    r = json.loads(out)["results"][0]
    return r["best_ms"], r["median_ms"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tessera", default="build/release/bin/tessera")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--cells", default="lstm,gru")
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--input", type=int, default=512)
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--dir", default="fwd-bwd", choices=["fwd", "fwd-bwd"])
    p.add_argument("--torch-worker", default="", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.torch_worker:
        torch_worker(a.torch_worker, a, int(a.threads))
        return
    print(f"seq {a.seq} batch {a.batch} input {a.input} hidden {a.hidden} "
          f"layers {a.layers} {a.dir}")
    print(f"{'cell':6} {'threads':>7} {'tessera ms':>11} {'torch ms':>9} {'ratio':>6}   (best; median in brackets)")
    for cell in a.cells.split(","):
        for threads in [int(t) for t in a.threads.split(",")]:
            tb, tm = tessera_time(cell, a, threads)
            pb, pm = torch_time(cell, a, threads)
            print(f"{cell:6} {threads:7d} {tb:11.1f} {pb:9.1f} {tb / pb:6.2f}   ({tm:.1f} / {pm:.1f})")


if __name__ == "__main__":
    main()
