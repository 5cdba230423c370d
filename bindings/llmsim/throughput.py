"""Maximum throughput of a deployment, as ``vllm bench throughput`` measures it: ``llmsim throughput``."""
from __future__ import annotations

import json
from typing import Any, Optional

from ._scenario import Scenario, to_text, with_keywords
from .api import _area


def throughput(scenario: Scenario, *, num_requests: Optional[int] = None, gpu: Optional[str] = None,
               quant: Optional[str] = None,
               vllm_args: Optional[str] = None, sglang_args: Optional[str] = None, **overrides: Any) -> dict:
    """Every request of the scenario at t = 0 (offline arrivals, the offline LLM class's engine defaults), served
    to the end; returns ``llmsim throughput --json``: ``throughput`` (requests / elapsed, what vllm bench
    throughput prints), ``saturation`` (the rate while requests waited), ``batch`` (size reached), ``kv``,
    ``preemptions``, ``cost`` (per million tokens at that throughput) and the engine knobs that ran. The
    scenario's arrival process only sets the class mix; a trace replay is refused (ValueError naming the field),
    as is a configuration error. ``fits`` is False, with ``reason``, when the model does not fit. Other scenario
    fields: ``engine__max_num_seqs=256`` style (``__`` for ``.``).

    ``vllm_args`` / ``sglang_args``: a server's command line (``"vllm serve MODEL -tp 2 --max-num-seqs 128"``), as
    the CLI's ``--vllm-args`` / ``--sglang-args``: scenario < command line < keyword overrides."""
    if num_requests is not None and (int(num_requests) != num_requests or num_requests < 1):
        raise ValueError(f"num_requests: must be a whole number >= 1, got {num_requests!r}")
    # libsim applies the overrides: a GPU option ("2xrtx4090-24gb@pp") and the price of the card it moves to.
    text = to_text(scenario, with_keywords({"quant.weights": quant, "hardware.gpu": gpu}, overrides), vllm_args, sglang_args)
    return json.loads(_area("analysis").throughput(text, int(num_requests or 0)))
