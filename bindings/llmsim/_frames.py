"""Turning result rows (JSON objects with nested latency dicts) into flat DataFrames."""
from __future__ import annotations

from typing import Any, Iterable, Mapping

import pandas as pd


def rows_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per object; nested objects become dotted columns ("ttft_ms.p95"). Absent numbers (a
    configuration that does not fit) are NaN, never 0."""
    rows = list(rows)
    if not rows:
        return pd.DataFrame()
    return pd.json_normalize(rows, sep=".")


def records_frame(columns: Mapping[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(dict(columns))


def fleet_hours_frame(summary: Mapping[str, Any]) -> pd.DataFrame:
    """The per-hour fleet table the engine computed (``summary["fleet"]["hours"]``), one row per hour: arrivals,
    completed, good, failed, timed_out, slo_attainment (NaN when nothing ended), replicas_billed and replicas_ready,
    with ``hour`` = start_s / 3600. Empty when the run did not fit."""
    hours = summary.get("fleet", {}).get("hours", [])
    frame = pd.DataFrame(hours)
    if not frame.empty:
        frame.insert(0, "hour", frame["start_s"] / 3600.0)
        frame["slo_attainment"] = frame["slo_attainment"].astype(float)
    return frame
