#!/usr/bin/python3
"""How much do threads speed up a Python sweep? Runs the same sweep with jobs=1 and jobs=N (default: all
cores) and prints wall times and the ratio. The GIL is released inside the C++ sweep, so on two cores the
ratio should approach 2. Usage: PYTHONPATH=build/python bench/bench_python_sweep.py [points] [jobs]"""
import os
import sys
import time

import llmsim

points = int(sys.argv[1]) if len(sys.argv) > 1 else 200
jobs = int(sys.argv[2]) if len(sys.argv) > 2 else (os.cpu_count() or 2)

base = {
    "model": "llama-3.1-8b",
    "hardware": {"gpu": "a100-80gb-sxm"},
    "workload": {"arrival": {"process": "poisson", "rate": 2.0},
                 "input_tokens": {"dist": "lognormal", "mean": 512, "sigma": 0.8},
                 "output_tokens": {"dist": "fixed", "value": 128},
                 "num_requests": 500, "warmup_requests": 50, "seed": 1},
    "slo": {"ttft_ms": {"p95": 2000}, "tpot_ms": {"p95": 100}},
}
gpus = ["rtx4090-24gb", "rtx4090-48gb", "a100-80gb-pcie", "a100-80gb-sxm"]
per_gpu = max(1, points // len(gpus))
grid = {"hardware.gpu": gpus, "workload.arrival.rate": [0.5 + 0.05 * i for i in range(per_gpu)]}
n = len(gpus) * per_gpu


def timed(j):
    start = time.perf_counter()
    frame = llmsim.sweep(base, grid, jobs=j, progress=False)
    return time.perf_counter() - start, frame


llmsim.sweep(base, {"hardware.gpu": gpus[:1]}, jobs=1, progress=False)  # warm up (catalogue, page cache)
t1, f1 = timed(1)
tn, fn = timed(jobs)
assert f1.equals(fn), "thread count changed the results"
print(f"python sweep: {n} scenarios x {base['workload']['num_requests']} requests on {os.cpu_count()} cores")
print(f"  jobs=1:  {t1:7.3f} s  ({n / t1:8.1f} scenarios/s)")
print(f"  jobs={jobs}:  {tn:7.3f} s  ({n / tn:8.1f} scenarios/s)")
print(f"  thread speed-up: {t1 / tn:.2f}x")
