#!/usr/bin/env python3
"""Where a measured run's TTFT/ITL tail sits, from its per-request arrays (issue 27, the tails' shape).

Reads one `vllm bench serve --save-result` / benchmark_serving.py result file that keeps its per-request arrays
(`ttfts`, `input_lens`, `output_lens`; `itls` only with --save-detailed or the releases that kept it) and, with
--sim, the `--requests-csv` of llmsim's simulation of the same run (`llmsim check FILE --run 0 --scenario-out S.json`,
then `llmsim simulate S.json --requests-csv R.csv`). It prints, for the measurement and for llmsim alike:
  ttft    percentiles, std, and the least-squares slope of TTFT on the prompt length (ms per 1k tokens) with the
          share of the TTFT variance that slope explains: a length-driven spread (prefill cost) versus one the
          prompt does not explain (queueing, the frontend, step boundaries);
  waves   for a burst (request_rate inf, or --burst): everything was sent at t = 0, so the sorted TTFTs are the
          times the first tokens came out. They are split into waves where two consecutive first tokens lie more
          than --wave-gap ms apart (default 20): the wave sizes and times, and the share of the TTFT variance
          between waves. Waves are engine steps that took whatever had reached the engine when they started; a
          first token alone ahead of the first wave, waves that grow step by step and TTFT rising with the send
          order (Spearman's rank correlation with the request's index in the file, printed) are the signature of
          a frontend handing the burst to the engine one request at a time (its per-request cost ~ the requests a
          wave took over the previous wave's length); llmsim's simulation of the same burst is the comparison;
  itl     (measured only, when the file has `itls`): the pooled gaps' median, mean, std, p99; the long gaps
          (> --long x the median: default 2) by count, share of the pooled variance, position in the request
          (the gap after the first token, the last gap, in between), and their size over the median (integer
          multiples: several engine steps merged into one chunk; about one prefill chunk's time: a step that
          carried a prefill chunk); for a burst also whether they coincide across requests in wall time (a global
          engine event: a prefill step, a GC pause) or are each request's own.
Usage: python3 scripts/request_tails.py RESULT.json [--sim R.csv] [--burst] [--wave-gap 20] [--long 2] [--json]
Only parses text: no llmsim module needed."""
import argparse
import csv
import json
import math
import statistics


def load_measured(path):
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
    except OSError as e:
        raise SystemExit(f"{path}: cannot read ({e.strerror})")
    except ValueError as e:
        raise SystemExit(f"{path}: not a JSON result file ({e})")
    if not isinstance(d, dict) or not isinstance(d.get("ttfts"), list):
        raise SystemExit(f"{path}: no per-request 'ttfts' list (saved without the per-request arrays?)")
    n = len(d["ttfts"])
    for key in ("input_lens", "output_lens", "itls", "errors"):
        if key in d and (not isinstance(d[key], list) or len(d[key]) != n):
            raise SystemExit(f"{path}: '{key}' has {len(d[key]) if isinstance(d[key], list) else 'no'} entries, "
                             f"'ttfts' {n}")
    errors = d.get("errors") or [""] * n
    ok = [i for i in range(n) if not errors[i] and isinstance(d["ttfts"][i], (int, float)) and d["ttfts"][i] > 0]
    reqs = []
    for i in ok:
        r = {"index": i, "ttft": d["ttfts"][i] * 1e3, "input": (d.get("input_lens") or [None] * n)[i],
             "output": (d.get("output_lens") or [None] * n)[i]}
        if "itls" in d:
            gaps = d["itls"][i]
            if not isinstance(gaps, list) or not all(isinstance(g, (int, float)) for g in gaps):
                raise SystemExit(f"{path}: itls[{i}] is not a list of numbers")
            r["itls"] = [g * 1e3 for g in gaps]
        reqs.append(r)
    rate = d.get("request_rate")
    burst = rate in ("inf", None) or (isinstance(rate, (int, float)) and math.isinf(rate))
    if isinstance(rate, str):
        try:
            burst = math.isinf(float(rate))
        except ValueError:
            raise SystemExit(f"{path}: request_rate '{rate}' is not a number")
    return reqs, burst and d.get("max_concurrency") in (None, 0), n - len(ok)


def load_sim(path):
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise SystemExit(f"{path}: cannot read ({e.strerror})")
    need = ("arrival_s", "first_token_s", "input_tokens", "output_tokens", "outcome", "warmup")
    if not rows or any(c not in rows[0] for c in need):
        raise SystemExit(f"{path}: no rows or missing columns (expected {', '.join(need)})")
    reqs = []
    for line, r in enumerate(rows, start=2):
        if r["outcome"] != "completed" or r["warmup"] == "1":
            continue
        try:
            reqs.append({"index": int(r["id"]) if "id" in r else len(reqs),
                         "ttft": (float(r["first_token_s"]) - float(r["arrival_s"])) * 1e3,
                         "input": int(r["input_tokens"]), "output": int(r["output_tokens"])})
        except ValueError:
            raise SystemExit(f"{path}:{line}: a number column does not parse")
    return reqs


