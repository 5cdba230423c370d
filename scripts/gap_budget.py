#!/usr/bin/env python3
"""Where a simulated run's inter-token spread comes from, and what a measured std would need (issue 27).

Reads the per-request and per-iteration CSVs of one `llmsim simulate` run
(`--requests-csv R.csv --iterations-csv I.csv`) and splits the pooled ITL variance,
sum over gaps of (gap - mean)^2, by what each gap spans:
  decode     consecutive decode-bearing steps with no prefill step between them;
  stall      a gap that spans a prefill-only step (V0's prefill-first scheduler stalls the decodes);
  mixed      a decode step that also carried prefill tokens (chunked prefill, SGLang mixing);
  preempted  a preempted request's lost time, one gap per request: its first-to-last-token span less its
             tokens at the mean gap of the steps it lived through (where in its life the wait fell is not in
             the CSVs, so the wait counts as one gap).
A request's token times are its first token and the last (output - 1) decode-bearing step ends up to its
finish (the summary stamps its own gaps exactly; this reconstruction is for the budget only).
With --measured MEAN,MEDIAN,STD (ms; a bench file's mean/median/std ITL) it also prints the variance the
simulation lacks and, taking the median's ratio as a uniform step-time scale, the extra time per gap left to
the tail: the events carrying both then last L = (missing variance) / (tail time) each, and number
(tail time) / L. A global stall of L hits every running request at once; per-request waits one each.
Usage: llmsim simulate S.json --requests-csv R.csv --iterations-csv I.csv;
       python3 scripts/gap_budget.py R.csv I.csv [--measured 73.96,51.40,209.01]
Only parses text: no llmsim module needed."""
import argparse
import bisect
import csv


def read(path, need):
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise SystemExit(f"{path}: cannot read ({e.strerror})")
    missing = [c for c in need if rows and c not in rows[0]]
    if not rows or missing:
        raise SystemExit(f"{path}: no rows or missing columns {missing} (expected {', '.join(need)})")
    return rows


def num(row, key, path, line):
    try:
        return float(row[key])
    except (TypeError, ValueError):
        raise SystemExit(f"{path}: row {line}: column '{key}' is not a number ({row[key]!r})")


def budget(requests, iterations, rpath="requests", ipath="iterations"):
    """Gaps by kind: {kind: [gaps in ms]} and the preempted requests' count."""
    steps = []
    for n, r in enumerate(iterations, start=2):
        end = num(r, "start_s", ipath, n) + num(r, "duration_s", ipath, n)
        steps.append((end, num(r, "prefill_seqs", ipath, n) > 0, num(r, "decode_seqs", ipath, n) > 0))
    steps.sort()
    dec = [s for s in steps if s[2]]
    dec_end = [s[0] for s in dec]
    pre_only = [s[0] for s in steps if s[1] and not s[2]]
    gaps = {"decode": [], "stall": [], "mixed": [], "preempted": []}
    for n, r in enumerate(requests, start=2):
        if r.get("outcome", "completed") != "completed":
            continue
        out = int(num(r, "output_tokens", rpath, n))
        if out < 2:
            continue
        first, finish = num(r, "first_token_s", rpath, n), num(r, "finish_s", rpath, n)
        j = bisect.bisect_right(dec_end, finish + 1e-9)
        i0 = bisect.bisect_right(dec_end, first + 1e-9)
        if num(r, "preemptions", rpath, n) > 0:
            span = (finish - first) * 1e3
            lived = span / max(1, j - i0)  # the mean gap of the decode steps of its life
            gaps["preempted"].append(max(0.0, span - (out - 1) * lived))
            continue
        i = max(i0, j - (out - 1))
        times = [first] + dec_end[i:j]
        for k in range(1, len(times)):
            a, b = times[k - 1], times[k]
            stalled = bisect.bisect_right(pre_only, b - 1e-9) > bisect.bisect_right(pre_only, a + 1e-9)
            kind = "stall" if stalled else ("mixed" if dec[i + k - 1][1] else "decode")
            gaps[kind].append((b - a) * 1e3)
    return gaps


def report(gaps, measured=None):
    pooled = [g for v in gaps.values() for g in v]
    if not pooled:
        raise SystemExit("no request with two or more tokens: nothing to budget")
    n = len(pooled)
    mean = sum(pooled) / n
    total = sum((g - mean) ** 2 for g in pooled)
    lines = [f"{n} gaps, mean {mean:.2f} ms, std {(total / n) ** 0.5:.2f} ms"]
    lines.append("%-10s %9s %10s %10s %14s %8s" % ("kind", "gaps", "mean ms", "max ms", "sum (g-m)^2", "share"))
    for kind, v in gaps.items():
        if not v:
            continue
        var = sum((g - mean) ** 2 for g in v)
        lines.append("%-10s %9d %10.1f %10.1f %14.3e %7.1f%%" % (kind, len(v), sum(v) / len(v), max(v), var,
                                                                   100 * var / total if total else 0))
    out = {"gaps": n, "mean": mean, "variance_sum": total}
    if measured:
        m_mean, m_median, m_std = measured
        srt = sorted(pooled)
        median = srt[n // 2] if n % 2 else 0.5 * (srt[n // 2 - 1] + srt[n // 2])
        missing = (m_std ** 2 - total / n) * n
        scale = m_median / median
        tail = (m_mean - mean * scale) * n
        lines.append(f"measured mean/median/std {m_mean:.2f}/{m_median:.2f}/{m_std:.2f} ms: missing variance "
                     f"{missing:.3e} ms^2 ({100 * missing / (m_std ** 2 * n):.0f} % of the measured)")
        lines.append(f"median ratio {scale:.3f} (a uniform step-time scale) leaves {tail / n:.2f} ms per gap, "
                     f"{tail / 1e3:.0f} s of gap time, to the tail")
        if missing > 0 and tail > 0:
            length = missing / tail
            lines.append(f"events carrying both: about {tail / length:.0f} gaps of {length / 1e3:.1f} s each")
        else:
            lines.append("no tail left once the median's scale is taken: the missing variance is not in long gaps")
        out.update(missing=missing, tail=tail)
    return "\n".join(lines), out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("requests_csv")
    ap.add_argument("iterations_csv")
    ap.add_argument("--measured", help="MEAN,MEDIAN,STD of the measured ITL in ms")
    a = ap.parse_args()
    measured = None
    if a.measured:
        try:
            measured = tuple(float(x) for x in a.measured.split(","))
        except ValueError:
            measured = ()
        if len(measured) != 3 or min(measured) <= 0:
            raise SystemExit(f"--measured: expected three positive numbers MEAN,MEDIAN,STD, got {a.measured!r}")
    req = read(a.requests_csv, ["first_token_s", "finish_s", "output_tokens", "preemptions"])
    its = read(a.iterations_csv, ["start_s", "duration_s", "prefill_seqs", "decode_seqs"])
    text, _ = report(budget(req, its, a.requests_csv, a.iterations_csv), measured)
    print(text)


if __name__ == "__main__":
    main()
