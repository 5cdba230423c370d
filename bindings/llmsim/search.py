"""``llmsim.search``: the cheapest deployments meeting the scenario's SLO at a target load.

The space, the pruning, the branch-and-bound order and the front are C++ (``analysis/search.hpp``); this module
only runs them: on local threads (one C++ call), or with ``client=`` on a Dask cluster, where each wave of
candidates the C++ planner chose is cut into chunks evaluated by the compiled module on the workers, and the
evaluations are handed back to the C++ wave rule and front builder — so both give the identical front.
"""
from __future__ import annotations

import json
import os
import warnings
from typing import TYPE_CHECKING, Any, List, Mapping, Optional, Sequence, Tuple

from . import _core
from ._core import ConfigError
from ._scenario import ServerArgsWarning, Scenario, dotted, plain, scenario_warnings, to_text, whole
from .api import _area

if TYPE_CHECKING:  # pandas (and numpy) load inside the functions that use them: `import llmsim` stays light
    import pandas as pd


def _number(value: Any, name: str) -> float:
    """A numeric argument (numpy scalars too) as a float; ValueError naming ``name`` for NaN, inf or a non-number."""
    v = plain(value, name)  # NaN/inf: "NAME: expected a finite number, got nan"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ConfigError(f"{name}: expected a number, got {value!r}")
    return float(v)


def _options(target_qps, budget, axes, gpus, jobs, wave, front_cost_ratio, screen, final_check, text) -> str:
    core = _area("search")
    if axes is None:
        axis_list = json.loads(core.default_axes_for(text, [str(g) for g in (gpus or [])]))
    else:
        if isinstance(axes, Mapping):
            items = list(axes.items())
        else:
            items = [tuple(a) for a in axes]
        axis_list = [[str(p), plain(v, f"axes.{p}")] for p, v in items]
    doc = {"target_qps": _number(target_qps, "target_qps"), "axes": axis_list, "jobs": whole(jobs, "jobs"),
           "wave": whole(wave, "wave"), "front_cost_ratio": _number(front_cost_ratio, "front_cost_ratio")}
    if budget is not None:
        doc["budget_per_month"] = _number(budget, "budget")
    if screen:
        doc["screen"] = plain(dict(screen), "screen")
    if final_check:
        doc["final_check"] = plain(dict(final_check), "final_check")
    options = json.dumps(doc, allow_nan=False)
    if axes is not None:  # the CLI's --axis rule, in C++: the default card axis stays unless the cards are placed
        options = core.with_default_gpu_axis(options, [str(g) for g in (gpus or [])], text)
    return options


def _evaluate_chunk(candidates: List[str], options: str, final_check: bool, max_bill: float) -> List[str]:
    """One chunk on a Dask worker: the compiled evaluator, one candidate after another."""
    from llmsim import _core as core  # imported on the worker
    return [core.search.evaluate(c, options, final_check, max_bill) for c in candidates]


