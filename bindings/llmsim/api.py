"""The CLI's commands as functions: memory, step, simulate (-> Result), capacity, compare."""
from __future__ import annotations

import json
import warnings
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union

from . import _core
from ._frames import fleet_hours_frame, records_frame, rows_frame, series_frame
from ._scenario import (ConfigError, Scenario, ServerArgsWarning, check_server_lines, normalize, to_text, whole,
                        with_keywords)

if TYPE_CHECKING:  # pandas (and numpy) load inside the functions that use them: `import llmsim` stays light
    import pandas as pd


def _area(name: str):
    """The _core submodule for one C++ area; a clear error when llmsim was built without that layer."""
    sub = getattr(_core, name, None)
    if sub is None:
        raise RuntimeError(f"llmsim was built without the '{name}' layer (built areas: {list(_core.areas)}); "
                           "rebuild after the layer's sources are in place")
    return sub


def _overrides(model=None, gpu=None, quant=None, kv_dtype=None, tp=None, pp=None, max_model_len=None,
               **extra) -> dict:
    """Keyword arguments as dotted scenario paths. ``gpu`` is any GPU option libsim parses ("2xrtx4090-24gb@pp",
    "2xa100-80gb-pcie+nvlink"): its count becomes tp x pp there, and a tp/pp that contradicts it is a ValueError."""
    out = {"model": model, "quant.weights": quant, "quant.kv_cache": kv_dtype, "engine.max_model_len": max_model_len,
           "hardware.gpu": gpu, "hardware.tp": tp, "hardware.pp": pp}
    out.update(extra)
    return out


def _server_fields(command: str, vllm_args: Optional[str], sglang_args: Optional[str]) -> dict:
    """The scenario fields ``memory`` / ``step`` read from a server command line, by libsim's rule
    (``analysis::command_server_fields``, the CLI's ``--vllm-args``/``--sglang-args`` on those commands): flags that
    do not change the answer are named in a ``ServerArgsWarning``; a misspelt, blank or unusable flag is a
    ValueError naming the argument."""
    check_server_lines(vllm_args, sglang_args)
    if not (vllm_args or sglang_args):
        return {}
    if not isinstance(vllm_args or "", str) or not isinstance(sglang_args or "", str):
        raise ConfigError("vllm_args/sglang_args: expected the command line as one string")
    pairs, notes = _area("analysis").command_server_fields(command, vllm_args or "", sglang_args or "")
    for note in notes:
        warnings.warn(note, ServerArgsWarning, stacklevel=3)
    return {path: value for path, value in json.loads(pairs)}


def _with_server(server: dict, overrides: dict) -> dict:
    """The server line's fields under the keyword arguments: a keyword given wins, as an option does on the CLI."""
    # The card first (as to_text places it): its count drops the scenario's tp 1, never the server line's -tp 1.
    out = {"hardware.gpu": overrides["hardware.gpu"]} if overrides.get("hardware.gpu") is not None else {}
    out.update(server)
    out.update({k: v for k, v in overrides.items() if v is not None})
    return out


def memory(scenario: Optional[Scenario] = None, *, model: Optional[str] = None, gpu: Optional[str] = None,
           quant: Optional[str] = None, kv_dtype: Optional[str] = None, tp: Optional[int] = None,
           pp: Optional[int] = None, num_gpus: Optional[int] = None, max_model_len: Optional[Union[int, str]] = None,
           gpu_memory_utilization: Optional[float] = None, max_num_batched_tokens: Optional[int] = None,
           vllm_args: Optional[str] = None, sglang_args: Optional[str] = None, **overrides: Any) -> dict:
    """Does the model fit, and how much KV cache is left per GPU? (``llmsim memory --json`` fields.)

    Keyword arguments override the scenario (defaults: the scenario format's defaults). ``num_gpus`` without
    ``tp`` means tensor parallel over all of them. ``max_model_len`` unset, ``"auto"`` or -1 is vLLM's auto (the
    model's context if it fits, else the largest that does: ``max_model_len_note`` says which); a number is
    vLLM's strict check. Other scenario fields: ``engine__block_size=32`` style (``__`` for ``.``). Bad input raises
    ValueError naming the field.

    ``vllm_args`` / ``sglang_args``: a server's command line (``"vllm serve MODEL -tp 2 --max-model-len 8192"``),
    read as ``llmsim memory --vllm-args`` reads it (the same rule in libsim): its model, split, formats and memory
    knobs, and an SGLang line's server (SGLang's accounting, as a scenario with ``engine.runtime`` "sglang"); a
    keyword given here wins. Flags that do not change the plan are named in a ``ServerArgsWarning``; a misspelt flag
    or a flag the plan cannot use is a ValueError.
    """
    server = _server_fields("memory", vllm_args, sglang_args)
    if num_gpus is not None:  # libsim's rule: tp = num_gpus / pp unless tp is given, then they must agree
        tp = tp if tp is not None else server.get("hardware.tp")
        pp = pp if pp is not None else server.get("hardware.pp")
        tp, pp = _core.spec.split_for_count(whole(num_gpus, "num_gpus"), None if tp is None else whole(tp, "tp"),
                                            whole(pp or 1, "pp"))
    text = to_text(scenario or {}, _with_server(server, with_keywords(_overrides(
        model, gpu, quant, kv_dtype, tp, pp, max_model_len, **{
            "engine.gpu_memory_utilization": gpu_memory_utilization,
            "engine.max_num_batched_tokens": max_num_batched_tokens}), overrides)))
    return json.loads(_area("memory").plan(text))


