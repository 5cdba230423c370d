"""Measured against predicted: a vLLM benchmark result beside llmsim's prediction for the same run.

    df = llmsim.check("vllm-inf-Llama-3.1-8B.json", gpu="h100-80gb-sxm",
                      vllm_args="vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 128")
    df[["key", "measured", "predicted", "rel_error"]]

The reading of the file, the mapping of the ``vllm serve`` command line and every formula live in C++
(``analysis/vllm_check.hpp``); this module only converts arguments and builds the DataFrame.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Optional, Union

from ._scenario import Scenario, check_server_lines, dotted, plain, to_text
from .api import _area

if TYPE_CHECKING:  # pandas (and numpy) load inside the functions that use them: `import llmsim` stays light
    import pandas as pd

VllmResult = Union[str, os.PathLike, Mapping[str, Any]]


def _frame(out: Mapping[str, Any]) -> pd.DataFrame:
    import numpy as np
    import pandas as pd
    rows = [{"key": r["key"], "measured": float(r["measured"]),
             "predicted": np.nan if r["predicted"] is None else float(r["predicted"]),
             "rel_error": np.nan if r["rel_error"] is None else float(r["rel_error"]),
             "note": r["note"]} for r in out["rows"]]
    df = pd.DataFrame(rows, columns=["key", "measured", "predicted", "rel_error", "note"])
    df.attrs.update(notes=out["notes"], scenario=out["scenario"], fits=out["fits"], reason=out["reason"],
                    source=out["source"], line=out["line"], max_model_len=out["max_model_len"],
                    max_model_len_note=out["max_model_len_note"])
    return df


def check(vllm_result: VllmResult, *, scenario: Optional[Scenario] = None, vllm_args: Optional[str] = None,
          sglang_args: Optional[str] = None, model: Optional[str] = None, gpu: Optional[str] = None,
          engine_version: Optional[str] = None, run: Optional[int] = None, **overrides: Any) -> pd.DataFrame:
    """One row per number the result reports: ``key`` (the file's name), ``measured``, ``predicted``,
    ``rel_error`` ((predicted − measured) / measured) and ``note``; NaN where llmsim cannot state a number.

    ``vllm_result`` is the file ``vllm bench serve --save-result`` (or ``benchmark_serving.py``) wrote, SGLang
    ``bench_serving``'s output, or a parsed dict; a latency-only summary (no ``duration``) is compared on the
    statistics it states. A JSON-lines file (``--append-result``: one run per line) gives every run, with a first
    column ``run`` (the line), or only the run on line ``run=N``. The file does not record the GPU: pass ``gpu=``
    or a ``scenario`` naming ``hardware.gpu``.
    ``vllm_args`` is the server's command line (or ``sglang_args``, an SGLang server's:
    ``"python -m sglang.launch_server --model-path MODEL --tp 2"``, simulated on SGLang's runtime; not both); ``model`` a catalogue id or config.json overriding the file's
    ``model_id``. ``engine_version`` is the measured release (``"0.5.4"``, or ``"sglang==0.4.9"``): llmsim then
    prices that release's kernels and scheduler (docs/cost-model.md "Runtimes by version"). ``df.attrs`` holds ``notes`` (assumptions, what is not comparable), ``scenario`` (what was
    simulated), ``fits``, ``reason``, ``source``, ``line``, ``max_model_len`` (the context simulated: vLLM's auto
    resolved to a number) and ``max_model_len_note`` (``"auto: ..."`` when it came from auto, else empty); for several runs, ``runs``: those per run. Other
    scenario fields: ``hardware__gpu=`` style keywords (``__`` for ``.``), applied to ``scenario``;
    ``workload__warm_cache=True`` is the CLI's ``--warm-cache`` (a server warm from an earlier run of the same
    prompts, docs/vllm.md "A warm server"); ``workload__ignore_eos=True``/``False`` is ``--ignore-eos`` /
    ``--disable-ignore-eos`` (whether the client sent ignore_eos; unset: SGLang's bench_serving did, vLLM's client
    did not — SGLang's admission with the radix cache off reads it, docs/engine.md "SGLang"). Bad input raises
    ValueError naming the file, line and field.
    """
    import pandas as pd
    if isinstance(vllm_result, Mapping):
        # numpy scalars and arrays as plain numbers (a NaN or an object JSON cannot hold: ValueError naming the key)
        text, source = json.dumps(plain(dict(vllm_result), "vllm_result"), allow_nan=False), "vllm_result"
    elif isinstance(vllm_result, (str, os.PathLike)):
        path = Path(vllm_result)
        if path.is_dir():
            raise ValueError(f"vllm_result: '{os.fspath(vllm_result)}' is a directory, not a result file "
                             "(name the JSON file `vllm bench serve --save-result` wrote)")
        if not path.is_file():
            raise ValueError(f"vllm_result: no such file '{os.fspath(vllm_result)}'")
        text, source = path.read_text(), str(vllm_result)
    else:
        raise ValueError(f"vllm_result: expected a file path or a dict, got {type(vllm_result).__name__}")
    check_server_lines(vllm_args, sglang_args)
    if run is not None and (isinstance(run, bool) or not isinstance(run, int) or run < 1):
        raise ValueError(f"run: expected a line number >= 1, got {run!r}")
    outs = json.loads(_area("analysis").check_vllm_runs(text, source, to_text(scenario or {}, dotted(overrides)),
                                                        vllm_args or "", model or "", gpu or "", engine_version or "",
                                                        run or 0, sglang_args or ""))
    if len(outs) == 1:
        return _frame(outs[0])
    frames = [_frame(o) for o in outs]
    df = pd.concat([f.assign(run=o["line"]) for f, o in zip(frames, outs)], ignore_index=True)
    df = df[["run", "key", "measured", "predicted", "rel_error", "note"]]
    df.attrs.update(source=source, runs=[dict(f.attrs) for f in frames])
    return df
