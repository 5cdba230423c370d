import json
import subprocess
import threading

import pytest

import llmsim
from conftest import need


def test_result_fields(small):
    need("engine")
    r = llmsim.simulate(small)
    s = r.summary
    for key in ("fits", "reason", "unstable", "completed_requests", "throughput", "ttft_ms", "tpot_ms",
                "itl_ms", "e2e_ms", "queue_ms", "slo_attainment", "goodput_rps", "kv", "cost"):
        assert key in s
    assert s["fits"] and s["completed_requests"] > 0
    assert s["ttft_ms"]["p50"] <= s["ttft_ms"]["p95"] <= s["ttft_ms"]["p99"]
    assert s["cost"]["per_hour"] == pytest.approx(1.8)
    assert r.requests is None and r.iterations is None
    assert json.loads(r.to_json()) == s
    assert "requests" in repr(r)


def test_records_frames(small):
    r = llmsim.simulate(small, record_requests=True, record_iterations=True)
    req, it = r.requests, r.iterations
    assert len(req) == small["workload"]["num_requests"]
    assert (req["finish_s"] >= req["first_token_s"]).all() and (req["first_token_s"] >= req["arrival_s"]).all()
    assert (req["output_tokens"] == 128).all()
    assert req["warmup"].sum() == small["workload"]["warmup_requests"]
    assert len(it) == r.summary["iterations"] if "iterations" in r.summary else len(it) > 0
    assert (it["duration_s"] > 0).all()


def test_deterministic_and_seeded(small):
    a = llmsim.simulate(small).summary
    assert llmsim.simulate(small).summary == a
    b = llmsim.simulate(small, seed=8).summary
    assert b != a
    assert b["ttft_ms"]["p50"] == pytest.approx(a["ttft_ms"]["p50"], rel=0.5)


def test_overrides_match_edited_scenario(small):
    edited = json.loads(json.dumps(small))
    edited["hardware"]["gpu"] = "rtx4090-24gb"
    edited["hardware"].pop("price_per_gpu_hour", None)  # its price was the other card's (as the CLI's --gpu)
    edited["workload"]["arrival"]["rate"] = 1.0
    assert llmsim.simulate(small, gpu="rtx4090-24gb", rate=1.0).summary == llmsim.simulate(edited).summary


def test_not_fitting_is_a_result_not_an_error(small):
    small["model"] = "llama-3.1-70b"
    small["hardware"]["gpu"] = "rtx4090-24gb"
    r = llmsim.simulate(small)
    assert r.summary["fits"] is False and r.summary["reason"]
    assert "cannot run" in repr(r)


def test_threads_run_concurrently_and_agree(small):
    # The GIL is released inside simulate: results from threads equal the sequential ones.
    seeds = [1, 2, 3, 4]
    expected = [llmsim.simulate(small, seed=s).summary for s in seeds]
    got = [None] * len(seeds)

    def work(i):
        got[i] = llmsim.simulate(small, seed=seeds[i]).summary

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(seeds))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == expected