def step(scenario: Optional[Scenario] = None, *, prefill_tokens: int = 0, prefill_context: int = 0,
         decode_seqs: int = 0, context: int = 0, model: Optional[str] = None, gpu: Optional[str] = None,
         quant: Optional[str] = None, kv_dtype: Optional[str] = None, tp: Optional[int] = None,
         pp: Optional[int] = None, gpu_profile: Optional[Any] = None, vllm_args: Optional[str] = None,
         sglang_args: Optional[str] = None, **overrides: Any) -> dict:
    """Time of one engine iteration with its per-op roofline breakdown (``llmsim step --json`` fields:
    time_ms, bound, ops, tokens_per_s). One prefill chunk of ``prefill_tokens`` after ``prefill_context``
    cached tokens, plus ``decode_seqs`` sequences decoding at ``context`` tokens each. Other scenario fields:
    ``engine__attention_backend=...`` style (``__`` for ``.``). ``vllm_args`` / ``sglang_args``: a server's command
    line, read as ``llmsim step --vllm-args`` reads it (model, split, formats, ``--enforce-eager``, SGLang's
    runtime; a keyword given here wins)."""
    server = _server_fields("step", vllm_args, sglang_args)
    text = to_text(scenario or {}, _with_server(server, with_keywords(_overrides(
        model, gpu, quant, kv_dtype, tp, pp, **{"hardware.gpu_profile": gpu_profile}), overrides)))
    return json.loads(_area("step").step(text, whole(prefill_tokens, "prefill_tokens"),
                                         whole(prefill_context, "prefill_context"),
                                         whole(decode_seqs, "decode_seqs"), whole(context, "context")))


class Result:
    """One simulation: ``summary`` (the DESIGN.md result object, identical to ``llmsim simulate --json``),
    ``requests`` and ``iterations`` DataFrames when recorded (else None), ``time_series`` (one row per window:
    queue, batch, KV use, arrivals, completions, TTFT/E2E percentiles) when asked for, and the normalized
    ``scenario``."""

    def __init__(self, summary: dict, requests: Optional[pd.DataFrame], iterations: Optional[pd.DataFrame],
                 scenario: dict, time_series: Optional[pd.DataFrame] = None):
        self.summary = summary
        self.requests = requests
        self.iterations = iterations
        self.scenario = scenario
        self.time_series = time_series

    def __getitem__(self, key: str) -> Any:
        return self.summary[key]

    @property
    def fleet_hours(self) -> pd.DataFrame:
        """The fleet hour by hour (``summary["fleet"]["hours"]``, computed in C++): arrivals, completions, SLO
        attainment, replicas billed and ready — an autoscaled fleet's daily shape and its cold starts."""
        return fleet_hours_frame(self.summary)

    def to_json(self, indent: Optional[int] = None) -> str:
        """The summary as JSON text."""
        return json.dumps(self.summary, indent=indent)

    def to_frame(self, sep: str = ".") -> pd.DataFrame:
        """The summary as a one-row DataFrame with the same column names and types as ``sweep`` frames
        (``ttft_ms.p95``, or ``ttft_ms_p95`` with ``sep="_"``; numbers float64, missing ones NaN)."""
        return rows_frame([self.summary], sep=sep)

    def __repr__(self) -> str:
        """The verdicts first — fits, stable or saturated, SLO met — then the numbers behind them."""
        s = self.summary
        if not s.get("fits", True):
            return f"<llmsim.Result cannot run: {s.get('reason', '')}>"
        verdicts = ["fits"]
        if s.get("unstable"):
            sat = (s.get("saturation") or {}).get("requests_per_s")
            verdicts.append("UNSTABLE (saturated: arrivals outpace service"
                            + (f", which tops out at {sat:.3g} req/s" if isinstance(sat, (int, float)) else "") + ")")
        else:
            verdicts.append("stable")
        slo = s.get("slo_met")
        if slo is None and s.get("slo_met_note"):  # no latency target: no verdict (libsim writes null and the note)
            verdicts.append("no SLO set" if s.get("completed_requests")
                            else "no SLO set, NOT met: no request completed")
        elif slo is not None:
            # With no latency target there is nothing to meet (libsim's analysis::has_slo): said so, not "SLO met".
            if not self.scenario or _area("analysis").has_slo(json.dumps(self.scenario)):
                verdicts.append("SLO met" if slo else "SLO NOT met")
            else:  # slo_met is false without a target only when nothing completed (metrics' rule)
                verdicts.append("no SLO set" if slo else "no SLO set, NOT met: no request completed")
        # A statistic with no sample is null (docs/result-format.md): shown as nan, not a crash in repr.
        p95 = lambda k: ((s.get(k) or {}).get("p95") if (s.get(k) or {}).get("p95") is not None  # noqa: E731
                         else float("nan"))
        att = s.get("slo_attainment")
        return (f"<llmsim.Result {', '.join(verdicts)}: {s.get('completed_requests')} requests, "
                f"{(s.get('throughput') or {}).get('output_tokens_per_s', 0):.1f} out tok/s, "
                f"P95 TTFT {p95('ttft_ms'):.1f} ms, P95 TPOT {p95('tpot_ms'):.1f} ms"
                + (f", SLO attainment {att:.3f}" if isinstance(att, (int, float)) else "") + ">")


