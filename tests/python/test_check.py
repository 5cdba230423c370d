"""llmsim.check: a real vLLM result beside the prediction, as a DataFrame; the same numbers as the CLI."""
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import llmsim

DATA = Path(os.environ.get("LLMSIM_SOURCE_DIR", Path(__file__).resolve().parents[2])) / "tests/data/vllm_results"
H100 = DATA / "lambdalabs-h100-llama3-8b-v0.5.4-np80.json"
ARGS = ("vllm serve meta-llama/Meta-Llama-3-8B-Instruct --max-model-len 2048 --max-num-seqs 256 "
        "--max-num-batched-tokens 2048 --enable-chunked-prefill False --gpu-memory-utilization 0.95")


def test_check_returns_one_row_per_reported_number():
    df = llmsim.check(H100, gpu="h100-80gb-sxm", model="llama-3.1-8b", vllm_args=ARGS)
    assert list(df.columns) == ["key", "measured", "predicted", "rel_error", "note"]
    assert len(df) == 23
    assert df["measured"].dtype == float and df["predicted"].dtype == float
    row = df.set_index("key")
    assert row.loc["total_output_tokens", "measured"] == 14101
    assert row.loc["total_output_tokens", "predicted"] == 14101
    assert row.loc["mean_ttft_ms", "measured"] == pytest.approx(374.0024648257531)
    err = row.loc["p99_latency_ms"]
    assert err["rel_error"] == pytest.approx((err["predicted"] - err["measured"]) / err["measured"])
    assert df.attrs["fits"] is True
    assert df.attrs["scenario"]["hardware"]["gpu"] == "h100-80gb-sxm"
    assert any("streamed no text" in n for n in df.attrs["notes"])


def test_check_takes_a_parsed_dict_and_a_scenario_for_the_gpu():
    result = json.loads(H100.read_text())
    df = llmsim.check(result, scenario={"hardware": {"gpu": "h100-80gb-sxm"}}, model="llama-3.1-8b", vllm_args=ARGS)
    ref = llmsim.check(H100, gpu="h100-80gb-sxm", model="llama-3.1-8b", vllm_args=ARGS)
    assert np.allclose(df["predicted"], ref["predicted"])


def test_check_matches_the_cli():
    cli = os.environ.get("LLMSIM_CLI")
    if not cli:
        pytest.skip("CLI not built")
    out = subprocess.run([cli, "check", str(H100), "--gpu", "h100-80gb-sxm", "--model", "llama-3.1-8b",
                          "--vllm-args", ARGS, "--json"], capture_output=True, text=True, check=True).stdout
    rows = {r["key"]: r["predicted"] for r in json.loads(out)["rows"]}
    df = llmsim.check(H100, gpu="h100-80gb-sxm", model="llama-3.1-8b", vllm_args=ARGS).set_index("key")
    for key, value in rows.items():
        assert df.loc[key, "predicted"] == pytest.approx(value, rel=1e-12)


def test_check_bad_input_is_a_value_error_naming_the_culprit(tmp_path):
    with pytest.raises(ValueError, match="--gpu"):
        llmsim.check(H100, model="llama-3.1-8b")
    foreign = tmp_path / "llmperf.json"
    foreign.write_text('{"results_ttft_s_mean": 0.2}')
    with pytest.raises(ValueError, match="llmperf.json: not a vLLM benchmark result.*LLMPerf"):
        llmsim.check(foreign, gpu="h100-80gb-sxm")
    with pytest.raises(ValueError, match="no such file"):
        llmsim.check(tmp_path / "missing.json", gpu="h100-80gb-sxm")


def test_result_json_has_vllm_keys():
    r = llmsim.simulate({"workload": {"arrival": {"rate": 2}, "num_requests": 200}})
    s = r.summary
    assert s["mean_ttft_ms"] == s["ttft_ms"]["mean"]
    assert s["p99_e2el_ms"] == s["e2e_ms"]["p99"]
    assert s["completed"] == s["completed_requests"]
    assert s["std_tpot_ms"] > 0


def test_vllm_names_and_partial_scenarios_from_python():
    s = llmsim.scenario({"engine": {"tensor_parallel_size": 2, "kv_cache_dtype": "fp8_e4m3"},
                         "workload": {"arrival": {"rate": 8}}})
    assert s["hardware"]["tp"] == 2
    assert s["quant"]["kv_cache"] == "fp8"
    assert "tensor_parallel_size" not in s["engine"]
    assert s["workload"]["arrival"] == {"process": "poisson", "rate": 8.0}
    with pytest.raises(ValueError, match="engine.tensor_parallel_size"):
        llmsim.scenario({"hardware": {"tp": 1}, "engine": {"tensor_parallel_size": 2}})


