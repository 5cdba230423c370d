"""Turning result rows (JSON objects with nested latency dicts) into flat DataFrames.

Every frame the package returns (``sweep``, ``compare``, ``capacity_frame``, ``Result.to_frame``) goes through
``typed`` and ``named``: numeric columns are float64 with NaN where a row has no number (a configuration that does
not fit), never object columns holding None; yes/no columns are bool (pandas' nullable "boolean" when a row has no
verdict); and nested names are joined with ``sep`` — "." by default (``ttft_ms.p95``, the CLI's CSV columns and
``--fail-if`` names), or "_" for names ``DataFrame.query`` and attribute access take (``ttft_ms_p95``).
"""
from __future__ import annotations

import json
import numbers
from typing import TYPE_CHECKING, Any, Iterable, Mapping

if TYPE_CHECKING:  # pandas (and numpy) load inside the functions that use them: `import llmsim` stays light
    import pandas as pd


SEPARATORS = (".", "_")


def check_sep(sep: str) -> str:
    if sep not in SEPARATORS:
        raise ValueError(f"sep: expected '.' (the CLI's column names) or '_' (names DataFrame.query takes), got {sep!r}")
    return sep


def _kind(values: list) -> str:
    import numpy as np
    present = [v for v in values if v is not None and not (isinstance(v, float) and np.isnan(v))]
    if not present:
        return "number"  # no row has a value: missing numbers, NaN (pandas' own missing-value convention)
    if all(isinstance(v, (bool, np.bool_)) for v in present):
        return "bool"
    if all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in present):
        return "number"
    return "object"


def typed(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with each column in its value type: numbers (with None) -> float64/NaN (int64 when every row has a
    whole number), booleans -> bool (nullable "boolean" when some are missing); strings stay objects."""
    import numpy as np
    import pandas as pd
    out = {}
    for name in frame.columns:
        col = frame[name]
        values = col.tolist()
        kind = _kind(values) if col.dtype == object else None
        if kind == "number":
            if all(isinstance(v, numbers.Integral) for v in values):
                out[name] = col.astype("int64")
            else:
                out[name] = pd.to_numeric(col.map(lambda v: np.nan if v is None else v), errors="raise").astype("float64")
        elif kind == "bool":
            out[name] = col.astype("boolean") if any(v is None for v in values) else col.astype(bool)
        else:
            out[name] = col
    result = pd.DataFrame(out, index=frame.index)
    result.attrs.update(frame.attrs)
    return result


def named(frame: pd.DataFrame, sep: str = ".") -> pd.DataFrame:
    """Column names with their dots replaced by ``sep``. ValueError if that makes two columns one."""
    if check_sep(sep) == ".":
        return frame
    names = [str(c).replace(".", sep) for c in frame.columns]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"sep: '{sep}' would give two columns the same name: {twice}")
    frame = frame.copy()
    frame.columns = names
    return frame


def rows_frame(rows: Iterable[Mapping[str, Any]], sep: str = ".") -> pd.DataFrame:
    """One row per object; nested objects become columns joined by ``sep`` ("ttft_ms.p95"). Absent numbers (a
    configuration that does not fit) are NaN, never 0 and never None."""
    import pandas as pd
    rows = list(rows)
    if not rows:
        return pd.DataFrame()
    return named(typed(pd.json_normalize(rows, sep=".")), sep)


def records_frame(columns: Mapping[str, Any]) -> pd.DataFrame:
    import pandas as pd
    return pd.DataFrame(dict(columns))


def series_frame(series_json: str) -> pd.DataFrame:
    """The run's time-series windows (``simulate(..., time_series=...)``; JSON rows from the C++ core), one row each."""
    import pandas as pd
    return pd.DataFrame(json.loads(series_json))


def fleet_hours_frame(summary: Mapping[str, Any]) -> pd.DataFrame:
    """The per-hour fleet table the engine computed (``summary["fleet"]["hours"]``), one row per hour: arrivals,
    completed, good, failed, timed_out, slo_attainment (NaN when nothing ended), replicas_billed and replicas_ready,
    with ``hour`` = start_s / 3600. Empty when the run did not fit."""
    import pandas as pd
    hours = summary.get("fleet", {}).get("hours", [])
    frame = pd.DataFrame(hours)
    if not frame.empty:
        frame.insert(0, "hour", frame["start_s"] / 3600.0)
        frame["slo_attainment"] = frame["slo_attainment"].astype(float)
    return frame