def frame(rows: Any, sep: str = ".") -> pd.DataFrame:
    """``simulate`` results as a DataFrame with the column names and types of ``sweep`` frames: a ``Result``, its
    ``summary`` dict, or a list of them (one row each). Nested fields become ``ttft_ms.p95`` (``ttft_ms_p95`` with
    ``sep="_"``); numbers are float64 with NaN where absent. (A capacity row: ``capacity(..., frame=True)``.)"""
    items = rows if isinstance(rows, (list, tuple)) else [rows]
    return rows_frame([r.summary if isinstance(r, Result) else r for r in items], sep=sep)


def simulate(scenario: Scenario, *, record_requests: bool = False, record_iterations: bool = False,
             seed: Optional[int] = None, rate: Optional[float] = None, num_requests: Optional[int] = None,
             gpu: Optional[str] = None, quant: Optional[str] = None, time_series: Any = None,
             vllm_args: Optional[str] = None, sglang_args: Optional[str] = None, **overrides: Any) -> Result:
    """Runs one scenario (dict or JSON file) and returns a Result; same scenario and seed give the same
    numbers as ``llmsim simulate --json``. Keyword overrides mirror the CLI flags (``rate`` rescales the
    offered load as ``--rate`` does: open-loop rates keep their class mix, a closed loop gets that concurrency).
    ``time_series`` (``--time-series``): a window width in seconds, or True for automatic windows; the result's
    ``time_series`` frame then has one row per window. Any other scenario field is a keyword with ``__`` for ``.``
    (``hardware__gpu="2xl4-24gb"``, ``engine__max_num_seqs=64``), as in every llmsim function. The GIL is released
    while the simulation runs, so threads run simulations in parallel.

    ``vllm_args`` / ``sglang_args``: a server's command line (``"vllm serve MODEL -tp 2 --max-num-seqs 128"``), as
    the CLI's ``--vllm-args`` / ``--sglang-args``: scenario < command line < keyword overrides."""
    over = with_keywords({"workload.seed": seed, "workload.num_requests": num_requests, "quant.weights": quant,
                          "hardware.gpu": gpu}, overrides)
    text = to_text(scenario, over, vllm_args, sglang_args)
    window = -1.0 if time_series is None or time_series is False else 0.0 if time_series is True else float(time_series)
    if time_series is not None and time_series is not False and time_series is not True and not window >= 0:
        raise ValueError(f"time_series: must be a window in seconds >= 0 or True, got {time_series!r}")
    if hasattr(_core, "analysis"):
        summary, req, it, series = _core.analysis.evaluate(text, record_requests, record_iterations, rate, window)
    else:
        summary, req, it = _area("engine").simulate(text, record_requests, record_iterations, rate)
        series = "[]"
    return Result(json.loads(summary), records_frame(req) if record_requests else None,
                  records_frame(it) if record_iterations else None, json.loads(text),
                  series_frame(series) if window >= 0 else None)
