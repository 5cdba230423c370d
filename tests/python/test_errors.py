"""Bad input from Python raises ValueError naming the field path; nothing crashes."""
import math

import pytest

import llmsim
from conftest import SMALL

# (scenario edit, text the message must contain)
MALFORMED = [
    ({"model": "llama-9b"}, "model"),
    ({"model": 42}, "model"),
    ({"modle": "llama-3.1-8b"}, "modle"),
    ({"hardware": {"gpu": "rtx4091"}}, "hardware.gpu"),
    ({"hardware": {"gpu": "a100-80gb-sxm:mig-9g.99gb"}}, "hardware.gpu"),
    ({"hardware": {"tp": "two"}}, "hardware.tp"),
    ({"hardware": {"tp": 3}}, "hardware.tp"),
    ({"hardware": {"tp": 1.5}}, "hardware.tp"),
    ({"hardware": {"replicas": 0}}, "hardware.replicas"),
    ({"hardware": "a100"}, "hardware"),
    ({"quant": {"weights": "int3"}}, "quant.weights"),
    ({"quant": {"kv_cache": "fp12"}}, "quant.kv_cache"),
    ({"engine": {"max_num_seqs": 0}}, "engine.max_num_seqs"),
    ({"engine": {"gpu_memory_utilization": 1.5}}, "engine.gpu_memory_utilization"),
    ({"engine": {"policy": "fastest"}}, "engine.policy"),
    ({"engine": {"block_sise": 16}}, "block_sise"),
    ({"workload": {"arrival": {"process": "poisson", "rate": -3}}}, "workload.arrival.rate"),
    ({"workload": {"arrival": {"process": "teleport"}}}, "workload.arrival"),
    ({"workload": {"arrival": {"process": "poisson", "rate": "fast"}}}, "workload.arrival.rate"),
    ({"workload": {"input_tokens": {"dist": "zipf"}}}, "workload.input_tokens"),
    ({"workload": {"input_tokens": {"dist": "fixed", "value": -5}}}, "workload.input_tokens"),
    ({"workload": {"num_requests": 1.5}}, "workload.num_requests"),
    ({"workload": {"num_requests": -1}}, "workload.num_requests"),
    ({"workload": {"seed": "abc"}}, "workload.seed"),
    ({"workload": []}, "workload"),
    ({"slo": {"ttft_ms": {"p101": 2000}}}, "slo"),
    ({"slo": {"ttft_ms": {"p95": -1}}}, "slo"),
    ({"cost": {"hours_per_month": -730}}, "cost.hours_per_month"),
]


def edited(edit):
    s = {k: (dict(v) if isinstance(v, dict) else v) for k, v in SMALL.items()}
    for key, value in edit.items():
        if isinstance(value, dict) and isinstance(s.get(key), dict):
            merged = dict(s[key])
            merged.update(value)
            s[key] = merged
        else:
            s[key] = value
    return s


@pytest.mark.parametrize("edit,path", MALFORMED, ids=[p + str(i) for i, (_, p) in enumerate(MALFORMED)])
def test_malformed_scenarios_raise_value_error(edit, path):
    s = edited(edit)
    with pytest.raises(ValueError, match=path.replace(".", r"\.")):
        llmsim.simulate(s)
    with pytest.raises(ValueError, match=path.replace(".", r"\.")):
        llmsim.resolve(s)


@pytest.mark.parametrize("edit,path", MALFORMED[:8])
def test_malformed_points_in_a_sweep(edit, path):
    with pytest.raises(ValueError, match=r"grid point 1\b.*" + path.replace(".", r"\.")):
        llmsim.sweep(None, [SMALL, edited(edit)], progress=False)
    with pytest.raises(ValueError, match=r"grid point 1\b.*" + path.replace(".", r"\.")):
        llmsim.sweep(SMALL, [{}, edit], progress=False)


def test_not_json_at_all():
    for bad in ([1, 2], 3.5, None, {"workload": {"arrival": {"process": "poisson", "rate": math.nan}}},
                {"model": object()}):
        with pytest.raises(ValueError):
            llmsim.simulate(bad)
    with pytest.raises(ValueError, match="no such file"):
        llmsim.simulate("/nonexistent/scenario.json")


def test_config_error_is_value_error_subclass():
    assert issubclass(llmsim.ConfigError, ValueError)
    with pytest.raises(llmsim.ConfigError):
        llmsim.memory(model="llama-3.1-8b", gpu="rtx4090-24gb", tp=3)


def test_bad_grids():
    with pytest.raises(ValueError, match="grid"):
        llmsim.sweep(SMALL, {}, progress=False)
    with pytest.raises(ValueError, match="grid.hardware.gpu"):
        llmsim.sweep(SMALL, {"hardware.gpu": "rtx4090-24gb"}, progress=False)
    with pytest.raises(ValueError, match="hardware.gpux"):
        llmsim.sweep(SMALL, {"hardware.gpux": ["rtx4090-24gb"]}, progress=False)
    with pytest.raises(ValueError, match="capacity"):
        llmsim.capacity(SMALL, rel_tol=-1)


def test_integer_arguments_are_whole_numbers_named_with_their_range():
    """Issue 29 (`step --context 1e12`): an integer argument was passed through int(): 1.5 ran as 1, NaN or 1e30 failed
    without the argument's name. A whole float (1e12) is the number it is; the step then says its valid range."""
    import numpy as np
    step = dict(model="llama-3.1-8b", gpu="a100-80gb-sxm", decode_seqs=1)
    with pytest.raises(ValueError, match=r"context: .*context must be in 1\.\.131071"):
        llmsim.step(**step, context=1e12)
    for bad in (1.5, math.nan, 1e30, True, "1000"):
        with pytest.raises(ValueError, match=r"^context: expected a whole number from"):
            llmsim.step(**step, context=bad)
    assert llmsim.step(**step, context=np.int64(1024)) == llmsim.step(**step, context=1024.0)
    with pytest.raises(ValueError, match="^decode_seqs: expected a whole number"):
        llmsim.step(model="llama-3.1-8b", gpu="a100-80gb-sxm", decode_seqs=2.5, context=100)
    with pytest.raises(ValueError, match="^num_gpus: expected a whole number"):
        llmsim.memory(model="llama-3.1-8b", gpu="a100-80gb-sxm", num_gpus=1.5)
