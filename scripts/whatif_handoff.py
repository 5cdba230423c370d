#!/usr/bin/env python3
"""What a burst's tails would be if the API server handed its requests to the engine one at a time (issue 27).

A what-if, not a rule of the model: it changes no prediction. `llmsim check RESULT.json --run 0 --scenario-out S.json`
replays a burst (request_rate inf) as an inline trace whose requests all arrive at t = 0, so the engine takes them
all in its first step. The per-request arrays of surajssd's vLLM 0.8.3 burst say the engine received them in the
client's send order, over ~0.2 s (scripts/request_tails.py: first tokens in waves, TTFT rising with the send index).
This script re-runs S.json with request k reaching the engine at lead + k x handoff (the client's list order, a FIFO
of `handoff` seconds per request on the server's one event loop), for each --handoff-ms given, and prints TTFT
(timed from the send, t = 0, as the client does) and TPOT next to the measured file's summary. TPOT is per request
(last - first token) / (output - 1), requests with one output token left out, as the benchmark clients compute it.
Usage: python3 scripts/whatif_handoff.py S.json RESULT.json [--llmsim build/bin/llmsim] [--handoff-ms 0.5 1.0]
       [--lead-ms 0]
Runs the llmsim binary given (default build/bin/llmsim); writes only temporary files."""
import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import tempfile


def pct(xs, p):
    s = sorted(xs)
    k = (len(s) - 1) * p / 100
    lo = math.floor(k)
    return s[lo] + (s[min(lo + 1, len(s) - 1)] - s[lo]) * (k - lo)


def staggered(scenario, lead_s, handoff_s):
    """The scenario with request k of its inline trace arriving at lead + k x handoff (a copy)."""
    s = json.loads(json.dumps(scenario))
    try:
        reqs = s["workload"]["arrival"]["requests"]
    except (KeyError, TypeError):
        raise SystemExit("the scenario has no inline trace (workload.arrival.requests): write it with "
                         "`llmsim check RESULT.json --run 0 --scenario-out S.json`")
    if not reqs or any(not isinstance(r, list) or len(r) != 3 for r in reqs):
        raise SystemExit("workload.arrival.requests: expected [[arrival_s, input, output], ...]")
    if any(r[0] != reqs[0][0] for r in reqs):
        raise SystemExit("workload.arrival.requests: the arrivals differ; this what-if is for a burst (all at once)")
    for k, r in enumerate(reqs):
        r[0] = lead_s + k * handoff_s
    return s


def tails(rows):
    done = [r for r in rows if r["outcome"] == "completed" and r["warmup"] != "1"]
    ttft = [float(r["first_token_s"]) * 1e3 for r in done]  # from the send at t = 0 (the path included)
    tpot = [(float(r["finish_s"]) - float(r["first_token_s"])) * 1e3 / (int(r["output_tokens"]) - 1)
            for r in done if int(r["output_tokens"]) > 1]
    return {"mean_ttft_ms": statistics.fmean(ttft), "median_ttft_ms": pct(ttft, 50),
            "std_ttft_ms": statistics.pstdev(ttft), "p99_ttft_ms": pct(ttft, 99),
            "mean_tpot_ms": statistics.fmean(tpot), "median_tpot_ms": pct(tpot, 50),
            "std_tpot_ms": statistics.pstdev(tpot), "p99_tpot_ms": pct(tpot, 99)}


KEYS = ["mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p99_ttft_ms",
        "mean_tpot_ms", "median_tpot_ms", "std_tpot_ms", "p99_tpot_ms"]


def line(name, t):
    return f"{name:34s}" + "".join(f"{t[k]:14.1f}" for k in KEYS)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenario", help="llmsim check --scenario-out of the burst")
    ap.add_argument("result", help="the measured vllm bench serve / benchmark_serving.py result file")
    ap.add_argument("--llmsim", default=os.path.join("build", "bin", "llmsim"))
    ap.add_argument("--handoff-ms", type=float, nargs="+", default=[0.5, 1.0])
    ap.add_argument("--lead-ms", type=float, default=0.0)
    a = ap.parse_args(argv)
    if any(not (h >= 0) for h in a.handoff_ms) or not a.lead_ms >= 0:
        raise SystemExit("--handoff-ms and --lead-ms must be >= 0")
    try:
        with open(a.scenario, encoding="utf-8") as f:
            scenario = json.load(f)
        with open(a.result, encoding="utf-8") as f:
            measured = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"cannot read the scenario or the result: {e}")
    missing = [k for k in KEYS if k not in measured]
    if missing:
        raise SystemExit(f"{a.result}: no {', '.join(missing)}")
    print(f"{'':34s}" + "".join(f"{k.replace('_ms', ''):>14s}" for k in KEYS) + "   (ms)")
    print(line("measured", measured))
    out = {"measured": {k: measured[k] for k in KEYS}}
    with tempfile.TemporaryDirectory() as tmp:
        for label, lead, h in [("llmsim, all at t = 0", 0.0, 0.0)] + [
                (f"handoff {h:g} ms/request" + (f", lead {a.lead_ms:g}" if a.lead_ms else ""), a.lead_ms, h)
                for h in a.handoff_ms]:
            sp, rp = os.path.join(tmp, "s.json"), os.path.join(tmp, "r.csv")
            with open(sp, "w", encoding="utf-8") as f:
                json.dump(staggered(scenario, lead * 1e-3, h * 1e-3), f)
            r = subprocess.run([a.llmsim, "simulate", sp, "--requests-csv", rp], capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(f"{a.llmsim} simulate failed ({r.returncode}): {r.stderr.strip()[:500]}")
            with open(rp, newline="", encoding="utf-8") as f:
                t = tails(list(csv.DictReader(f)))
            print(line(label, t))
            out[label] = t
    return out


if __name__ == "__main__":
    main()
