"""What the PyTorch comparison scripts (tools/*_vs_torch.py) share: timing one step in a
worker process, and running that worker under both OpenMP wait policies (busy-waiting OpenMP
threads slow PyTorch down badly on a 2-core VM) to keep the faster as the anchor."""
import json
import os
import subprocess
import sys
import time


def print_step_times(step, min_time, version):
    """Runs step() once to warm up, then at least 3 times and min_time seconds; prints the best
    and median times in ms as one JSON line (what worker_best reads)."""
    step()
    times = []
    start = time.perf_counter()
    while len(times) < 3 or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    times.sort()
    print(json.dumps({"best_ms": times[0] * 1e3, "median_ms": times[len(times) // 2] * 1e3, "torch": version}))


def worker_best(cmd, threads, extra_env=None):
    """Runs the worker command with OMP_NUM_THREADS (and extra_env) set, under OpenMP's default
    wait policy and under OMP_WAIT_POLICY=PASSIVE; returns the faster run's JSON."""
    best = None
    for policy in [None, "PASSIVE"]:
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), **(extra_env or {}))
        if policy:
            env["OMP_WAIT_POLICY"] = policy
        r = json.loads(subprocess.run([sys.executable] + cmd, check=True, capture_output=True, text=True, env=env).stdout)
        if best is None or r["best_ms"] < best["best_ms"]:
            best = r
    return best
