"""llmsim.calibrate / llmsim.predict_runs: the fit of calibrate-fit --runs from Python (the rules are C++'s)."""
import json
import math
import os
from pathlib import Path

import pytest

import llmsim

ROOT = Path(os.environ.get("LLMSIM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
A100 = ROOT / "data" / "calibration_runs" / "lambdalabs-a100-80gb-sxm" / "RUNS.json"


def subset(tmp_path, runs_json, keep):
    """A RUNS.json of the runs whose prompt count passes `keep`, with absolute result paths."""
    doc = json.loads(Path(runs_json).read_text())
    runs = []
    for r in doc["runs"]:
        n = int(r["command"].split("--num-prompts ")[1].split()[0])
        if keep(n):
            r = dict(r, result=str(Path(runs_json).parent / r["result"]))
            runs.append(r)
    doc["runs"] = runs
    path = tmp_path / "RUNS.json"
    path.write_text(json.dumps(doc))
    return path


def test_calibrate_small_runs_predicts_large_ones_better(tmp_path):
    # The fields fields=["auto"] picks on these four runs by their leave-one-out error (tests/calibration runs the
    # selection itself; here the fit and the DataFrames are under test).
    fit = llmsim.calibrate(subset(tmp_path, A100, lambda n: n <= 80),
                           fields=["gemm_bw_eff_vs_m"])
    assert fit.profile["gpu_id"] == "a100-80gb-sxm"
    assert fit.profile["runtime"] == "vllm-v0"
    assert fit.profile["engine_version"] == "vllm 0.6.0"
    assert fit.summary["rms_after"] < fit.summary["rms_before"]
    assert fit.summary["rms_cross_validated"] is not None
    # How the solves ended (calibration/fit/run_fit_solver.hpp): the fit and its refits stopped by the convergence
    # rule, not by the iteration limit.
    conv = fit.report["convergence"]
    assert conv["stopped_by"] in ("converged", "no_step", "precision")
    assert 1 <= conv["iterations"] == fit.report["iterations"] < 40
    assert conv["prior_fit_stopped_by"] is not None
    assert conv["cross_validation_at_limit"] == 0
    assert set(fit.runs.columns) >= {"run", "key", "measured", "before", "after", "cross_validated"}
    assert (fit.fields["fitted"] <= fit.fields["upper"] + 1e-12).all()
    before = llmsim.predict_runs(A100)                      # each GPU's default profile
    after = llmsim.predict_runs(A100, fit.profile)
    big = before["run"].str.contains("prompt_160|prompt_320")
    rms = lambda df: float(((df["error"] ** 2).mean()) ** 0.5)
    assert rms(after[big]) < rms(before[big])
    saved = fit.save(tmp_path / "a100.json")
    r = llmsim.simulate({"model": "llama-3.1-8b",
                         "hardware": {"gpu": "a100-80gb-sxm", "gpu_profile": saved},
                         "workload": {"num_requests": 20, "warmup_requests": 0}})
    assert any("vllm-v0" in w for w in r.summary.get("warnings", []))


def test_calibrate_bad_input_names_run_and_field(tmp_path):
    (tmp_path / "x.json").write_text('{"accuracy": 0.9}')
    (tmp_path / "RUNS.json").write_text(json.dumps(
        {"gpu": "h100-80gb-sxm", "runs": [{"result": "x.json", "command": "vllm bench latency --batch-size 4"}]}))
    with pytest.raises(ValueError, match=r"runs\[0\] \(x.json\).result.*unknown file type"):
        llmsim.calibrate(tmp_path / "RUNS.json")
    with pytest.raises(ValueError, match="no such file"):
        llmsim.calibrate(tmp_path / "missing.json")


def test_calibrate_prior_scale(tmp_path):
    # The prior is on by default and says which s it used; prior_scale=0 turns it off; a negative one is refused.
    runs = subset(tmp_path, A100, lambda n: n <= 80)
    fields = ["attn_prefill_efficiency", "v0_cpu_overhead_per_iter_s"]
    fit = llmsim.calibrate(runs, fields=fields, cross_validate=False)
    assert fit.report["prior"]["kind"] == "log-normal around the base profile"
    assert 0 < fit.report["prior"]["residual_scale"] <= 0.05
    assert set(fit.fields.columns) >= {"data_share", "prior_sigma_log"}
    assert ((fit.fields["data_share"] > 0) & (fit.fields["data_share"] <= 1)).all()
    plain = llmsim.calibrate(runs, fields=fields, cross_validate=False, prior_scale=0)
    assert plain.report["prior"]["kind"] == "none"
    assert plain.report["prior"]["residual_scale"] == 0
    # Without the prior the fields move at least as far from the base, and the runs' in-sample error is no larger.
    move = lambda f: sum(abs(math.log(a / b)) for a, b in zip(f.fields["fitted"], f.fields["base"]))
    assert move(plain) >= move(fit) - 1e-9
    assert plain.summary["rms_after"] <= fit.summary["rms_after"] + 1e-9
    with pytest.raises(ValueError, match="prior_scale"):
        llmsim.calibrate(runs, fields=fields, cross_validate=False, prior_scale=-1)


def test_calibrate_capacity_guard(tmp_path):
    # The capacity guard's switch (the rule is C++'s: calibration/fit/run_fit_capacity.hpp). These runs were sent at
    # once, so they measured capacity: "auto" (the default) and "off" leave the guard off; "on" holds the capacity
    # anyway, naming its probe; anything else is refused, naming the keyword.
    runs = subset(tmp_path, A100, lambda n: n <= 40)
    fields = ["v0_cpu_overhead_per_iter_s"]
    assert llmsim.calibrate(runs, fields=fields, cross_validate=False).report["capacity_guard"] is None
    assert llmsim.calibrate(runs, fields=fields, cross_validate=False,
                            capacity_guard="off").report["capacity_guard"] is None
    on = llmsim.calibrate(runs, fields=fields, cross_validate=False, capacity_guard="on")
    assert "sent at once" in on.report["capacity_guard"]["probe"]
    assert on.report["capacity_guard"]["output_tokens_per_s_base"] > 0
    moved = on.report["capacity_guard"]["output_tokens_per_s_fitted"] / on.report["capacity_guard"]["output_tokens_per_s_base"]
    assert abs(math.log(moved)) <= math.log1p(on.report["capacity_guard"]["max_move"]) + 1e-12
    with pytest.raises(ValueError, match=r"capacity_guard=.*expected auto, on or off, got 'yes'"):
        llmsim.calibrate(runs, fields=fields, cross_validate=False, capacity_guard="yes")
