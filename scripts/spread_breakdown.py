#!/usr/bin/env python3
"""Break the spread rows of a saved `make validate` report down (issue 27: std/p99 of ITL and TPOT).

Reads the per-measurement lines ("set gpu model weights/kv engine tp batch in/out metric measured llmsim err%")
and, for the blind sources (those the report's BLIND SOURCES block lists by set), prints
  1. per set x engine x tp x batch: the signed median error of mean/std/p99 ITL and TPOT, and TTFT's median/std;
  2. per set x engine: each scored std_itl row classified by what the p99 says about it —
       tail-low    the p99 ITL itself reads more than 15 % low: the long gaps (prefill-bearing steps, stalls,
                   preemptions) are too short or too few in llmsim;
       beyond-p99  the p99 is within 15 % but the std reads more than 15 % low: the missing variance lives in
                   gaps rarer than 1 % (seconds-long stalls, recomputes);
       std-ok / std-high  within 15 % / more than 15 % high;
     the median share of the measured ITL variance llmsim lacks ((std_m^2 - std_p^2) / std_m^2), and
     "std - mean": the std's signed error less the mean's (near 0 when only the scale is off, not the shape).
Usage: make validate > /tmp/validate.txt; python3 scripts/spread_breakdown.py /tmp/validate.txt [--all]
(--all: every scored set of the per-measurement table, not only the blind ones). Only parses text: no llmsim module needed."""
import argparse
import collections
import re
import statistics

METRIC = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_(itl|tpot|ttft|e2el)_ms$")
COLUMNS = ["mean_itl_ms", "std_itl_ms", "p99_itl_ms", "mean_tpot_ms", "std_tpot_ms", "p99_tpot_ms",
           "median_ttft_ms", "std_ttft_ms"]


def parse(lines, all_sets=False):
    """Scored rows as dicts (set, engine, tp, batch, io, metric, measured, predicted, err), in report order."""
    header = [i for i, l in enumerate(lines) if l.startswith("set ") and " metric " in l]
    if not header:
        raise SystemExit("no per-measurement table (a line starting 'set ... metric') in the report")
    blind_at = next((i for i, l in enumerate(lines) if l.startswith("BLIND SOURCES")), len(lines))
    blind, tables = set(), 0
    for l in lines[blind_at:]:  # the BLIND SOURCES block's own grouped table, not the development blocks after it
        tables += l.startswith("Grouped errors")
        if tables > 1:
            break
        p = l.split()
        if len(p) > 2 and p[0] == "set":
            blind.add(p[1])
    rows = []
    for l in lines[header[-1] + 1:blind_at]:
        p = l.split()
        at = next((i for i, t in enumerate(p) if METRIC.match(t)), None)
        if at is None or at < 8 or len(p) != at + 4:  # a note after the error: unscored or excluded
            continue
        try:
            measured, predicted, err = float(p[at + 1]), float(p[at + 2]), float(p[at + 3])
        except ValueError:
            continue
        # The grouped table truncates set names to 22 characters: match on that prefix.
        if not all_sets and p[0][:22] not in blind:
            continue
        rows.append(dict(set=p[0], engine=p[at - 4], tp=p[at - 3], batch=p[at - 2], io=p[at - 1], metric=p[at],
                         measured=measured, predicted=predicted, err=err))
    return rows


def runs(rows):
    """Rows grouped into runs: consecutive rows of one configuration until a metric repeats."""
    out, cur, key = [], None, None
    for r in rows:
        k = (r["set"], r["engine"], r["tp"], r["batch"], r["io"])
        if cur is None or k != key or r["metric"] in cur:
            cur = {}
            out.append((k, cur))
        key = k
        cur[r["metric"]] = r
    return out


def classify(run):
    s, p = run.get("std_itl_ms"), run.get("p99_itl_ms")
    if s is None:
        return None
    if p is not None and p["err"] < -15:
        return "tail-low"
    if s["err"] < -15:
        return "beyond-p99"
    return "std-ok" if s["err"] <= 15 else "std-high"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report")
    ap.add_argument("--all", action="store_true", help="every scored set, not only the blind ones")
    a = ap.parse_args()
    try:
        with open(a.report, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise SystemExit(f"{a.report}: cannot read the report ({e.strerror})")
    rows = parse(text.split("\n"), a.all)
    groups = collections.defaultdict(list)
    for r in rows:
        groups[(r["set"][:24], r["engine"], "tp" + r["tp"], "b" + r["batch"], r["metric"])].append(r["err"])
    keys = sorted({k[:4] for k in groups})
    print("signed median error % (n) per set x engine x tp x batch (b0: a request rate or a burst)")
    print("%-44s" % "group" + "".join("%14s" % c[:-3] for c in COLUMNS))
    for k in keys:
        cells = []
        for c in COLUMNS:
            v = groups.get(k + (c,))
            cells.append("%7.1f(%3d) " % (statistics.median(v), len(v)) if v else "%14s" % "-")
        print("%-44s" % " ".join(k) + "".join(cells))
    print("\nstd_itl rows by what the p99 says (tail-low: p99 < -15 %; beyond-p99: p99 within, std < -15 %)")
    by = collections.defaultdict(list)
    for k, run in runs(rows):
        c = classify(run)
        if c:
            by[(k[0][:24], k[1])].append((c, run))
    for k in sorted(by):
        counts = collections.Counter(c for c, _ in by[k])
        share = [(r["std_itl_ms"]["measured"] ** 2 - r["std_itl_ms"]["predicted"] ** 2) / r["std_itl_ms"]["measured"] ** 2
                 for _, r in by[k]]
        shape = [r["std_itl_ms"]["err"] - r["mean_itl_ms"]["err"] for _, r in by[k] if "mean_itl_ms" in r]
        print("%-34s %-40s missing variance %+.2f  std - mean %+.1f %%" % (
            " ".join(k), dict(sorted(counts.items())), statistics.median(share),
            statistics.median(shape) if shape else float("nan")))


if __name__ == "__main__":
    main()