def _on_dask(client, candidates: List[str], options: str, final_check: bool, chunk_size: Optional[int],
             max_bill: float = float("inf")) -> List[str]:
    if not candidates:
        return []
    if chunk_size is None:
        threads = sum(client.nthreads().values()) or 1
        chunk_size = max(1, -(-len(candidates) // (2 * threads)))
    chunks = [candidates[i:i + chunk_size] for i in range(0, len(candidates), chunk_size)]
    futures = client.map(_evaluate_chunk, chunks, options=options, final_check=final_check, max_bill=max_bill,
                         pure=False)
    try:
        results = client.gather(futures)  # in chunk order; re-raises a worker's ValueError
    except KeyboardInterrupt:
        client.cancel(futures)
        raise
    return [e for chunk in results for e in chunk]


def _frame(result: dict) -> pd.DataFrame:
    import pandas as pd
    rows = []
    winner = result.get("winner")
    for m in result["front"]:
        row = {"name": m["name"]}
        row.update(m["point"])
        row.update({k: v for k, v in m.items() if k not in ("name", "point")})
        row["winner"] = winner is not None and m["name"] == winner["name"]
        row["tied"] = m["name"] in result.get("tied", [])
        rows.append(row)
    frame = pd.DataFrame.from_records(rows)
    for c in ("monthly_cost", "capacity_qps_per_replica", "ttft_p95_ms", "tpot_p95_ms", "cost_per_mtok_output",
              "price_per_gpu_hour", "monthly_lower_bound"):
        if c in frame:
            frame[c] = pd.to_numeric(frame[c], errors="coerce").astype("float64")
    frame.attrs.update({"target_qps": result["target_qps"], "budget_per_month": result["budget_per_month"],
                        "currency": result["currency"], "counts": result["counts"], "reasons": result["reasons"],
                        "winner": winner["name"] if winner else None, "tie_note": result.get("tie_note", "")})
    return frame


def search(scenario: Scenario, target_qps: float, *, budget: Optional[float] = None,
           axes: Optional[Any] = None, gpus: Optional[Sequence[str]] = None, client: Any = None,
           jobs: Optional[int] = None, wave: int = 32, front_cost_ratio: float = 2.0,
           screen: Optional[Mapping[str, Any]] = None, final_check: Optional[Mapping[str, Any]] = None,
           chunk_size: Optional[int] = None, raw: bool = False,
           vllm_args: Optional[str] = None, sglang_args: Optional[str] = None, **overrides: Any):
    """The Pareto front (monthly cost vs P95 TTFT vs P95 TPOT at ``target_qps``) of the deployments that meet the
    scenario's SLO with bills within ``front_cost_ratio`` of the cheapest, as a DataFrame: one row per front member (``name``, the axis values, ``replicas``,
    ``num_gpus``, ``monthly_cost``, ``capacity_qps_per_replica``, ``ttft_p95_ms``, ``tpot_p95_ms``,
    ``cost_per_mtok_output``, ``winner``, ``tied``: tied with the winner), cheapest first; ``frame.attrs`` holds the counts (enumerated, pruned by
    memory / budget / bound, simulated, screened — those whose capacity search gave up once their bill was
    shown over the branch-and-bound cutoff —, feasible, rechecked), the ``reasons`` (why the winner won, what the
    runner-up lacks), the ``winner``'s name and the ``tie_note`` (bills within the noise are a tie, broken as
    ``compare`` breaks one: the lossless format, then the cheaper card, then the lower bill and P95 TTFT; "" without a tie).

    ``axes``: ``{path: [values]}`` (or ``[(path, values), ...]``) replacing the default axes (engine.max_num_seqs,
    engine.max_num_batched_tokens); the default hardware.gpu axis (over ``gpus``, else the default cards) stays
    first unless an axis or the scenario places the cards (hardware.gpu, disaggregation pools, hardware.fleet), as
    the CLI's ``--axis`` does; ``gpus``: the GPU options of the hardware.gpu axis. ``budget``: monthly bill cap. ``screen`` / ``final_check``: capacity options
    (num_requests, warmup_requests, replications, rel_tol) of the first pass and of the front's re-check.
    ``jobs``: local threads (default: all cores); ``client``: a ``distributed.Client`` — the result is identical.
    ``raw=True`` returns the result JSON as a dict. Other scenario fields: ``workload__arrival__rate=`` style
    keywords (``__`` for ``.``). Bad input raises ValueError naming the field. A ``ScenarioWarning`` (a GPU profile
    fitted on another runtime) is issued and kept in ``frame.attrs["warnings"]`` (``raw``: ``"warnings"``).

    ``vllm_args`` / ``sglang_args``: a server's command line (``"vllm serve MODEL -tp 2 --max-num-seqs 128"``), as
    the CLI's ``--vllm-args`` / ``--sglang-args``: scenario < command line < keyword overrides."""
    core = _area("search")
    text = to_text(scenario, dotted(overrides), vllm_args, sglang_args)
    found = scenario_warnings(text)
    jobs = int(jobs or os.cpu_count() or 1)
    options = _options(target_qps, budget, axes, gpus, jobs if client is None else 1, wave, front_cost_ratio,
                       screen, final_check, text)
    # The fields set on top of the scenario (keywords, the server's line) are not overridden by an axis: the CLI's
    # rule (analysis::search_axes_for_sets), notes as ServerArgsWarning.
    sets = []
    if vllm_args or sglang_args:
        pairs, _ = _core.analysis.server_arg_sets(to_text(scenario), vllm_args or "", sglang_args or "")
        sets += json.loads(pairs)
    sets += [[p, plain(v, p)] for p, v in dotted(overrides).items() if v is not None]
    if sets:
        given = [] if axes is None else [str(p) for p in (axes.keys() if isinstance(axes, Mapping) else
                                                          [a[0] for a in axes])]
        options, notes = core.axes_for_sets(options, given, json.dumps(sets, allow_nan=False))
        for note in notes:
            warnings.warn(note, ServerArgsWarning, stacklevel=2)
    if client is None:
        result = json.loads(core.search(text, options))
    else:
        plan = core.plan(text, options)
        done: List[Optional[str]] = [None] * len(plan)
        while True:
            positions = core.next_wave(plan, done, options)
            if not positions:
                break
            cutoff = core.cutoff(done, options)  # the wave's branch-and-bound cutoff, as the threaded search uses
            evals = _on_dask(client, [plan.candidate(i) for i in positions], options, False, chunk_size, cutoff)
            for i, e in zip(positions, evals):
                done[i] = e
        front = core.front_positions(done, options)
        finals = _on_dask(client, [plan.candidate(i) for i in front], options, True, chunk_size)
        result = json.loads(core.assemble(plan, done, finals, options))
    result["warnings"] = found
    if raw:
        return result
    frame = _frame(result)
    frame.attrs["warnings"] = found
    return frame
