#!/usr/bin/env python3
"""Sweep `llmsim.step` over prefill tokens (and decode batch size) and print every place where a bigger step costs
less than a smaller one (issue 29/27: step cost must be non-decreasing in tokens). Usage:
PYTHONPATH=build/python python3 scripts/step_monotone_sweep.py [--max 8192] [--stride 1]"""
import argparse

import llmsim

CONFIGS = [  # model, gpu, quant, tp
    ("llama-3.1-8b", "h100-80gb-sxm", "fp16", 1),
    ("llama-3.1-8b", "a100-80gb-sxm", "fp16", 1),
    ("llama-3.1-8b", "rtx4090-24gb", "fp16", 1),
    ("llama-3.1-8b", "h100-80gb-sxm", "fp8", 1),
    ("llama-3.1-70b", "h100-80gb-sxm", "fp16", 4),
    ("llama-3.1-70b", "a100-80gb-sxm", "fp16", 4),
    ("qwen2.5-7b", "l40s-48gb", "fp16", 1),
]


def sweep(model, gpu, quant, tp, hi, stride, kind):
    prev, drops = None, []
    for n in range(1, hi + 1, stride):
        kw = dict(prefill_tokens=n) if kind == "prefill" else dict(decode_seqs=n, context=512)
        try:
            t = llmsim.step(model=model, gpu=gpu, quant=quant, tp=tp, max_model_len=16384, **kw)["time_ms"]
        except ValueError as e:
            print(f"  {kind} {n}: {e}")
            break
        if prev is not None and t < prev[1] * (1 - 1e-12):
            drops.append((prev[0], n, prev[1], t))
        prev = (n, t)
    worst = min(drops, key=lambda d: d[3] / d[2]) if drops else None
    print(f"{model} {gpu} {quant} tp{tp} {kind}: {len(drops)} drops" +
          (f"; worst {worst[0]}->{worst[1]}: {worst[2]:.4f} -> {worst[3]:.4f} ms ({100 * (worst[3] / worst[2] - 1):+.2f} %)"
           if worst else ""))
    return drops


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=int, default=8192)
    ap.add_argument("--stride", type=int, default=1)
    a = ap.parse_args()
    total = 0
    for cfg in CONFIGS:
        total += len(sweep(*cfg, a.max, a.stride, "prefill"))
        total += len(sweep(*cfg, min(a.max, 1024), a.stride, "decode"))
    print("total drops:", total)
