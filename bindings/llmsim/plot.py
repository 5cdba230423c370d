"""Matplotlib helpers for the questions planners ask. The single-panel helpers draw on ``ax`` (a new figure when
None) and return the Axes; ``compare`` and ``timeline`` build a whole figure and return the Figure. None of them
shows or saves anything."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

if TYPE_CHECKING:  # pandas (and numpy) load inside the functions that use them: `import llmsim` stays light
    import numpy as np
    import pandas as pd


_GB = 1e9


def _slo_words(frame: pd.DataFrame):
    """(the tokens a cost per million divides by, how max_qps is bounded) for a frame of rows, in libsim's words
    (``metrics::priced_output_tokens``, ``metrics::capacity_bound``): "SLO-meeting output tokens" / "inside the SLO",
    or, when the rows' scenario sets no latency target (their ``slo_met_note``), words that do not claim one."""
    import pandas as pd
    from . import _core
    note = frame["slo_met_note"].notna() if "slo_met_note" in frame else pd.Series(False, index=frame.index)
    ran = frame["fits"].fillna(False).astype(bool) if "fits" in frame else pd.Series(True, index=frame.index)
    slo_set = not (len(frame) > 0 and note.any() and (note | ~ran).all())
    return _core.analysis.output_wording(slo_set)


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt
        _, ax = plt.subplots(figsize=(7, 4))
    return ax


def _col(frame: pd.DataFrame, name: str) -> str:
    """``name`` as the frame spells it: frames made with ``sep="_"`` have ``ttft_ms_p95`` for ``ttft_ms.p95``."""
    if name in frame.columns or name.replace(".", "_") not in frame.columns:
        return name
    return name.replace(".", "_")


def latency_vs_load(frame: pd.DataFrame, *, x: str = "workload.arrival.rate", y: str = "ttft_ms.p95",
                    by: Optional[str] = None, sla_ms: Optional[float] = None, ax=None, logy: bool = False):
    """Latency percentile ``y`` against offered load ``x``, one line per value of ``by``, with the SLA as a
    dashed horizontal line. Rows that do not fit (NaN) are left out. Loads past saturation (``unstable`` rows: the
    queue grew for the whole run, so their percentiles measure the run's length, not a latency) are not drawn as
    latencies: each line stops at its last stable load and an "x" on the axis's top edge marks each saturated load,
    labelled "saturated"."""
    import pandas as pd
    ax = _axes(ax)
    x, y = _col(frame, x), _col(frame, y)
    groups = frame.groupby(by, sort=False) if by else [(None, frame)]
    saturated_label = True
    for key, g in groups:
        g = g.dropna(subset=[y]).sort_values(x)
        unstable = g["unstable"].fillna(False).astype(bool) if "unstable" in g else pd.Series(False, index=g.index)
        stable = g[~unstable]
        (line,) = ax.plot(stable[x], stable[y], marker="o", label=str(key) if key is not None else y)
        if unstable.any():
            # At the top edge, in axes coordinates: a mark of where the option saturated, not a latency.
            ax.plot(g.loc[unstable, x], [1.0] * int(unstable.sum()), linestyle="none", marker="x", markersize=9,
                    color=line.get_color(), transform=ax.get_xaxis_transform(), clip_on=False,
                    label="saturated (queue grows without bound)" if saturated_label else None)
            saturated_label = False
    if sla_ms is not None:
        ax.axhline(sla_ms, color="red", linestyle="--", linewidth=1, label=f"SLA {sla_ms:g} ms")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if logy:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def cost_vs_capacity(frame: pd.DataFrame, *, x: str = "max_qps", y: str = "cost_per_mtok_output_slo",
                     label: Optional[str] = None, ax=None):
    """Cost per million SLO-meeting output tokens (every finished request's when no SLO is set) against capacity;
    lower right is better. Options that cannot run are listed in the title rather than drawn at zero."""
    ax = _axes(ax)
    ok = frame.dropna(subset=[x, y])
    ax.scatter(ok[x], ok[y])
    if label is not None:
        for _, row in ok.iterrows():
            ax.annotate(str(row[label]), (row[x], row[y]), textcoords="offset points", xytext=(4, 4),
                        fontsize="small")
        missing = frame.loc[~frame.index.isin(ok.index), label].astype(str).tolist()
        if missing:
            ax.set_title("cannot run / no capacity: " + ", ".join(missing), fontsize="small")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.grid(True, alpha=0.3)
    return ax


def _money(v: float, currency: str, decimals: int = 0) -> str:
    # "\$": a bare "$" starts matplotlib mathtext.
    return ("\\$" if currency == "USD" else currency + " ") + f"{v:,.{decimals}f}"


