#!/usr/bin/env python3
"""What-if for issue 27 (V0 ITL/TPOT tails): vLLM 0.5.4-0.5.5's chunked-prefill running-queue order.

An investigation aid, not a prediction path: llmsim's engine does not simulate this order (docs/engine.md, `chunked`,
"Not modelled: vLLM 0.5.4-0.5.5's running-queue order"; `llmsim check` says so). It replays one vLLM result file's
request lengths (Poisson arrivals at its request_rate, seeded) through a small model of V0's `_schedule_chunked_prefill`
twice, with every step priced by llmsim's own cost model (`llmsim step --json` over a grid of decode sequences x
prefill tokens, bilinear between grid points; nothing read from the result file but its lengths and rate):
  B  the running queue appended decodes, then running chunked prefills, then new prompts (vllm#7874, 0.6.0+;
     what llmsim's `chunked` policy simulates: every decoder decodes every step);
  A  new prompts first, then decodes, then running chunked prefills (0.5.4-0.5.5): the walk (`_schedule_running`,
     `if num_running_tokens == 0: break`) serves a prompt carried over with part of its chunk before the decodes, and
     the decoders the budget no longer covers skip the step and lead the next walk.
Prints ITL mean/median/p99/std, mean and p99 TPOT and duration for the measured file, B and A. B should land near
`llmsim check`'s prediction for the same run (it is the same policy on the same step times, without preemption,
the output processor's extra step or step-time context detail); A - B is what the order would change.

Usage: python3 scripts/whatif_v0_running_order.py RESULT.json --model llama-3.1-70b --gpu l40s-48gb --tp 8
           [--quant fp8-dynamic] [--engine vllm==0.5.5] [--budget 512] [--max-num-seqs 256] [--llmsim build/bin/llmsim]
"""
import argparse
import bisect
import json
import random
import statistics
import subprocess
from collections import deque

DECODES = (0, 8, 16, 32, 64, 96, 128, 160, 192, 256, 384, 512)
PREFILLS = (0, 32, 64, 128, 256, 384, 512, 1024, 2048)


