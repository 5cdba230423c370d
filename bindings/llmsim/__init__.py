"""llmsim: capacity and cost simulator for LLM serving (Python face of the C++ core).

    import llmsim
    r = llmsim.simulate({"model": "llama-3.1-8b", "hardware": {"gpu": "rtx4090-24gb"}})
    r.summary["ttft_ms"]["p95"]
    llmsim.sweep(base, {"hardware.gpu": ["rtx4090-24gb", "a100-80gb-sxm"], "workload.arrival.rate": [1, 2, 4]})

Scenarios are dicts in the CLI's JSON format (or paths to such files). Bad input raises ValueError
(``llmsim.ConfigError``) whose message names the field path.
"""
from . import _core
from ._core import CalibrationDataError, ConfigError
from ._scenario import ScenarioWarning, ServerArgsWarning, normalize as scenario, resolve
from .api import Result, frame, memory, simulate, step
from .check import check
from .calibrate import Calibration, calibrate, predict_runs
from . import catalog
from .catalog import load_gpu_spec, load_hf_config
from .sweep import Report, capacity, compare, expand_grid, report, sweep
from .search import search
from .throughput import throughput
from . import plot

__all__ = ["ConfigError", "CalibrationDataError", "Result", "frame", "memory", "step", "simulate", "throughput", "capacity",
           "compare", "report", "Report", "sweep", "search", "expand_grid", "scenario", "resolve", "catalog", "load_gpu_spec",
           "load_hf_config", "plot", "check", "calibrate", "predict_runs", "Calibration", "ServerArgsWarning",
           "ScenarioWarning"]
__version__ = "0.1.0"