def test_python_and_cli_identical(small, cli, tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(small))
    out = subprocess.run([cli, "simulate", "--scenario", str(path), "--json"], capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out) == llmsim.simulate(small).summary
    out = subprocess.run([cli, "simulate", "--scenario", str(path), "--json", "--seed", "11", "--rate", "3"],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == llmsim.simulate(path, seed=11, rate=3).summary


def test_extra_percentiles_from_python_and_cli(small, cli, tmp_path):
    """metrics.percentiles: the percentiles asked for are in every latency object and among vLLM's keys, the same
    from Python and the CLI; a bad one is a ValueError naming its field."""
    need("engine")
    small["metrics"] = {"percentiles": [75, 99.9]}
    s = llmsim.simulate(small).summary
    for m in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
        assert s[m]["p50"] <= s[m]["p75"] <= s[m]["p95"] <= s[m]["p99"] <= s[m]["p99.9"] <= s[m]["max"]
    assert s["p75_itl_ms"] == s["itl_ms"]["p75"] and s["p99.9_e2el_ms"] == s["e2e_ms"]["p99.9"]
    assert "p75" not in s["queue_ms"]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(small))
    out = subprocess.run([cli, "simulate", "--scenario", str(path), "--json"], capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out) == s
    del small["metrics"]
    path.write_text(json.dumps(small))
    out = subprocess.run([cli, "simulate", "--scenario", str(path), "--json", "--set", "metrics.percentiles=[75,99.9]"],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == s
    small["metrics"] = {"percentiles": [75, 100]}
    with pytest.raises(ValueError, match=r"metrics\.percentiles\[1\]"):
        llmsim.simulate(small)
    small["metrics"] = {"percentiles": [75, 75]}
    with pytest.raises(ValueError, match=r"metrics\.percentiles\[1\].*duplicates"):
        llmsim.simulate(small)


def test_capacity(small):
    need("analysis")
    row = llmsim.capacity(small, replications=2)
    assert row["fits"] and row["max_qps"] > 0
    lo, hi = row["max_qps_ci95"] if isinstance(row["max_qps_ci95"], list) else (
        row["max_qps_ci95"]["lo"], row["max_qps_ci95"]["hi"])
    assert lo <= hi
    faster = llmsim.capacity(small, replications=2, hardware__gpu="h100-80gb-sxm")
    assert faster["max_qps"] >= row["max_qps"]
    assert llmsim.capacity(small, replications=2) == row  # repeatable


def test_compare(small):
    frame = llmsim.compare(small, gpus=["rtx4090-24gb", "a100-80gb-sxm"], quants=["fp16", "awq-int4"],
                           replications=1)
    assert len(frame) == 4
    assert frame["fits"].all()
    assert frame["winner"].sum() <= 1
    assert (frame["max_qps"] > 0).all()
    big = dict(small, model="llama-3.1-70b")
    f70 = llmsim.compare(big, gpus=["rtx4090-24gb"], quants=["fp16"], replications=1)
    assert not f70["fits"].iloc[0] and f70["reason"].iloc[0]
    assert f70["max_qps"].isna().all()


def test_gpu_override_bills_the_new_card_at_its_own_price():
    sc = {"hardware": {"gpu": "a100-80gb-sxm", "price_per_gpu_hour": 1.8},
          "workload": {"num_requests": 20, "warmup_requests": 0}}
    own = llmsim.catalog.gpus().set_index("id").loc["rtx4090-24gb", "price_per_hour"]
    assert llmsim.simulate(sc).summary["cost"]["per_hour"] == 1.8
    assert llmsim.simulate(sc, gpu="rtx4090-24gb").summary["cost"]["per_hour"] == own
    assert llmsim.simulate(sc, gpu="2xrtx4090-24gb@pp").summary["cost"]["per_hour"] == 2 * own


def test_disaggregated_scenario_passes_through():
    # The scenario's disaggregation section goes to C++ as JSON; its result object comes back in the summary.
    need("engine")
    sc = {"model": "llama-3.1-8b", "engine": {"max_model_len": 8192},
          "disaggregation": {"prefill": {"gpu": "a100-80gb-sxm"}, "decode": {"gpu": "rtx4090-24gb", "replicas": 2},
                             "link": {"kind": "ethernet", "bandwidth_gbps": 100}},
          "workload": {"num_requests": 60, "warmup_requests": 0}}
    s = llmsim.simulate(sc).summary
    d = s["disaggregation"]
    assert [p["role"] for p in d["pools"]] == ["prefill", "decode"]
    assert d["pools"][1]["gpus"] == 2 and d["transfer_ms"]["p50"] > 0
    slow = llmsim.simulate({**sc, "disaggregation": {**sc["disaggregation"],
                                                     "link": {"kind": "ethernet", "bandwidth_gbps": 10}}}).summary
    assert slow["ttft_ms"]["mean"] > s["ttft_ms"]["mean"]
    bad = {**sc, "disaggregation": {**sc["disaggregation"], "link": {"kind": "ethernet"}}}
    with pytest.raises(ValueError, match="disaggregation.link.bandwidth_gbps"):
        llmsim.simulate(bad)
    # A sweep over the link: the transfer and decode-wait columns are in the frame, speculation's is NaN here.
    f = llmsim.sweep(sc, {"disaggregation.link.bandwidth_gbps": [10, 100]}, jobs=1, progress=False)
    assert f["kv_transfer_ms.p50"].iloc[0] > 5 * f["kv_transfer_ms.p50"].iloc[1] > 0
    assert f["decode_wait_ms.p95"].notna().all() and f["spec_tokens_per_step"].isna().all()
    # hardware's card fields are not this scenario's cards: an override is refused, never silently ignored.
    with pytest.raises(ValueError, match="disaggregation.<pool>.gpu"):
        llmsim.capacity(sc, hardware__gpu="h100-80gb-sxm")
