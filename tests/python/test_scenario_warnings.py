"""A GPU profile fitted on another runtime is a ScenarioWarning in every Python command that sizes or sweeps, and is
kept in its result (issue 29): the one rule is C++ analysis::scenario_warnings, as for the CLI's every command."""
import json
import os
import warnings
from pathlib import Path

import pytest

import llmsim

SOURCE = Path(os.environ.get("LLMSIM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
WARNING = "fitted from runs on runtime 'vllm-v0'"
QUICK = dict(replications=1, num_requests=120, warmup_requests=10)


@pytest.fixture(scope="module")
def v0_profile(tmp_path_factory):
    # The committed public A100 profile as `calibrate-fit --runs` writes it from vLLM 0.6.0 runs (runtime vllm-v0).
    profile = json.loads((SOURCE / "data/profiles/a100-80gb-sxm-public.json").read_text())
    profile["runtime"] = "vllm-v0"
    profile["engine_version"] = "0.6.0"
    path = tmp_path_factory.mktemp("profiles") / "v0-fitted.json"
    path.write_text(json.dumps(profile))
    return str(path)


def issued(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [w for w in caught if issubclass(w.category, llmsim.ScenarioWarning)]


def test_every_sizing_and_sweep_command_warns_and_keeps_it(small, v0_profile):
    small["hardware"]["gpu_profile"] = v0_profile
    small["workload"]["num_requests"] = 120
    small["workload"]["warmup_requests"] = 10
    calls = {
        "capacity": lambda: llmsim.capacity(small, **QUICK),
        "capacity(frame=True)": lambda: llmsim.capacity(small, frame=True, **QUICK),
        "compare": lambda: llmsim.compare(small, ["a100-80gb-sxm"], jobs=1, **QUICK),
        "sweep": lambda: llmsim.sweep(small, {"workload.arrival.rate": [1, 2]}, jobs=1, progress=False),
        "search": lambda: llmsim.search(small, 2, gpus=["a100-80gb-sxm"], axes={"engine.max_num_seqs": [64]}, jobs=1,
                                        screen=QUICK, final_check=QUICK),
        "report": lambda: llmsim.report(small, ["a100-80gb-sxm"], jobs=1, **QUICK),
    }
    for name, call in calls.items():
        result, caught = issued(call)
        assert len(caught) == 1, name  # once, not once per simulation
        assert WARNING in str(caught[0].message), name
        kept = (result["warnings"] if isinstance(result, dict) else
                result.warnings if isinstance(result, llmsim.Report) else result.attrs["warnings"])
        assert len(kept) == 1 and WARNING in kept[0], name


def test_the_profiles_own_runtime_and_no_profile_say_nothing(small, v0_profile):
    for over in ({"hardware": {**small["hardware"], "gpu_profile": v0_profile}, "engine": {**small["engine"],
                  "runtime": "vllm==0.6.3"}}, {}):
        scenario = {**small, **over}
        row, caught = issued(lambda: llmsim.capacity(scenario, **QUICK))
        assert caught == [] and row["warnings"] == []
        frame, caught = issued(lambda: llmsim.sweep(scenario, {"workload.arrival.rate": [1]}, jobs=1, progress=False))
        assert caught == [] and frame.attrs["warnings"] == []