def pct(xs, p):
    """numpy's default (linear) percentile, as the benchmark clients compute it."""
    s = sorted(xs)
    if not s:
        return float("nan")
    k = (len(s) - 1) * p / 100
    lo = math.floor(k)
    return s[lo] + (s[min(lo + 1, len(s) - 1)] - s[lo]) * (k - lo)


def pstd(xs):
    return statistics.pstdev(xs) if len(xs) > 1 else 0.0


def length_fit(reqs):
    """Least-squares TTFT = a + b * prompt: b in ms per 1k tokens and the share of the TTFT variance it explains."""
    pts = [(r["input"], r["ttft"]) for r in reqs if r["input"] is not None]
    if len(pts) < 3:
        return None
    mx = statistics.fmean(p[0] for p in pts)
    my = statistics.fmean(p[1] for p in pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    syy = sum((y - my) ** 2 for _, y in pts)
    lo, hi = min(p[0] for p in pts), max(p[0] for p in pts)
    if sxx == 0 or syy == 0:
        return {"ms_per_1k": 0.0, "r2": 0.0, "prompt_min": lo, "prompt_max": hi}
    sxy = sum((x - mx) * (y - my) for x, y in pts)
    return {"ms_per_1k": sxy / sxx * 1e3, "r2": sxy * sxy / (sxx * syy), "prompt_min": lo, "prompt_max": hi}


def ranks(xs):
    """Average ranks (ties share theirs), for a rank correlation."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2
        i = j + 1
    return r


def send_order_correlation(reqs):
    """Spearman's rank correlation of TTFT with the send index: near 1 when the requests of a burst reached the engine
    one at a time in the order the client sent them (a FIFO in front of the engine), near 0 when all at once."""
    if len(reqs) < 3:
        return None
    a, b = ranks([r["index"] for r in reqs]), ranks([r["ttft"] for r in reqs])
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    sab = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    saa = sum((x - ma) ** 2 for x in a)
    sbb = sum((y - mb) ** 2 for y in b)
    return sab / math.sqrt(saa * sbb) if saa > 0 and sbb > 0 else 0.0


def waves(ttfts, gap_ms):
    """Sorted first-token times split where consecutive ones lie more than gap_ms apart."""
    s = sorted(ttfts)
    out, start = [], 0
    for i in range(1, len(s) + 1):
        if i == len(s) or s[i] - s[i - 1] > gap_ms:
            out.append({"n": i - start, "first": s[start], "last": s[i - 1]})
            start = i
    total = sum((t - statistics.fmean(s)) ** 2 for t in s)
    within, at = 0.0, 0
    for w in out:
        part = s[at:at + w["n"]]
        at += w["n"]
        m = statistics.fmean(part)
        within += sum((t - m) ** 2 for t in part)
    return out, (1 - within / total) if total > 0 else 0.0


def ttft_block(reqs, burst, gap_ms):
    t = [r["ttft"] for r in reqs]
    b = {"n": len(t), "mean": statistics.fmean(t), "median": pct(t, 50), "std": pstd(t), "p90": pct(t, 90),
         "p99": pct(t, 99), "max": max(t), "length_fit": length_fit(reqs)}
    if burst:
        w, between = waves(t, gap_ms)
        b["waves"] = w
        b["between_wave_share"] = between
        b["send_order_rank_correlation"] = send_order_correlation(reqs)
    return b


def itl_block(reqs, burst, long_x):
    per = [r["itls"] for r in reqs if r.get("itls")]
    pooled = [g for gaps in per for g in gaps]
    if not pooled:
        return None
    med, mean = pct(pooled, 50), statistics.fmean(pooled)
    var_sum = sum((g - mean) ** 2 for g in pooled)
    long_gaps, where = [], {"after_first": 0, "last": 0, "middle": 0}
    events = []  # (wall time at the gap's end, request) for a burst, where the requests started together
    for k, (r, gaps) in enumerate(((r, r["itls"]) for r in reqs if r.get("itls"))):
        t = r["ttft"]
        for j, g in enumerate(gaps):
            t += g
            if g > long_x * med:
                long_gaps.append(g)
                where["after_first" if j == 0 else "last" if j == len(gaps) - 1 else "middle"] += 1
                events.append((t, k))
    long_var = sum((g - mean) ** 2 for g in long_gaps)
    ratios = [g / med for g in long_gaps] if med > 0 else []
    near_int = sum(1 for x in ratios if abs(x - round(x)) < 0.15) if ratios else 0
    b = {"gaps": len(pooled), "median": med, "mean": mean, "std": pstd(pooled), "p99": pct(pooled, 99),
         "long": len(long_gaps), "long_share_of_gaps": len(long_gaps) / len(pooled),
         "long_share_of_variance": long_var / var_sum if var_sum > 0 else 0.0,
         "long_over_median_p50": pct(ratios, 50) if ratios else None,
         "long_over_median_max": max(ratios) if ratios else None,
         "long_near_integer_multiple": near_int, "long_where": where,
         "max_gap_per_request_median": pct([max(g) for g in per], 50)}
    if burst and events:
        events.sort()
        # Long gaps ending within one median gap of each other, across requests, count as one engine event.
        groups, cur = [], [events[0]]
        for e in events[1:]:
            if e[0] - cur[-1][0] <= med:
                cur.append(e)
            else:
                groups.append(cur)
                cur = [e]
        groups.append(cur)
        b["long_events"] = len(groups)
        b["long_requests_per_event_median"] = pct([len({k for _, k in g}) for g in groups], 50)
    return b


def fmt_ttft(name, b):
    lf = b["length_fit"]
    s = (f"  {name:9s} n {b['n']:5d}  mean {b['mean']:9.1f}  median {b['median']:9.1f}  std {b['std']:8.1f}  "
         f"p90 {b['p90']:9.1f}  p99 {b['p99']:9.1f}  max {b['max']:9.1f} ms")
    if lf:
        s += (f"\n  {'':9s} TTFT on prompt length ({lf['prompt_min']}-{lf['prompt_max']} tokens): "
              f"{lf['ms_per_1k']:+.1f} ms per 1k tokens, explains {100 * lf['r2']:.0f} % of its variance")
    if "waves" in b:
        w = b["waves"]
        shown = ", ".join(f"{x['n']} @ {x['first']:.0f}-{x['last']:.0f}" for x in w[:8])
        more = f" (+{len(w) - 8} more)" if len(w) > 8 else ""
        s += (f"\n  {'':9s} {len(w)} wave(s) of first tokens (requests @ ms): {shown}{more}; "
              f"between-wave share of the TTFT variance {100 * b['between_wave_share']:.0f} %; "
              f"rank correlation of TTFT with the send order {b['send_order_rank_correlation']:+.2f}")
    return s


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("result", help="vllm bench serve / benchmark_serving.py --save-result JSON with 'ttfts'")
    ap.add_argument("--sim", help="llmsim simulate --requests-csv of the same run")
    ap.add_argument("--burst", action="store_true", help="treat the run as a burst (all requests sent at t = 0)")
    ap.add_argument("--wave-gap", type=float, default=20.0, help="ms between first tokens that starts a new wave")
    ap.add_argument("--long", type=float, default=2.0, help="a long gap is longer than this x the median gap")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    a = ap.parse_args(argv)
    if not a.wave_gap > 0 or not a.long > 1:
        raise SystemExit("--wave-gap must be > 0 and --long > 1")
    reqs, burst, dropped = load_measured(a.result)
    if not reqs:
        raise SystemExit(f"{a.result}: no successful request with a first token")
    burst = burst or a.burst
    out = {"burst": burst, "dropped": dropped, "measured": {"ttft": ttft_block(reqs, burst, a.wave_gap),
                                                            "itl": itl_block(reqs, burst, a.long)}}
    if a.sim:
        sim = load_sim(a.sim)
        if not sim:
            raise SystemExit(f"{a.sim}: no completed request")
        out["llmsim"] = {"ttft": ttft_block(sim, burst, a.wave_gap)}
    if a.json:
        print(json.dumps(out, indent=1))
        return out
    print(f"{a.result}: {len(reqs)} requests with a first token ({dropped} failed or without one); "
          f"{'burst (sent at t = 0)' if burst else 'not a burst'}")
    print("TTFT")
    print(fmt_ttft("measured", out["measured"]["ttft"]))
    if "llmsim" in out:
        print(fmt_ttft("llmsim", out["llmsim"]["ttft"]))
    it = out["measured"]["itl"]
    if it:
        print("ITL (measured)")
        print(f"  {it['gaps']} gaps: median {it['median']:.1f}  mean {it['mean']:.1f}  std {it['std']:.1f}  "
              f"p99 {it['p99']:.1f} ms; per request the longest gap's median {it['max_gap_per_request_median']:.1f} ms")
        print(f"  long gaps (> {a.long:g} x median): {it['long']} ({100 * it['long_share_of_gaps']:.2f} % of gaps, "
              f"{100 * it['long_share_of_variance']:.0f} % of the pooled variance); size over the median: "
              f"median {it['long_over_median_p50'] or 0:.2f}, max {it['long_over_median_max'] or 0:.2f}, "
              f"{it['long_near_integer_multiple']} within 0.15 of a whole number; where: {it['long_where']}")
        if "long_events" in it:
            print(f"  in wall time: {it['long_events']} events, median {it['long_requests_per_event_median']:.0f} "
                  f"request(s) each (many: a global engine event; one: each request's own)")
    return out


if __name__ == "__main__":
    main()