def compare_costs(frame: pd.DataFrame, *, target: Optional[str] = None, ax=None):
    """The buyer's answer from a ``llmsim.compare`` frame (or ``llmsim compare --out`` rows): one bar per option, the
    monthly bill for the target load (``monthly_cost``), each labelled with its $ per million SLO-meeting output
    tokens (every finished request's when no SLO is set) at the target load, its replicas and its $/Mtok at capacity; the winner filled and marked. The title
    names the target and says "placeholder prices" when any option was priced at a catalogue placeholder; options
    that cannot run or miss the SLO are listed below the axes rather than drawn at zero."""
    import pandas as pd
    ax = _axes(ax)
    currency = str(frame["currency"].iloc[0]) if "currency" in frame and len(frame) else "USD"
    ok = frame.dropna(subset=["monthly_cost", "cost_per_mtok_output_at_target"])
    if "meets_slo" in ok:
        # null = no SLO set (nothing to meet; libsim's slo_met_note): kept, as the winner's rule keeps it
        ok = ok[ok["meets_slo"].map(lambda v: v is None or v != v or bool(v))]
    # Cheapest at the top; equal bills ordered by the token cost at the target load, as the winner is.
    ok = ok.sort_values(["monthly_cost", "cost_per_mtok_output_at_target"], ascending=False, kind="stable")
    winner = ok["winner"].astype(bool) if "winner" in ok else pd.Series(False, index=ok.index)
    names = ok["name"].astype(str).tolist()
    colors = ["tab:green" if w else "tab:gray" for w in winner]
    ax.barh(names, ok["monthly_cost"], color=colors, alpha=0.85)
    top = float(ok["monthly_cost"].max()) if len(ok) else 1.0
    for y, (_, row) in enumerate(ok.iterrows()):
        label = (f"{_money(row['monthly_cost'], currency)}/month, "
                 f"{_money(row['cost_per_mtok_output_at_target'], currency, 3)}/Mtok, "
                 f"{int(row['replicas_needed'])} replica(s)"
                 + (f"; {_money(row['cost_per_mtok_output_slo'], currency, 3)}/Mtok at capacity"
                    if pd.notna(row.get("cost_per_mtok_output_slo")) else "")
                 + ("  <- winner" if winner.iloc[y] else ""))
        ax.text(row["monthly_cost"] + 0.01 * top, y, label, va="center", fontsize="x-small",
                fontweight="bold" if winner.iloc[y] else "normal")
    ax.set_xlim(0, top * 2.1)
    ax.set_xlabel(f"monthly bill for the target load ({currency}/month)")
    placeholder = "price_is_placeholder" in frame and frame["price_is_placeholder"].fillna(False).astype(bool).any()
    if target is None and "target_qps" in frame and frame["target_qps"].notna().any():
        target = f"{frame['target_qps'].dropna().iloc[0]:g} QPS"
    if target is None and "target_concurrency" in frame and frame["target_concurrency"].notna().any():
        target = f"{int(frame['target_concurrency'].dropna().iloc[0])} users"
    ax.set_title(f"Cost at the target load{(' (' + target + ')') if target else ''}"
                 + ("; placeholder prices - set yours" if placeholder else ""), fontsize="small")
    ax.grid(True, axis="x", alpha=0.3)
    left_out = frame.loc[~frame.index.isin(ok.index)]
    if len(left_out):
        reasons = [f"{r['name']}: {r['reason'] or 'SLO not met at the target load'}" for _, r in left_out.iterrows()]
        ax.annotate("not shown: " + "; ".join(reasons)[:400], (0, 0), xycoords="figure fraction", xytext=(4, 4),
                    textcoords="offset points", fontsize="xx-small", va="bottom")
    return ax


_MEMORY_TERMS = ["weights_bytes", "kv_cache_bytes", "activation_bytes", "runtime_bytes", "free_bytes"]


def memory_breakdown(plans: Mapping[str, Mapping[str, Any]], *, ax=None):
    """Stacked bars (GB per GPU) of weights, KV pool, activations, runtime and margin, one bar per plan
    (``{label: llmsim.memory(...)}``); a hatched bar marks a plan that does not fit."""
    import numpy as np
    ax = _axes(ax)
    labels = list(plans)
    bottom = np.zeros(len(labels))
    for term in _MEMORY_TERMS:
        values = np.array([plans[k]["per_gpu"].get(term, 0) / _GB for k in labels], dtype=float)
        ax.bar(labels, values, bottom=bottom, label=term.replace("_bytes", ""))
        bottom += values
    totals = [plans[k]["per_gpu"].get("total_bytes", 0) / _GB for k in labels]
    ax.scatter(labels, totals, marker="_", s=400, color="black", label="device memory", zorder=3)
    for i, k in enumerate(labels):
        if not plans[k].get("fits", True):
            ax.bar([labels[i]], [max(bottom[i], totals[i])], fill=False, hatch="//", edgecolor="red")
    ax.set_ylabel("GB per GPU")
    ax.tick_params(axis="x", rotation=30)
    ax.legend(fontsize="small")
    return ax


