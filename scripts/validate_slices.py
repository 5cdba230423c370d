#!/usr/bin/env python3
"""Slice the residuals of `make validate` by any columns (docs/trust.md, "Fidelity against public measurements").

    LLMSIM_VALIDATE_TSV=/tmp/rows.tsv build/bin/test_validation "[validate]" > /dev/null
    scripts/validate_slices.py /tmp/rows.tsv --where runtime=vllm-v0 --by set family
    scripts/validate_slices.py /tmp/rows.tsv --where set=livinfly-a100pcie-vllm091-sglang047 engine=vllm --by mode rate family

Reads the TSV the validation report writes (tests/validation/report.hpp, write_rows_tsv): one row per measurement with
its file:line ("where"), conditions, measured and predicted values and the time-scale error (+ = llmsim slower).
Only scored engine rows of blind sources are sliced unless --all is given. Derived columns:
  family  the metric's family: ttft, tpot, itl, e2e, latency, throughput, other
  stat    mean / median / std / pNN / other (the metric's first word)
  file    "where" without its line
  rate, mode, dataset, num_prompts
          for rows read from a JSON-lines serving file (SGLang bench_serving, `vllm bench serve --append-result`):
          the line's request_rate, "offline" (rate inf) or "online", dataset_name and completed requests; for rows
          read from a printed `vllm bench serve` summary ("file.md:LINE", tests/validation/corpus/printed_serve.cpp):
          "closed" (the block prints a maximum request concurrency) or "burst" (every prompt sent at once), its
          mean input/output tokens per request to two/one digits ("220/200") and its successful requests
  concurrency
          a printed summary's "Maximum request concurrency" ("inf" where the block has none), else "-"
  out_tps the measured output token throughput (tok/s) of the row's run, in decades and halves (<300, 300-1k,
          1k-3k, 3k-10k, >=10k), where the run's summary or JSON line gives it, else "-"
Each slice prints n, the signed median and the median |error|, as `make validate` groups them.

    scripts/validate_slices.py /tmp/rows.tsv --start-delay --where set=gpustack-perflab

prints instead, per run of short replies (mean output <= 16 tokens, e.g. GPUStack's 1,000 x 128/4 bursts) that
reports its duration T and mean TTFT, the delay before its first tokens flowed, D = 2 * mean TTFT - T, measured and
predicted (docs/cost-model.md, "GPUStack's vLLM bursts read by hand"): a reply's few decode tokens ride the prefill
steps, so first tokens leave in FIFO order from D to about T and their mean is (D + T) / 2. Every row of a run counts
here, scored or not (its duration is a derived, unscored row).
"""
import argparse
import csv
import json
import math
import os
import statistics
import sys

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "validation", "corpus")


def family(metric):
    for k in ("ttft", "tpot", "itl", "e2e", "latency", "throughput"):
        if k in metric:
            return k
    return "other"


_lines = {}


def serve_line(where):
    """The JSON object on the line a corpus row names ("dir/file.jsonl:N[:...]"), or None."""
    parts = where.split(":")
    if len(parts) < 2 or not parts[0].endswith(".jsonl") or not parts[1].isdigit():
        return None
    path = os.path.join(CORPUS, parts[0])
    if path not in _lines:
        try:
            with open(path) as f:
                _lines[path] = [json.loads(x) for x in f if x.strip()]
        except (OSError, ValueError):
            _lines[path] = []
    n = int(parts[1])
    return _lines[path][n - 1] if 0 < n <= len(_lines[path]) else None


_blocks = {}


def printed_block(where):
    """The `vllm bench serve` summary printed at a corpus row's "dir/file.md:LINE[:...]": {label: value}, or None."""
    parts = where.split(":")
    if len(parts) < 2 or not parts[0].endswith(".md") or not parts[1].isdigit():
        return None
    path = os.path.join(CORPUS, parts[0])
    if path not in _blocks:
        try:
            with open(path) as f:
                _blocks[path] = f.read().splitlines()
        except OSError:
            _blocks[path] = []
    lines, out = _blocks[path], {}
    for line in lines[int(parts[1]) - 1:]:
        line = line.strip()
        if line.startswith("=====") and out:
            break
        if ":" in line:
            k, v = line.rsplit(":", 1)
            out[k.strip()] = v.strip()
    return out or None


def mean_lengths(b):
    """A printed summary's mean input and output tokens per request, to two and one significant digits ("220/200")."""
    try:
        n = float(b["Successful requests"])
        lens = (float(b["Total input tokens"]) / n, float(b["Total generated tokens"]) / n)
    except (KeyError, ValueError, ZeroDivisionError):
        return "-"
    return f"{float(f'{lens[0]:.2g}'):g}/{float(f'{lens[1]:.1g}'):g}"


