"""A profile fitted to your own benchmark files (``llmsim calibrate-fit --runs`` from Python).

    fit = llmsim.calibrate("data/calibration_runs/lambdalabs-h100-80gb-sxm/RUNS.json", fields=["auto"])
    fit.runs[["run", "key", "measured", "before", "after", "cross_validated"]]
    fit.save("h100-mine.json")                       # then hardware.gpu_profile / --gpu-profile
    llmsim.predict_runs("other/RUNS.json", fit.profile)

Reading the files, the fit and every rule live in C++ (``analysis/bench_runs.hpp``, ``calibration/fit/run_fit.hpp``);
this module converts arguments and builds DataFrames.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence, Union

from .api import _area

if TYPE_CHECKING:  # pandas (and numpy) load inside the functions that use them: `import llmsim` stays light
    import pandas as pd

PathLike = Union[str, os.PathLike]


@dataclass
class Calibration:
    """What ``calibrate`` returns: ``profile`` (the HardwareProfile JSON as a dict), ``report`` (the fit report:
    fields, unconstrained, correlated, summary, notes), ``fields`` and ``runs`` as DataFrames."""
    profile: Dict[str, Any]
    report: Dict[str, Any]
    fields: pd.DataFrame = field(repr=False)
    runs: pd.DataFrame = field(repr=False)

    def save(self, path: PathLike) -> str:
        """Writes the profile JSON (usable as ``hardware.gpu_profile`` / ``--gpu-profile``); returns the path."""
        Path(path).write_text(json.dumps(self.profile, indent=2) + "\n")
        return str(path)

    @property
    def summary(self) -> Dict[str, Any]:
        return self.report["summary"]


def _runs_frame(report: Dict[str, Any]) -> pd.DataFrame:
    import pandas as pd
    rows = []
    for r in report["runs"]:
        for i, key in enumerate(r["keys"]):
            row = {"run": r["run"], "key": key, "measured": r["measured"][i], "before": r["before"][i],
                   "after": r["after"][i]}
            if "cross_validated" in r:
                row["cross_validated"] = r["cross_validated"][i]
            rows.append(row)
    df = pd.DataFrame(rows)
    for c in ("before", "after", "cross_validated"):
        if c in df:
            df[c + "_error"] = df[c] / df["measured"] - 1.0
    return df


def calibrate(runs: PathLike, *, raw: Optional[PathLike] = None, gpu: Optional[str] = None,
              cross_validate: bool = True, min_runs_per_field: int = 2,
              fields: Optional[Sequence[str]] = None,
              prior_scale: Optional[float] = None, capacity_guard: str = "auto") -> Calibration:
    """Fits the profile of the runs' GPU to the benchmark files RUNS.json lists (docs/calibration.md, "From your
    benchmark files"); with ``raw`` (microbenchmark results of calibration/run_all.sh) the kernels are fitted
    first and the runs adjust the engine around them. ``gpu`` overrides every run's GPU; ``fields`` (name
    prefixes, e.g. ``["cpu_overhead", "gemm_bw_eff_vs_m"]``) limits the fit to those fields; ``["auto"]`` lets the
    leave-one-run-out error choose the groups of fields the runs can carry. ``prior_scale`` is the s of the
    log-normal prior that holds each field near the base profile (moving an efficiency by 15 %, or a host cost by a
    factor 2, costs what one value missed by s costs; None: the default 0.05; 0: no prior; report["prior"] says
    which was used). ``capacity_guard`` holds the predicted capacity within 15 % of the base profile's: "auto"
    (when every serving run ran below capacity), "on" (always; needs a serving run stating its output throughput)
    or "off" (report["capacity_guard"] says whether it applied). Bad input (an unknown
    file type, a command that does not match its file, a run that does not fit, too few runs for a field) raises
    ValueError naming the run and the field."""
    import pandas as pd
    if not Path(runs).is_file():
        raise ValueError(f"runs: no such file '{runs}'")
    out = json.loads(_area("calibration").fit_runs(str(runs), str(raw) if raw else "", gpu or "",
                                                   bool(cross_validate), int(min_runs_per_field),
                                                   list(fields or []),
                                                   None if prior_scale is None else float(prior_scale),
                                                   str(capacity_guard)))
    report = out["report"]
    return Calibration(profile=out["profile"], report=report, fields=pd.DataFrame(report["fields"]),
                       runs=_runs_frame(report))


def predict_runs(runs: PathLike, profile: Union[None, Dict[str, Any], PathLike] = None, *,
                 gpu: Optional[str] = None) -> pd.DataFrame:
    """Every measured value of RUNS.json beside its prediction with ``profile`` (a dict, a profile file, or None
    for the GPU's default profile): columns run, key, measured, predicted, error."""
    import pandas as pd
    if profile is None:
        text = ""
    else:
        text = json.dumps(profile) if isinstance(profile, dict) else Path(profile).read_text()
    rows = []
    for r in json.loads(_area("calibration").predict_runs(str(runs), text, gpu or "")):
        for i, m in enumerate(r["measured"]):
            rows.append({"run": r["name"], "key": m["key"], "measured": m["value"], "predicted": r["predicted"][i]})
    df = pd.DataFrame(rows)
    if len(df):
        df["error"] = df["predicted"] / df["measured"] - 1.0
    return df
