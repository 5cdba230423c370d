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
