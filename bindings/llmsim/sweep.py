"""Many scenarios at once: capacity, compare and sweep, on local threads or on a Dask cluster.

Sweeps run in C++ on a thread pool with the GIL released (``jobs`` threads; rows always come back in grid
order, identical for any thread count). With ``client=`` (a ``distributed.Client``) the points are cut into
chunks evaluated on the cluster's workers by the same C++ code, so the frame is identical to the local one.
"""
from __future__ import annotations

import itertools
import json
import os
from typing import TYPE_CHECKING, Any, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core
from ._frames import check_sep, named, typed
from ._scenario import Scenario, dotted, load, plain, scenario_warnings, split_overrides, to_text
from .api import _area

if TYPE_CHECKING:  # pandas (and numpy) load inside the functions that use them: `import llmsim` stays light
    import pandas as pd

Grid = Union[Mapping[str, Sequence[Any]], Sequence[Union[Scenario, Mapping[str, Any]]]]
Point = Tuple[str, str]  # (labels JSON [[path, value], ...], scenario JSON text)


def _frame(flat_rows: Iterable[str], index: Optional[List[int]] = None, sep: str = ".") -> pd.DataFrame:
    """Flattened C++ rows as a typed frame (numbers float64 with NaN, never None; see _frames)."""
    import pandas as pd
    rows = [json.loads(r) for r in flat_rows]
    if not rows:
        return pd.DataFrame()
    columns = [c for c, _ in rows[0]]
    frame = pd.DataFrame.from_records([dict(r) for r in rows], columns=columns)
    if index is not None:
        frame.index = index
    return named(typed(frame), sep)


def _tqdm(progress: bool, total: int, desc: str):
    """A tqdm bar, or None: progress off, or tqdm not installed (it is optional: ``pip install llmsim[progress]``;
    without it the work runs the same, silently)."""
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=desc, unit="scenario")


def _callback(bar):
    if bar is None:
        return None
    def update(done: int, total: int) -> None:
        bar.update(done - bar.n)
    return update


def expand_grid(base: Scenario, grid: Grid, sets: Optional[Sequence[Tuple[str, Any]]] = None) -> List[Point]:
    """The sweep's points. ``grid`` is either ``{dotted path: [values]}`` (cartesian product, last path
    varying fastest — the CLI's order) or a list: with a ``base``, of ``{dotted path: value}`` overrides of
    it; without one (``base=None``), of whole scenarios (dicts or JSON file paths). Values may be numpy arrays.
    Grids and override lists are expanded by the C++ core exactly as ``llmsim sweep`` expands them (overlapping
    paths such as ``workload.arrival`` and ``workload.arrival.rate`` are refused; a point on another card is
    billed at that card's price). Bad paths or values raise ValueError naming the path and the point; a point whose
    values only contradict each other (a ``2x...@pp`` card with a tp axis's 2) is kept as written: its sweep row
    cannot run."""
    return [(labels, text) for labels, text, _ in _expand(base, grid, sets)]


def _expand(base: Scenario, grid: Grid, sets: Optional[Sequence[Tuple[str, Any]]] = None,
            before: Optional[Scenario] = None) -> List[Tuple[str, str, str]]:
    """expand_grid's points with each one's verdict (``analysis::judge_sets``: why it cannot run, else "").
    ``before``: the base before ``sets`` were set on it, so that a point contradicting them is a row that cannot
    run, as ``llmsim sweep --set`` judges it."""
    if isinstance(grid, Mapping):
        if not grid:
            raise ValueError("grid: empty (give at least one field path with a list of values)")
        axes = {}
        for p, v in grid.items():
            values = plain(v, f"grid.{p}") if not isinstance(v, (str, bytes)) else v
            if not isinstance(values, list) or len(values) == 0:
                raise ValueError(f"grid.{p}: expected a non-empty list of values, got {v!r}")
            axes[str(p)] = values
        doc = {"base": load(base if base is not None else {}), "grid": axes}
        before_text = "" if before is None else json.dumps({"base": load(before), "grid": axes}, allow_nan=False)
        # ``sets``: (path, value) pairs set on the base (sweep's overrides, its server line): a tensor or pipeline
        # split among them adds the hardware.tp / hardware.pp labels a card axis needs (libsim's rule).
        return [tuple(p) for p in _area("analysis").expand_grid(json.dumps(doc, allow_nan=False), list(axes),
                                                                json.dumps(list(sets or []), allow_nan=False),
                                                                before_text)]
    items = plain(grid, "grid") if type(grid).__module__ == "numpy" else grid
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence) or len(items) == 0:
        raise ValueError("grid: expected {path: [values]} or a non-empty list of scenarios/overrides")
    if base is not None and all(isinstance(item, Mapping) for item in items):
        doc = {"base": load(base), "scenarios": [plain(item, f"grid[{i}]") for i, item in enumerate(items)]}
        return [tuple(p) for p in _area("analysis").expand_grid(json.dumps(doc, allow_nan=False), [])]
    points: List[Tuple[str, str, str]] = []
    for item in items:
        try:
            points.append(("[]", to_text(item), ""))
        except ValueError as e:
            raise ValueError(f"grid point {len(points)}: {e}") from None
    return points