def _per_request(requests: pd.DataFrame, metric: str) -> np.ndarray:
    import numpy as np
    r = requests[~requests["warmup"]] if "warmup" in requests else requests
    if "outcome" in r:  # latencies are the completed requests' (failed, timed-out, unfinished rows have none)
        r = r[r["outcome"] == "completed"]
    if metric == "ttft":
        v = (r["first_token_s"] - r["arrival_s"]) * 1e3
    elif metric == "tpot":  # per request, as vLLM's benchmark reports it
        r = r[r["output_tokens"] > 1]
        v = (r["finish_s"] - r["first_token_s"]) / (r["output_tokens"] - 1) * 1e3
    elif metric == "e2e":
        v = (r["finish_s"] - r["arrival_s"]) * 1e3
    elif metric == "queue":
        v = (r["admitted_s"] - r["arrival_s"]) * 1e3
    else:
        raise ValueError(f"metric: unknown '{metric}' (valid: ttft, tpot, e2e, queue)")
    return np.sort(v.to_numpy())


def latency_cdf(results: Mapping[str, Any], *, metric: str = "ttft", sla_ms: Optional[float] = None, ax=None):
    """Empirical CDF of a per-request latency (ttft, tpot, e2e, queue) for each ``{label: Result}`` run
    with ``record_requests=True``. (Token-level ITL gaps are summarised in ``summary['itl_ms']``; the records
    hold per-request times, whose mean gap is the TPOT.)"""
    import numpy as np
    ax = _axes(ax)
    for label, res in results.items():
        req = getattr(res, "requests", res)
        if req is None:
            raise ValueError(f"{label}: simulate with record_requests=True to plot a CDF")
        v = _per_request(req, metric)
        if len(v):
            ax.plot(v, np.arange(1, len(v) + 1) / len(v), label=str(label))
    if sla_ms is not None:
        ax.axvline(sla_ms, color="red", linestyle="--", linewidth=1, label=f"SLA {sla_ms:g} ms")
    ax.set_xlabel(f"{metric} (ms)")
    ax.set_ylabel("fraction of requests")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return ax


_SERIES_LABELS = {"mean_waiting": "requests waiting", "max_waiting": "most waiting", "mean_running": "sequences running",
                  "mean_kv_used": "KV used (fraction)", "arrivals": "arrivals", "completions": "completions",
                  "ttft_p95_ms": "TTFT p95 (ms)", "ttft_p50_ms": "TTFT p50 (ms)", "e2e_p95_ms": "E2E p95 (ms)",
                  "output_tokens_per_s": "output tok/s"}


def time_series(series: Any, *, y: Sequence[str] = ("mean_waiting", "mean_running"), right: Sequence[str] = (),
                ax=None, logy: bool = False):
    """A run over time (``simulate(..., time_series=...)``): each column of ``y`` against the middle of its window,
    and the columns of ``right`` (e.g. ``"ttft_p95_ms"``) on a second y axis, dashed. ``series`` is the Result or
    its ``time_series`` frame. A spike shows as the queue building while arrivals exceed the saturation rate and
    draining after; windows where nothing finished have no latency (gaps, not zeros)."""
    frame = getattr(series, "time_series", series)
    if frame is None or len(frame) == 0:
        raise ValueError("time_series: no windows (run simulate(..., time_series=True or a width in seconds))")
    ax = _axes(ax)
    mid = (frame["start_s"] + frame["end_s"]) / 2
    for col in y:
        ax.plot(mid, frame[col], label=_SERIES_LABELS.get(col, col))
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel(", ".join(_SERIES_LABELS.get(c, c) for c in y))
    if logy:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if right:
        ax2 = ax.twinx()
        for col in right:
            ax2.plot(mid, frame[col].astype(float), linestyle="--", color="tab:red", label=_SERIES_LABELS.get(col, col))
        ax2.set_ylabel(", ".join(_SERIES_LABELS.get(c, c) for c in right))
        h2, l2 = ax2.get_legend_handles_labels()
        handles, labels = handles + h2, labels + l2
    ax.legend(handles, labels, fontsize="small", loc="upper left")
    return ax