def test_check_messages_name_the_field(tmp_path):
    """Issue 29: a directory is said to be one; numpy numbers are accepted in the result dict and in overrides; a
    request_rate too small to simulate is blamed, not the replay's time_scale."""
    with pytest.raises(ValueError, match="is a directory"):
        llmsim.check(tmp_path, gpu="h100-80gb-sxm")
    result = json.loads(H100.read_text())
    ref = llmsim.check(result, gpu="h100-80gb-sxm", model="llama-3.1-8b", vllm_args=ARGS)
    with_numpy = dict(result)
    with_numpy["num_prompts"] = np.int64(result["num_prompts"])
    with_numpy["duration"] = np.float64(result["duration"])
    with_numpy["input_lens"] = np.array(result["input_lens"])
    df = llmsim.check(with_numpy, gpu="h100-80gb-sxm", model="llama-3.1-8b", vllm_args=ARGS,
                      workload__seed=np.int64(1), engine__max_num_seqs=np.int64(256))
    assert np.allclose(df["predicted"], ref["predicted"], equal_nan=True)
    slow = dict(result, request_rate=1e-300)
    with pytest.raises(ValueError, match="request_rate") as e:
        llmsim.check(slow, gpu="h100-80gb-sxm", model="llama-3.1-8b", vllm_args=ARGS)
    assert "time_scale" not in str(e.value)


def test_check_json_lines_every_run_or_one(tmp_path):
    appended = DATA / "lambdalabs-h100-llama3-8b-v0.5.4-append.jsonl"
    kw = dict(gpu="h100-80gb-sxm", model="llama-3.1-8b", engine_version="0.5.4")
    every = llmsim.check(appended, **kw)
    assert list(every.columns[:2]) == ["run", "key"]
    assert sorted(every["run"].unique()) == [1, 2]
    assert len(every.attrs["runs"]) == 2
    one = llmsim.check(appended, run=2, **kw)
    assert one.attrs["line"] == 2
    assert one.set_index("key").loc["completed", "measured"] == 320
    same = every[every["run"] == 2].drop(columns="run").reset_index(drop=True)
    assert same["predicted"].tolist() == pytest.approx(one["predicted"].tolist())
    with pytest.raises(ValueError, match="--run.*lines 1, 2"):
        llmsim.check(appended, run=3, **kw)
    with pytest.raises(ValueError, match="run: expected a line number"):
        llmsim.check(appended, run=0, **kw)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(appended.read_text().splitlines()[0] + "\n" + '{"duration": "x", "completed": 3, "total_input_tokens": 1, "total_output_tokens": 2, "mean_ttft_ms": 3}\n')
    with pytest.raises(ValueError, match="bad.jsonl line 2: duration"):
        llmsim.check(bad, **kw)


def test_check_takes_an_sglang_server_command_line():
    # The same rule as the CLI's --sglang-args (analysis::server_arg_sets): SGLang's names, its runtime and scheduler.
    sglang = DATA / "livinfly-a100pcie-sglang047-mistral7b-online.jsonl"
    line = "python -m sglang.launch_server --model-path mistral-7b --max-running-requests 24"
    df = llmsim.check(sglang, run=1, gpu="a100-40gb-pcie", model="mistral-7b", sglang_args=line)
    engine = df.attrs["scenario"]["engine"]
    assert engine["max_num_seqs"] == 24
    assert engine["policy"] == "sglang"
    with pytest.raises(ValueError, match="give one of them"):
        llmsim.check(sglang, run=1, gpu="a100-40gb-pcie", model="mistral-7b", sglang_args=line,
                     vllm_args="vllm serve mistral-7b")


def test_check_states_ignore_eos_from_the_client_or_the_keyword():
    """SGLang's bench_serving sends ignore_eos by default; ``workload__ignore_eos=`` states it (the CLI's
    --ignore-eos / --disable-ignore-eos); vLLM's client does not unless told."""
    sg = DATA / "livinfly-a100pcie-sglang047-mistral7b-online.jsonl"
    df = llmsim.check(sg, gpu="a100-40gb-pcie", model="mistral-7b", run=1)
    assert df.attrs["scenario"]["workload"].get("ignore_eos") is True
    off = llmsim.check(sg, gpu="a100-40gb-pcie", model="mistral-7b", run=1, workload__ignore_eos=False)
    assert off.attrs["scenario"]["workload"].get("ignore_eos", False) is False
    vl = llmsim.check(H100, gpu="h100-80gb-sxm", model="llama-3.1-8b", vllm_args=ARGS)
    assert vl.attrs["scenario"]["workload"].get("ignore_eos", False) is False
    on = llmsim.check(H100, gpu="h100-80gb-sxm", model="llama-3.1-8b", vllm_args=ARGS, workload__ignore_eos=True)
    assert on.attrs["scenario"]["workload"]["ignore_eos"] is True


def test_simulate_reads_ignore_eos_for_sglang_without_the_radix_cache():
    """The scenario field drives SGLang's exact admission (no retraction) where the ratio path retracts."""
    sc = {"model": "llama-3.1-8b", "hardware": {"gpu": "rtx4090-24gb"},
          "engine": {"runtime": "sglang==0.4.7", "enable_prefix_caching": False, "block_size": 1,
                     "max_model_len": 8192, "api_server": False},
          "workload": {"arrival": {"process": "offline"}, "input_tokens": {"dist": "fixed", "value": 300},
                       "output_tokens": {"dist": "uniform", "min": 200, "max": 3800},
                       "num_requests": 300, "warmup_requests": 0}}
    ratio = llmsim.simulate(sc)
    walk = llmsim.simulate(sc, workload__ignore_eos=True)
    assert ratio["preemptions"] > 0
    assert walk["preemptions"] == 0