def _run_chunk(points: List[Point], cannot_run: List[str], capacity: bool, capacity_options: dict) -> List[str]:
    """One chunk on a Dask worker: the same C++ sweep, one thread (the cluster supplies the parallelism).
    ``cannot_run``: the whole grid's verdicts for these points (``analysis::screen_points``), since a chunk alone
    cannot tell a contradiction between a point's values from a bad value."""
    from llmsim import _core as core  # imported on the worker
    return core.analysis.sweep(points, capacity, capacity_options, 1, None, cannot_run)


def sweep(base: Union[Optional[Scenario], Sequence[Scenario]], grid: Optional[Grid] = None,
          jobs: Optional[int] = None, client: Any = None, progress: bool = True, capacity: bool = False,
          chunk_size: Optional[int] = None, sep: str = ".",
          vllm_args: Optional[str] = None, sglang_args: Optional[str] = None,
          **capacity_options: Any) -> pd.DataFrame:
    """One row per point, in grid order, with the grid's dotted paths as the first columns, then the
    ``llmsim sweep`` CSV columns (identity, ``fits``, ``reason``, throughput, latency percentiles as
    ``ttft_ms.p95`` ..., goodput, cost). Three ways to call it:

    * ``sweep(base, {"hardware.gpu": [...], "workload.arrival.rate": [...]})``: a grid over a base scenario;
    * ``sweep(base, [{"hardware.gpu": "l4"}, ...])``: a list of overrides of the base;
    * ``sweep([scenario, "other.json", ...])`` (or ``sweep(None, [...])``): a list of whole scenarios.

    Numeric columns are float64 with NaN where a point has no number (a point that cannot run is a row with
    ``fits`` False, its reason and NaN numbers); ``sep="_"`` names columns ``ttft_ms_p95``, ``hardware_gpu`` ... so
    that ``frame.query("ttft_ms_p95 < 2000")`` works. ``capacity=True`` runs a capacity search per point (options:
    num_requests, replications, rel_tol, ...). ``jobs``: local threads (default: all cores; fewer, with a
    RuntimeWarning, when the system refuses to start that many). ``client``: a ``distributed.Client``.

    Keywords with ``__`` are scenario fields (``hardware__gpu="l4-24gb"``, ``__`` for ``.``) set on the base, or on
    each whole scenario of a list, before the grid's own values; ``vllm_args`` / ``sglang_args`` (a server's command
    line, as the CLI's ``--vllm-args`` / ``--sglang-args``) likewise, before those keywords.

    Ctrl-C (a notebook's "interrupt kernel") stops the sweep within a simulation's few thousand events and
    raises KeyboardInterrupt with ``.partial``: the rows that had finished, as a frame indexed by grid point.
    What a point prices that its user should hear about (a GPU profile fitted on another runtime) is issued as a
    ``ScenarioWarning`` and kept in ``frame.attrs["warnings"]``."""
    check_sep(sep)
    if grid is None and "grid_or_list" in capacity_options:  # the keyword's earlier name
        grid = capacity_options.pop("grid_or_list")
    if grid is None:
        if base is None or isinstance(base, (Mapping, str, bytes, os.PathLike)):
            raise ValueError("sweep: give a base scenario and a grid ({path: [values]} or a list of overrides), or "
                             "a list of scenarios: sweep([scenario, ...])")
        base, grid = None, base
    over, capacity_options = split_overrides(capacity_options)
    sets: List[Tuple[str, Any]] = []  # what is set on the base, for the rows' split labels
    if (vllm_args or sglang_args) and isinstance(grid, Mapping):
        pairs, _ = _area("analysis").server_arg_sets(json.dumps(load(base if base is not None else {}), allow_nan=False),
                                                     vllm_args or "", sglang_args or "")
        sets += [tuple(p) for p in json.loads(pairs)]
    sets += list(over.items())
    before = None  # the base before the overrides: a point that contradicts them is a row that cannot run
    if over or vllm_args or sglang_args:
        whole = not isinstance(grid, Mapping) and (
            base is None or not all(isinstance(item, Mapping) for item in grid))
        if whole:  # a list of whole scenarios: each gets the overrides
            grid = [json.loads(to_text(item, over, vllm_args, sglang_args)) for item in grid]
        else:
            before = load(base if base is not None else {})
            base = json.loads(to_text(base if base is not None else {}, over, vllm_args, sglang_args))
    # Capacity options without capacity=True are refused by analysis::refuse_capacity_options_without_capacity
    # (the CLI's rule for --rel-tol without --capacity), in the sweep call below: before any point runs.
    analysis = _area("analysis")
    expanded = _expand(base, grid, sets, before)
    points = [(labels, text) for labels, text, _ in expanded]
    verdicts = [verdict for _, _, verdict in expanded]
    found = scenario_warnings([text for (_, text), verdict in zip(points, verdicts) if not verdict])
    bar = _tqdm(progress, len(points), "sweep")
    try:
        if client is None:
            jobs = jobs or os.cpu_count() or 1
            flat = analysis.sweep(points, capacity, capacity_options, int(jobs), _callback(bar), verdicts)
        else:
            flat = _on_dask(client, points, verdicts, capacity, capacity_options, chunk_size, bar)
    except KeyboardInterrupt as e:
        # What had finished, as a frame indexed by grid point, so an interrupted sweep loses no computed row.
        finished = getattr(e, "partial_rows", None)
        if finished is not None:
            e.partial = _frame([row for _, row in finished], index=[i for i, _ in finished], sep=sep)
        raise
    finally:
        if bar is not None:
            bar.close()
    frame = _frame(flat, sep=sep)
    frame.attrs["warnings"] = found
    return frame