def compare(frame: pd.DataFrame, *, target: Optional[str] = None, title: Optional[str] = None):
    """The buyer's answer from a ``llmsim.compare`` frame as one Figure: on top, the monthly bill for the target load
    per option (``compare_costs``: winner filled and marked, $/Mtok at the target and at capacity, replicas, options
    that cannot run listed, "placeholder prices" said when they are); below, cost per million SLO-meeting output
    tokens (every finished one's when no SLO is set) against capacity per replica (``cost_vs_capacity``), the winner ringed. Returns the Figure."""
    import pandas as pd
    import matplotlib.pyplot as plt
    if not isinstance(frame, pd.DataFrame) or "monthly_cost" not in frame.columns:
        raise ValueError("compare: expected the frame llmsim.compare returns (it has a monthly_cost column)")
    bars = max(2.5, 0.4 * len(frame) + 1.2)
    fig, (left, right) = plt.subplots(2, 1, figsize=(11, bars + 4.5), gridspec_kw={"height_ratios": [bars, 4.5]})
    compare_costs(frame, target=target, ax=left)
    cost_vs_capacity(frame, label="name", ax=right)
    if "winner" in frame and frame["winner"].fillna(False).astype(bool).any():
        w = frame[frame["winner"].fillna(False).astype(bool)].iloc[0]
        right.scatter([w["max_qps"]], [w["cost_per_mtok_output_slo"]], s=220, facecolors="none",
                      edgecolors="tab:green", linewidths=2, label=f"winner: {w['name']}")
        right.legend(fontsize="small", loc="best")
    # No latency target set: the rows' max_qps is the largest stable load and every finished token is priced, so the
    # labels say that rather than claim an SLO (libsim's words, as the CLI prints them).
    tokens, bound = _slo_words(frame)
    right.set_xlabel(f"capacity per replica (the largest QPS it serves {bound})")
    right.set_ylabel(f"per million {tokens.split(' (')[0]}\nat capacity")
    if title:
        fig.suptitle(title)
    # Fixed margins: tight_layout would make room for compare_costs' wide "not shown" note and squash the axes.
    fig.subplots_adjust(left=0.22, right=0.97, top=0.93 if title else 0.96, bottom=0.08, hspace=0.35)
    return fig


def timeline(result: Any, *, title: Optional[str] = None):
    """One run over time as a Figure of three panels sharing the time axis — the queue (requests waiting, mean and
    most per window, with arrivals), the batch (sequences running), and the KV cache in use (mean and peak fraction
    of the pool) — from ``simulate(..., time_series=True)``. ``result`` is that Result or its ``time_series`` frame.
    A run that saturated says so in the title. Returns the Figure."""
    import numpy as np
    import pandas as pd
    import matplotlib.pyplot as plt
    frame = getattr(result, "time_series", result)
    if frame is None or not isinstance(frame, pd.DataFrame) or len(frame) == 0:
        raise ValueError("timeline: no time series (run llmsim.simulate(..., time_series=True))")
    missing = [c for c in ("start_s", "end_s", "mean_waiting", "mean_running", "mean_kv_used") if c not in frame]
    if missing:
        raise ValueError(f"timeline: not a simulate() time series (missing columns {missing})")
    mid = (frame["start_s"] + frame["end_s"]) / 2
    fig, (q, b, kv) = plt.subplots(3, 1, figsize=(9, 7), sharex=True)
    q.plot(mid, frame["mean_waiting"], label="waiting (mean)")
    if "max_waiting" in frame:
        q.plot(mid, frame["max_waiting"], linestyle=":", label="waiting (most)")
    q.set_ylabel("queue (requests)")
    if "arrivals" in frame:
        width = (frame["end_s"] - frame["start_s"]).replace(0, np.nan)
        q2 = q.twinx()
        q2.plot(mid, frame["arrivals"] / width, color="tab:gray", alpha=0.6, linewidth=1, label="arrivals/s")
        q2.set_ylabel("arrivals/s", color="tab:gray")
    q.legend(fontsize="small", loc="upper left")
    b.plot(mid, frame["mean_running"], color="tab:orange", label="running (mean)")
    if "max_running" in frame:
        b.plot(mid, frame["max_running"], color="tab:orange", linestyle=":", label="running (most)")
    b.set_ylabel("batch (sequences)")
    b.legend(fontsize="small", loc="upper left")
    kv.plot(mid, frame["mean_kv_used"], color="tab:purple", label="KV used (mean)")
    if "max_kv_used" in frame:
        kv.plot(mid, frame["max_kv_used"], color="tab:purple", linestyle=":", label="KV used (peak)")
    kv.set_ylim(0, 1.05)
    kv.set_ylabel("KV cache used (fraction)")
    kv.set_xlabel("simulated time (s)")
    kv.legend(fontsize="small", loc="upper left")
    for a in (q, b, kv):
        a.grid(True, alpha=0.3)
    summary = getattr(result, "summary", None) or {}
    heading = title or ""
    if summary.get("unstable"):
        heading += ("; " if heading else "") + "saturated: arrivals outpaced service (queue grew without bound)"
    if heading:
        fig.suptitle(heading, fontsize="medium")
    fig.tight_layout()
    return fig
