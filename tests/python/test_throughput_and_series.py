"""Offline maximum throughput (llmsim.throughput = `llmsim throughput`) and the run's time series."""
import json
import subprocess

import pytest

import llmsim
from conftest import need

SPIKE = {
    "model": "llama-3.1-8b",
    "hardware": {"gpu": "a100-80gb-sxm"},
    "engine": {"max_model_len": 8192},
    "workload": {"arrival": {"process": "piecewise", "rates": [[0, 2], [20, 8], [40, 2]]},
                 "input_tokens": {"dist": "lognormal", "mean": 800, "sigma": 0.8},
                 "output_tokens": {"dist": "lognormal", "mean": 150, "sigma": 0.8},
                 "num_requests": 300, "warmup_requests": 0, "seed": 3},
}


def test_throughput_matches_the_cli(small, cli, tmp_path):
    need("analysis")
    py = llmsim.throughput(small, num_requests=300)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(small))
    out = subprocess.run([cli, "throughput", "--scenario", str(path), "--num-requests", "300", "--json"],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == py
    assert py["fits"] and py["complete"] and py["completed_requests"] == 300
    assert py["engine"].startswith("vLLM V1")
    assert py["max_num_batched_tokens"] == 8192  # the offline LLM class's default on an A100
    assert 0 < py["throughput"]["requests_per_s"] <= py["saturation"]["requests_per_s"] * 1.2
    assert 1 <= py["batch"]["max_seqs"] <= py["max_num_seqs"]
    assert 0 < py["kv"]["peak_used_fraction"] <= 1
    assert py["cost"]["per_mtok_output"] > 0


def test_throughput_refuses_a_trace_and_reports_what_does_not_fit(small):
    need("analysis")
    trace = dict(small, workload={"arrival": {"process": "trace", "path": "x.csv"}})
    with pytest.raises(ValueError, match="workload.arrival"):
        llmsim.throughput(trace)
    big = dict(small, model="llama-3.1-70b", hardware={"gpu": "rtx4090-24gb"})
    r = llmsim.throughput(big, num_requests=10)
    assert r["fits"] is False and r["reason"]
    with pytest.raises(ValueError, match="num_requests"):
        llmsim.throughput(small, num_requests=0)


def test_time_series_shows_a_spike_and_plots():
    need("analysis")
    r = llmsim.simulate(SPIKE, time_series=5)
    ts = r.time_series
    assert {"start_s", "end_s", "arrivals", "completions", "mean_waiting", "max_waiting", "mean_running",
            "mean_kv_used", "ttft_p95_ms", "e2e_p95_ms"} <= set(ts.columns)
    assert ts["arrivals"].sum() == 300 and ts["completions"].sum() == r.summary["completed_requests"]
    during = ts[(ts.start_s >= 20) & (ts.end_s <= 40)]
    before = ts[ts.end_s <= 20]
    assert during["arrivals"].mean() > 2.5 * before["arrivals"].mean()
    assert llmsim.simulate(SPIKE).time_series is None
    ax = llmsim.plot.time_series(r, y=["mean_waiting"], right=["ttft_p95_ms"])
    assert ax.get_xlabel() == "simulated time (s)"
    with pytest.raises(ValueError, match="time_series"):
        llmsim.simulate(SPIKE, time_series=-3)


def test_bad_rate_schedules_name_the_field():
    for rates, field in (([[0, 4], [60, 12], [30, 4]], "workload.arrival.rates[2][0]"),
                         ([[0, 4], [60, -1]], "workload.arrival.rates[1][1]"),
                         ([], "workload.arrival.rates")):
        bad = json.loads(json.dumps(SPIKE))
        bad["workload"]["arrival"]["rates"] = rates
        with pytest.raises(ValueError, match=field.replace("[", r"\[").replace("]", r"\]")):
            llmsim.simulate(bad)


def test_summary_separates_offered_achieved_saturation(small):
    s = llmsim.simulate(dict(small, workload=dict(small["workload"], arrival={"process": "poisson", "rate": 200},
                                                  num_requests=400))).summary
    assert s["complete"] and s["unstable"] and s["completed_requests"] == 400 - small["workload"]["warmup_requests"]
    assert s["offered"]["requests_per_s"] > 5 * s["saturation"]["requests_per_s"]
    assert s["throughput"]["requests_per_s"] == pytest.approx(s["completed_requests"] / s["duration_s"])
    for key in ("request_throughput", "mean_ttft_ms", "p99_itl_ms", "median_e2el_ms"):
        assert key in s