def _on_dask(client, points: List[Point], verdicts: List[str], capacity: bool, capacity_options: dict,
             chunk_size: Optional[int], bar) -> List[str]:
    from distributed import as_completed
    if chunk_size is None:  # a few chunks per worker thread balance load without drowning the scheduler
        threads = sum(client.nthreads().values()) or 1
        chunk_size = max(1, -(-len(points) // (4 * threads)))
    # The whole grid is screened here (a bad value raises before any chunk leaves; points whose values contradict
    # each other become rows that cannot run), and each chunk carries its points' verdicts.
    verdicts = _area("analysis").screen_points(points, verdicts)
    chunks = [points[i:i + chunk_size] for i in range(0, len(points), chunk_size)]
    chunk_verdicts = [verdicts[i:i + chunk_size] for i in range(0, len(points), chunk_size)]
    futures = client.map(_run_chunk, chunks, chunk_verdicts, capacity=capacity, capacity_options=capacity_options,
                         pure=False)
    index = {f.key: i for i, f in enumerate(futures)}
    results: List[Optional[List[str]]] = [None] * len(chunks)
    try:
        for future in as_completed(futures):
            i = index[future.key]
            results[i] = future.result()  # re-raises a worker's ValueError here
            if bar is not None:
                bar.update(len(chunks[i]))
    except KeyboardInterrupt as e:  # stop the cluster's work; keep the chunks that came back
        client.cancel(futures)
        e.partial_rows = [(i * chunk_size + k, row) for i, chunk in enumerate(results) if chunk is not None
                          for k, row in enumerate(chunk)]
        raise
    return [row for chunk in results for row in chunk]


def capacity(scenario: Scenario, *, num_requests: Optional[int] = None, warmup_requests: Optional[int] = None,
             replications: Optional[int] = None, rel_tol: Optional[float] = None,
             max_evaluations: Optional[int] = None, max_rate: Optional[float] = None, frame: bool = False,
             sep: str = ".",
             vllm_args: Optional[str] = None, sglang_args: Optional[str] = None,
             **overrides: Any) -> Union[dict, pd.DataFrame]:
    """The largest load meeting the scenario's SLO (``llmsim capacity --json`` row: max_qps, max_qps_ci95,
    latency at capacity, cost per Mtok at the target load and at capacity, replicas_needed, monthly_cost).
    ``overrides`` are dotted-path scenario fields written with '__' for '.', e.g. ``hardware__gpu="rtx4090-24gb"``
    or ``hardware__gpu="2xrtx4090-24gb@pp"``; a scenario moved to another card is billed at that card's price (its
    catalogue placeholder unless ``hardware__price_per_gpu_hour`` is given), never at the old card's. ``frame=True``
    returns the row as a one-row DataFrame with the columns and types of ``sweep(..., capacity=True)`` frames
    (``sep`` as there).

    ``vllm_args`` / ``sglang_args``: a server's command line (``"vllm serve MODEL -tp 2 --max-num-seqs 128"``), as
    the CLI's ``--vllm-args`` / ``--sglang-args``: scenario < command line < keyword overrides. A ``ScenarioWarning``
    (a GPU profile fitted on another runtime) is issued and kept in the row's ``"warnings"`` (``frame.attrs``)."""
    check_sep(sep)
    opts = {k: v for k, v in dict(num_requests=num_requests, warmup_requests=warmup_requests,
                                  replications=replications, rel_tol=rel_tol, max_evaluations=max_evaluations,
                                  max_rate=max_rate).items() if v is not None}
    text = to_text(scenario, dotted(overrides), vllm_args, sglang_args)
    found = scenario_warnings(text)
    if frame:
        out = _frame([_area("analysis").capacity(text, opts, True)], sep=sep)
        out.attrs["warnings"] = found
        return out
    row = json.loads(_area("analysis").capacity(text, opts))
    row["warnings"] = found
    return row


def _strings(v) -> List[str]:
    return [v] if isinstance(v, str) else [str(x) for x in (v or [])]


def compare(scenario: Scenario, gpus: Optional[Sequence[str]] = None, quants: Optional[Sequence[str]] = None, *,
            policies: Sequence[str] = (), max_num_seqs: Sequence[int] = (),
            max_num_batched_tokens: Sequence[int] = (), rank_by: str = "monthly_cost",
            prices: Optional[Mapping[str, float]] = None, purchase_prices: Optional[Mapping[str, float]] = None,
            jobs: Optional[int] = None, progress: bool = False, sep: str = ".",
            vllm_args: Optional[str] = None, sglang_args: Optional[str] = None, **capacity_options: Any) -> pd.DataFrame:
    """``llmsim compare``: every GPU option (``"2xrtx4090-24gb"`` = two cards, TP 2; ``"@pp"`` pipeline;
    ``"+nvlink"`` a bridged pair) × quantization × engine knob, each with a capacity search. One row per option
    (non-fitting ones with their reason and NaN numbers), money at the user's load first
    (``cost_per_mtok_output_at_target``, ``monthly_cost``, ``replicas_needed``), then at capacity, scaling, owned
    hardware and the ``quality_caveat``; plus ``winner`` (cheapest meeting the SLO; options indistinguishable from
    it are a tie, broken by the lossless format, then the cheaper card), ``tied`` (in that tie) and ``pareto``
    (cost-vs-latency frontier) columns. ``prices`` / ``purchase_prices``: ``{gpu id: price}`` per GPU-hour / per
    card, overriding the catalogue. ``frame.attrs`` holds ``target_qps``, ``sized_at`` (a daily profile's peak
    window), ``rank_by``, the winner's label and ``tie_note`` (how a tie was broken, "" without one), ``within_model_error`` (row positions whose value lies within
    the model's typical error of the winner's), ``model_error_note`` (that, in words) and ``warnings`` (the scenario's
    ``ScenarioWarning`` texts, also issued). Numbers are float64 with NaN where an option has none; ``sep="_"`` gives
    query-friendly column names as in ``sweep``. Keywords with ``__`` are scenario fields (``cost__target_qps=20``,
    ``__`` for ``.``); other keywords are capacity options (num_requests, replications, rel_tol, ...).

    ``vllm_args`` / ``sglang_args``: a server's command line (``"vllm serve MODEL -tp 2 --max-num-seqs 128"``), as
    the CLI's ``--vllm-args`` / ``--sglang-args``: scenario < command line < keyword overrides."""
    check_sep(sep)
    over, capacity_options = split_overrides(capacity_options)
    text = to_text(scenario, over, vllm_args, sglang_args)
    found = scenario_warnings(text)
    bar = _tqdm(progress, 0, "compare")
    def update(done: int, total: int) -> None:
        bar.total = total
        bar.update(done - bar.n)
    try:
        flat, result_text = _area("analysis").compare(
            text, _strings(gpus), _strings(quants), _strings(policies),
            [int(x) for x in max_num_seqs], [int(x) for x in max_num_batched_tokens], capacity_options,
            rank_by, int(jobs or os.cpu_count() or 1), update if bar is not None else None,
            {str(k): float(v) for k, v in (prices or {}).items()},
            {str(k): float(v) for k, v in (purchase_prices or {}).items()})
    finally:
        if bar is not None:
            bar.close()
    frame = _frame(flat, sep=sep)
    result = json.loads(result_text)
    winner = result.get("winner")
    pareto = set(result.get("pareto") or [])
    tied = set(result.get("tied") or [])
    if len(frame):
        frame["winner"] = [winner == i for i in range(len(frame))]
        frame["tied"] = [i in tied for i in range(len(frame))]
        frame["pareto"] = [i in pareto for i in range(len(frame))]
    frame.attrs.update({k: v for k, v in result.items() if k not in ("rows",)})
    frame.attrs["warnings"] = found
    return frame


class Report:
    """What ``report`` made: ``html`` (the page), ``headline`` (its one-sentence answer, plain text) and ``path`` (the
    file written, or None). Shown inline in a notebook; ``str()`` is the headline."""

    def __init__(self, html: str, headline: str, path: Optional[str], warnings: Optional[List[str]] = None):
        self.html, self.headline, self.path = html, headline, path
        self.warnings = list(warnings or [])  # the scenario's ScenarioWarnings, as issued

    def _repr_html_(self) -> str:
        return self.html

    def __str__(self) -> str:
        return self.headline

    def __repr__(self) -> str:
        return f"<llmsim.Report {self.headline!r}" + (f" -> {self.path}>" if self.path else ">")


def report(scenario: Scenario, gpus: Optional[Sequence[str]] = None, quants: Optional[Sequence[str]] = None, *,
           out: Optional[Union[str, os.PathLike]] = None, policies: Sequence[str] = (),
           max_num_seqs: Sequence[int] = (), max_num_batched_tokens: Sequence[int] = (),
           rank_by: str = "monthly_cost", prices: Optional[Mapping[str, float]] = None,
           purchase_prices: Optional[Mapping[str, float]] = None, jobs: Optional[int] = None,
           progress: bool = False,
           vllm_args: Optional[str] = None, sglang_args: Optional[str] = None, **capacity_options: Any) -> Report:
    """``llmsim report``: the comparison ``compare`` makes (same arguments) as one self-contained HTML page — the
    headline answer, the options table, the winner and why the others lost, cost at the user's load and at capacity,
    latency against load, cost against capacity, the assumptions. The page is built by the same C++ as the CLI's
    (examples/cli/report), so the same scenario and options give the same page. ``out``: the file to write
    (``"report.html"``); the page is returned either way, as a ``Report`` (``.html``, ``.headline``, ``.path``).
    Keywords with ``__`` are scenario fields (``cost__target_qps=20`` is ``--target-qps 20``); other keywords are
    capacity options (num_requests, warmup_requests, replications, rel_tol, ...).

    ``vllm_args`` / ``sglang_args``: a server's command line (``"vllm serve MODEL -tp 2 --max-num-seqs 128"``), as
    the CLI's ``--vllm-args`` / ``--sglang-args``: scenario < command line < keyword overrides."""
    over, capacity_options = split_overrides(capacity_options)
    source = os.fspath(scenario) if isinstance(scenario, (str, os.PathLike)) else ""
    text = to_text(scenario, over, vllm_args, sglang_args)
    found = scenario_warnings(text)
    bar = _tqdm(progress, 0, "report")
    def update(done: int, total: int) -> None:  # compare's options, then the latency runs: restarts at 0
        if done < bar.n or total != bar.total:
            bar.reset(total=total)
        bar.update(done - bar.n)
    try:
        html, headline = _area("analysis").report(
            text, _strings(gpus), _strings(quants), _strings(policies),
            [int(x) for x in max_num_seqs], [int(x) for x in max_num_batched_tokens], capacity_options,
            rank_by, int(jobs or os.cpu_count() or 1), update if bar is not None else None,
            {str(k): float(v) for k, v in (prices or {}).items()},
            {str(k): float(v) for k, v in (purchase_prices or {}).items()}, source)
    finally:
        if bar is not None:
            bar.close()
    path = None
    if out is not None:
        path = os.fspath(out)
        tmp = f"{path}.tmp{os.getpid()}"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(html)
            os.replace(tmp, path)  # never a half-written page under the name
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
    return Report(html, headline, path, found)