def step_grid(a, mean_in, mean_ctx):
    """llmsim's step time (s) on a grid of (decoding sequences, prefill tokens) within the token budget."""
    grid = {}
    for d in DECODES:
        for p in PREFILLS:
            if (d == 0 and p == 0) or d > a.max_num_seqs or p > a.budget:
                continue
            cmd = [a.llmsim, "step", "--model", a.model, "--gpu", a.gpu, "--tp", str(a.tp), "--engine", a.engine,
                   "--quant", a.quant, "--json"]
            if p:
                cmd += ["--prefill-tokens", str(p), "--prefill-context", str(mean_in // 2)]
            if d:
                cmd += ["--decode-seqs", str(d), "--context", str(mean_ctx)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            grid[(d, p)] = json.loads(out)["time_ms"] / 1e3
    return grid


def make_cost(grid):
    ds = sorted({k[0] for k in grid})
    ps = sorted({k[1] for k in grid})

    def around(xs, x):
        i = max(1, min(len(xs) - 1, bisect.bisect_left(xs, x)))
        return xs[i - 1], xs[i]

    def at(d, p):
        if (d, p) in grid:
            return grid[(d, p)]
        return grid[(d, ps[1])] if d == 0 else grid[(ds[1], p)]  # the empty corner: its nearest neighbour

    def cost(d, p):
        d0, d1 = around(ds, d)
        p0, p1 = around(ps, p)
        fd, fp = (d - d0) / (d1 - d0), (p - p0) / (p1 - p0)
        return (at(d0, p0) * (1 - fd) * (1 - fp) + at(d1, p0) * fd * (1 - fp) + at(d0, p1) * (1 - fd) * fp
                + at(d1, p1) * fd * fp)
    return cost


def replay(order, rate, ins, outs, cost, budget, max_num_seqs, seed=0):
    n = len(ins)
    rnd = random.Random(seed)
    t, arrivals = 0.0, []
    for _ in range(n):
        t += rnd.expovariate(rate)
        arrivals.append(t)
    waiting, running, state = deque(), deque(), {}
    now, nxt, done, itl, tpot, first = 0.0, 0, 0, [], [], {}
    while done < n:
        while nxt < n and arrivals[nxt] <= now:
            waiting.append(nxt)
            state[nxt] = {"pre": ins[nxt], "out": max(1, outs[nxt]), "last": None}
            nxt += 1
        if not waiting and not running:
            now = arrivals[nxt]
            continue
        left, decodes, chunks = budget, [], []
        while running:  # _schedule_running: the walk stops at the first group the budget cannot serve
            i = running[0]
            s = state[i]
            need = 1 if s["pre"] == 0 else min(s["pre"], left)
            if left == 0 or need == 0:
                break
            running.popleft()
            left -= need
            (decodes.append(i) if s["pre"] == 0 else chunks.append((i, need)))
        leftover, admitted = list(running), []
        while waiting and left > 0 and len(leftover) + len(decodes) + len(chunks) + len(admitted) < max_num_seqs:
            i = waiting.popleft()
            c = min(state[i]["pre"], left)
            left -= c
            admitted.append((i, c))
        now += cost(len(decodes), sum(c for _, c in chunks) + sum(c for _, c in admitted))
        still_decoding, still_chunked, new = [], [], []
        for i in decodes:
            s = state[i]
            itl.append(now - s["last"])
            s["last"] = now
            s["out"] -= 1
            if s["out"] == 0:
                done += 1
                if outs[i] > 1:
                    tpot.append((now - first[i]) / (outs[i] - 1))
            else:
                still_decoding.append(i)
        for group, into in ((chunks, still_chunked), (admitted, new)):
            for i, c in group:
                s = state[i]
                s["pre"] -= c
                if s["pre"] == 0:
                    s["last"] = first[i] = now
                    s["out"] -= 1
                    if s["out"] == 0:
                        done += 1
                        continue
                into.append(i)
        running = deque(leftover + (new + still_decoding + still_chunked if order == "A"
                                    else still_decoding + still_chunked + new))
    itl.sort()
    tpot.sort()
    q = lambda xs, p: xs[int(p * (len(xs) - 1))]
    return {"mean_itl": statistics.mean(itl) * 1e3, "median_itl": q(itl, 0.5) * 1e3, "p99_itl": q(itl, 0.99) * 1e3,
            "std_itl": statistics.pstdev(itl) * 1e3, "mean_tpot": statistics.mean(tpot) * 1e3,
            "p99_tpot": q(tpot, 0.99) * 1e3, "duration": now}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result")
    ap.add_argument("--model", required=True)
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--tp", type=int, default=1)
    ap.add_argument("--quant", default="auto")
    ap.add_argument("--engine", default="vllm==0.5.5")
    ap.add_argument("--budget", type=int, default=512)
    ap.add_argument("--max-num-seqs", type=int, default=256)
    ap.add_argument("--llmsim", default="build/bin/llmsim")
    a = ap.parse_args()
    r = json.load(open(a.result))
    ins, outs, rate = r["input_lens"], r["output_lens"], float(r["request_rate"])
    mean_in = sum(ins) // len(ins)
    cost = make_cost(step_grid(a, mean_in, mean_in + sum(outs) // (2 * len(outs))))
    keys = ["mean_itl", "median_itl", "p99_itl", "std_itl", "mean_tpot", "p99_tpot", "duration"]
    print("%-10s" % "" + "".join("%12s" % k for k in keys))
    print("%-10s" % "measured" + "".join("%12.1f" % r[k + "_ms" if k != "duration" else k] for k in keys))
    for order, label in (("B", "B (0.6.0+)"), ("A", "A (0.5.4-5)")):
        res = replay(order, rate, ins, outs, cost, a.budget, a.max_num_seqs)
        print("%-10s" % label + "".join("%12.1f" % res[k] for k in keys))


if __name__ == "__main__":
    main()
