"""The same keyword overrides on every function (issue 30): a scenario field as a keyword with ``__`` for ``.``
(``hardware__gpu="h100-80gb-sxm"``), applied by libsim; a misspelt path is a ValueError naming it."""
import copy
import os
from pathlib import Path

import pytest

import llmsim
from conftest import SMALL

H100 = "h100-80gb-sxm"
DATA = Path(os.environ.get("LLMSIM_SOURCE_DIR", Path(__file__).resolve().parents[2])) / "tests/data/vllm_results"
VLLM = DATA / "lambdalabs-h100-llama3-8b-v0.5.4-np80.json"
FAST = dict(num_requests=40, warmup_requests=4, replications=1, rel_tol=0.2)


@pytest.fixture
def s():
    out = copy.deepcopy(SMALL)
    out["workload"]["num_requests"], out["workload"]["warmup_requests"] = 40, 4
    return out


# Each function, called with the overrides; returns the GPU the run used.
CALLS = {
    "simulate": lambda s, **o: llmsim.simulate(s, **o).scenario["hardware"]["gpu"],
    "capacity": lambda s, **o: llmsim.capacity(s, **FAST, **o)["gpu"],
    "compare": lambda s, **o: llmsim.compare(s, gpus=["a100-80gb-sxm"], jobs=1, **FAST, **o).attrs,
    "report": lambda s, **o: llmsim.report(s, gpus=["a100-80gb-sxm"], jobs=1, **FAST, **o).html,
    "sweep": lambda s, **o: llmsim.sweep(s, {"workload.arrival.rate": [1.0]}, jobs=1, progress=False, **o)["gpu"][0],
    "sweep_list": lambda s, **o: llmsim.sweep([s], jobs=1, progress=False, **o)["gpu"][0],
    "search": lambda s, **o: llmsim.search(s, 1.0, axes={"quant.weights": ["fp16"]}, jobs=1,
                                           screen=FAST, final_check=FAST, raw=True, **o),
    "throughput": lambda s, **o: llmsim.throughput(s, num_requests=20, **o)["gpu"],
    "check": lambda s, **o: llmsim.check(VLLM, scenario=s, model="llama-3.1-8b", **o).attrs["scenario"]["hardware"]["gpu"],
    "memory": lambda s, **o: llmsim.memory(s, **o)["gpu"],
    "step": lambda s, **o: llmsim.step(s, decode_seqs=4, context=512, **o),
    "scenario": lambda s, **o: llmsim.scenario(s, **o)["hardware"]["gpu"],
    "resolve": lambda s, **o: llmsim.resolve(s, **o)["gpu"],
}


def _gpu_id(value):
    return value["id"] if isinstance(value, dict) else value


@pytest.mark.parametrize("name", ["simulate", "capacity", "sweep", "sweep_list", "throughput", "check", "memory",
                                  "scenario", "resolve"])
def test_hardware__gpu_moves_the_run(name, s):
    assert _gpu_id(CALLS[name](s, hardware__gpu=H100)) == H100


def test_compare_report_search_and_step_take_overrides(s):
    assert CALLS["compare"](s, cost__target_qps=1.25)["target_qps"] == 1.25
    assert "h100" not in CALLS["report"](s).lower()
    searched = CALLS["search"](s, cost__target_qps=1.0)  # the front's names the searched GPU(s)
    assert searched["target_qps"] == 1.0
    fast = CALLS["step"](s, hardware__gpu=H100)["time_ms"]
    slow = CALLS["step"](s, hardware__gpu="l4-24gb")["time_ms"]
    assert fast < slow


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_misspelt_path_is_refused(name, s):
    with pytest.raises(ValueError, match="no_such_field"):
        CALLS[name](s, engine__no_such_field=1)


def test_simulate_overrides_set_nested_fields(s):
    r = llmsim.simulate(s, engine__max_num_seqs=8, workload__arrival__rate=0.5)
    assert r.scenario["engine"]["max_num_seqs"] == 8
    assert r.scenario["workload"]["arrival"]["rate"] == 0.5


@pytest.mark.parametrize("fn, named, path, value, other", [
    ("memory", "gpu_memory_utilization", "engine__gpu_memory_utilization", 0.8, 0.7),
    ("memory", "max_num_batched_tokens", "engine__max_num_batched_tokens", 4096, 2048),
    ("memory", "gpu", "hardware__gpu", H100, "a100-80gb-sxm"),
    ("step", "gpu", "hardware__gpu", H100, "a100-80gb-sxm"),
    ("throughput", "quant", "quant__weights", "fp8", "fp16"),
])
def test_a_field_by_its_keyword_or_its_path_is_one_field(fn, named, path, value, other):
    """attack12: memory(engine__gpu_memory_utilization=0.8) raised Python's TypeError "got multiple values for keyword
    argument 'engine.gpu_memory_utilization'" (the named keyword, unset, splatted beside it); simulate and throughput
    let the path silently win over a different named value. Either spelling alone gives the same answer; both with
    two values is a ValueError naming the field."""
    base = {"memory": dict(model="llama-3.1-8b", gpu=H100),
            "step": dict(model="llama-3.1-8b", gpu=H100, decode_seqs=8, context=512),
            "throughput": dict(scenario=dict(SMALL, workload=dict(SMALL["workload"], num_requests=20)))}[fn]
    call = {"memory": llmsim.memory, "step": llmsim.step, "throughput": llmsim.throughput}[fn]
    by_path = call(**{**base, path: value})
    assert call(**{**base, named: value}) == by_path
    with pytest.raises(ValueError, match=path.replace("__", ".")):
        call(**{**base, named: value, path: other})
