#!/usr/bin/env python3
"""Plots for the main job from `llmsim compare --out` JSON and `llmsim sweep --out` CSVs.

out/cost_vs_capacity.png: $ per million SLO-meeting output tokens against capacity (max QPS inside the SLO),
one point per option that fits, the winner circled; options that cannot run are listed with their reason.
out/latency_vs_load.png: P95 TTFT and P95 TPOT against offered load per option, with the SLO lines.
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
    rows = compare["rows"]
    fig, ax = plt.subplots(figsize=(8, 5.5))
    cannot = []
    for i, r in enumerate(rows):
        if not r["fits"] or r["max_qps"] is None or r["cost_per_mtok_output_slo"] is None:
            cannot.append(f'{r["name"]}: {r["reason"] or "SLO not met at any load"}')
            continue
        winner = compare["winner"] == i
        marker = "o" if r["quant"] == "fp16" else "s"
        ax.scatter(r["max_qps"], r["cost_per_mtok_output_slo"], marker=marker, s=60, zorder=3,
                   edgecolors="black" if winner else "none", linewidths=2 if winner else 0)
        lo, hi = r["max_qps_ci95"]
        if lo is not None and hi is not None:
            ax.plot([lo, hi], [r["cost_per_mtok_output_slo"]] * 2, color="grey", lw=1, zorder=2)
        ax.annotate(r["name"] + ("  (winner)" if winner else ""), (r["max_qps"], r["cost_per_mtok_output_slo"]),
                    textcoords="offset points", xytext=(6, 4), fontsize=8)
    ax.set_xlabel("capacity: max QPS inside the SLO on one replica (grey: 95% CI)")
    ax.set_ylabel("$ per million SLO-meeting output tokens at capacity")
    target = compare.get("target_qps")
    ax.set_title(f"Cost vs capacity (o fp16, \u25a1 awq-int4); winner by {compare['rank_by']}"
                 + (f" for {target:g} QPS" if target else ""), fontsize=10)
    ax.grid(alpha=0.3)
    if cannot:
        fig.text(0.01, 0.01, "cannot run: " + "; ".join(cannot), fontsize=7, wrap=True)
    fig.tight_layout(rect=(0, 0.05 if cannot else 0, 1, 1))
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
    written = [os.path.join(args.outdir, "cost_vs_capacity.png")]
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
