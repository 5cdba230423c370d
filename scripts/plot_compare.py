#!/usr/bin/env python3
"""Plots for the main job from `llmsim compare --out` JSON and `llmsim sweep --out` CSVs.

out/compare_costs.png: the monthly bill for the target load per option, labelled with $ per million SLO-meeting
output tokens at that load, replicas and $/Mtok at capacity, the winner marked, "placeholder prices" said when they
are (llmsim.plot.compare_costs: the same plot Python users get); options that cannot run are listed.
out/latency_vs_load.png: P95 TTFT and P95 TPOT against offered load per option, with the SLO lines.
Needs the llmsim package on PYTHONPATH (build/python).
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


def slo_limits(scenario_path):
    """{"ttft_ms": 2000.0, ...} at P95 from the scenario's slo block (other percentiles are not plotted)."""
    if not scenario_path:
        return {}
    with open(scenario_path) as f:
        slo = json.load(f).get("slo", {})
    return {metric: float(v["p95"]) for metric, v in slo.items() if isinstance(v, dict) and "p95" in v}


def plot_cost(compare, path):
    import llmsim.plot
    frame = pd.json_normalize(compare["rows"], sep=".")
    target = (f"{compare['target_qps']:g} QPS" if compare.get("target_qps")
              else f"{compare['target_concurrency']} users" if compare.get("target_concurrency") else None)
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(frame) + 2))
    llmsim.plot.compare_costs(frame, target=target, ax=ax)
    ax.set_title(ax.get_title() + f"; winner by {compare['rank_by']}", fontsize=10)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_latency(frames, limits, path):
    df = pd.concat(frames, ignore_index=True)
    df = df[df["fits"].astype(str).str.lower() == "true"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    for (name, num_gpus), g in df.groupby(["name_label", "num_gpus"], sort=False):
        g = g.sort_values("workload.arrival.rate")
        stable = g[g["unstable"].astype(str).str.lower() != "true"]
        style = "-" if "fp16" in name else "--"
        for ax, metric in zip(axes, ["ttft_ms.p95", "tpot_ms.p95"]):
            ax.plot(stable["workload.arrival.rate"], stable[metric], style, marker=".", label=name)
    for ax, metric, title in zip(axes, ["ttft_ms", "tpot_ms"], ["P95 TTFT (ms)", "P95 TPOT (ms)"]):
        if metric in limits:
            ax.axhline(limits[metric], color="red", lw=1, ls=":", label=f"SLO {limits[metric]:g} ms")
        ax.set_yscale("log")
        ax.set_xlabel("offered load (requests/s, Poisson), one replica; unstable loads omitted")
        ax.set_ylabel(title)
        ax.grid(alpha=0.3, which="both")
    axes[0].legend(fontsize=7)
    fig.suptitle("Latency vs load (solid fp16, dashed awq-int4)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("compare_json")
    ap.add_argument("sweep_csv", nargs="*")
    ap.add_argument("--scenario", help="scenario file whose SLO lines to draw")
    ap.add_argument("--outdir", default="out")
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    with open(args.compare_json) as f:
        compare = json.load(f)
    written = [os.path.join(args.outdir, "compare_costs.png")]
    plot_cost(compare, written[0])
    if args.sweep_csv:
        frames = []
        for p in args.sweep_csv:
            df = pd.read_csv(p)
            prefix = df["num_gpus"].map(lambda n: f"{n}x" if n > 1 else "")
            df["name_label"] = prefix + df["gpu"] + " " + df["quant"]
            frames.append(df)
        written.append(os.path.join(args.outdir, "latency_vs_load.png"))
        plot_latency(frames, slo_limits(args.scenario), written[-1])
    print("plots: " + ", ".join(written))


if __name__ == "__main__":
    sys.exit(main())