def tps_bucket(v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        return "-"
    for hi, name in ((300, "<300"), (1000, "300-1k"), (3000, "1k-3k"), (10000, "3k-10k")):
        if v < hi:
            return name
    return ">=10k"


def derive(row):
    row["family"] = family(row["metric"])
    row["stat"] = row["metric"].split("_")[0]
    row["file"] = row["where"].split(":")[0]
    j = serve_line(row["where"])
    rate = j.get("request_rate") if j else None
    if isinstance(rate, str) or (isinstance(rate, float) and math.isinf(rate)):
        rate = "inf"
    row["rate"] = "-" if rate is None else str(rate)
    row["mode"] = "-" if rate is None else ("offline" if rate == "inf" else "online")
    row["dataset"] = str(j.get("dataset_name", "-")) if j else "-"
    row["num_prompts"] = str(j.get("completed", "-")) if j else "-"
    row["concurrency"] = "-"
    row["out_tps"] = tps_bucket(j.get("output_throughput")) if j else "-"
    b = printed_block(row["where"]) if not j else None
    if b:
        conc = b.get("Maximum request concurrency")
        row["concurrency"] = conc if conc else "inf"
        row["mode"] = "closed" if conc else "burst"
        row["num_prompts"] = b.get("Successful requests", "-")
        row["dataset"] = mean_lengths(b)
        row["out_tps"] = tps_bucket(b.get("Output token throughput (tok/s)"))
    return row


MAX_SHORT_OUTPUT = 16  # tokens per request: decode rides the prefill steps (start_delays)


def start_delays(rows, filters=()):
    """Per run of short replies with a duration and a mean TTFT: T, D = 2 * mean TTFT - T (s), measured and predicted,
    and the mean TPOT's measured / predicted ratio where the run reports it. Sorted by "where"."""
    runs = {}
    for r in rows:
        r = derive(dict(r))
        if any(r.get(col) != val for col, val in filters):
            continue
        try:
            out, m, p = float(r["output"]), float(r["measured"]), float(r["predicted"])
        except (KeyError, ValueError):
            continue
        if out > MAX_SHORT_OUTPUT:
            continue
        run = runs.setdefault(r["where"], {"where": r["where"], "set": r["set"], "engine": r["engine"],
                                           "model": r["model"], "gpu": r["gpu"], "tp": r["tp"]})
        run[r["metric"]] = (m, p)
    table = []
    for where in sorted(runs):
        run = runs[where]
        if "duration" not in run or "mean_ttft_ms" not in run or run["duration"][1] <= 0:
            continue
        (tm, tp), (fm, fp) = run["duration"], run["mean_ttft_ms"]
        tpot = run.get("mean_tpot_ms")
        table.append({k: run[k] for k in ("where", "set", "engine", "model", "gpu", "tp")} |
                     {"T": tm, "T_pred": tp, "D": 2 * fm / 1000 - tm, "D_pred": 2 * fp / 1000 - tp,
                      "tpot_ratio": tpot[0] / tpot[1] if tpot and tpot[1] > 0 else None})
    return table


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tsv")
    ap.add_argument("--where", nargs="*", default=[], metavar="COL=VALUE", help="keep rows whose column equals VALUE")
    ap.add_argument("--by", nargs="*", default=["set"], metavar="COL", help="columns to group by (default: set)")
    ap.add_argument("--all", action="store_true", help="also unscored rows and development sources")
    ap.add_argument("--start-delay", action="store_true",
                    help="per run of short replies: the delay before its first tokens, D = 2 * mean TTFT - T")
    args = ap.parse_args()
    with open(args.tsv, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if not rows:
        sys.exit(f"{args.tsv}: no rows")
    filters = []
    for w in args.where:
        if "=" not in w:
            sys.exit(f"--where {w}: expected COL=VALUE")
        filters.append(w.split("=", 1))
    if args.start_delay:
        known = derive(dict(rows[0]))
        for col, _ in filters:
            if col not in known:
                sys.exit(f"--where {col}: no such column (columns: {', '.join(sorted(known))})")
        table = start_delays(rows, filters)
        if not table:
            sys.exit(f"no run of replies of <= {MAX_SHORT_OUTPUT} tokens with a duration and a mean TTFT matches")
        print(f"{'where':<48} {'engine':<7} {'model':<16} {'gpu':<15} tp  T meas  T pred  D meas  D pred  TPOT m/p")
        for t in table:
            ratio = f"{t['tpot_ratio']:.2f}" if t["tpot_ratio"] is not None else "-"
            where = t["where"][len(t["set"]) + 1:] if t["where"].startswith(t["set"] + "/") else t["where"]
            print(f"{where[:48]:<48} {t['engine'][:7]:<7} {t['model'][:16]:<16} {t['gpu'][:15]:<15} "
                  f"{t['tp']:>2} {t['T']:7.2f} {t['T_pred']:7.2f} {t['D']:7.2f} {t['D_pred']:7.2f}  {ratio:>8}")
        return
    groups = {}
    for r in rows:
        if not args.all and (r["scored"] != "1" or r["blind"] != "1" or r["kind"] != "engine"):
            continue
        r = derive(r)
        for col, val in filters:
            if col not in r:
                sys.exit(f"--where {col}: no such column (columns: {', '.join(sorted(r))})")
        if any(r[col] != val for col, val in filters):
            continue
        for col in args.by:
            if col not in r:
                sys.exit(f"--by {col}: no such column (columns: {', '.join(sorted(r))})")
        groups.setdefault(tuple(r[c] for c in args.by), []).append(float(r["time_error"]))
    if not groups:
        sys.exit("no rows match")
    width = [max(len(c), *(len(k[i]) for k in groups)) for i, c in enumerate(args.by)]
    print("  ".join(c.ljust(w) for c, w in zip(args.by, width)) + "      n   signed  median|err|")
    allv = []
    for k in sorted(groups):
        e = groups[k]
        allv += e
        print("  ".join(v.ljust(w) for v, w in zip(k, width)) +
              f"  {len(e):5d}  {100 * statistics.median(e):+6.1f}%  {100 * statistics.median(abs(x) for x in e):6.1f}%")
    print(f"all: n {len(allv)}, signed {100 * statistics.median(allv):+.1f}%, "
          f"median |err| {100 * statistics.median(abs(x) for x in allv):.1f}%")


if __name__ == "__main__":
    main()
