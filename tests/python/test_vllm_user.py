"""Issue 30's table from Python, the rows the other Python tests did not cover as a vLLM user writes them: vLLM's
engine-argument names as keyword overrides, vLLM's --quantization values, a latency-only summary, the families' own
config.json and ModelOpt checkpoint directories, and ``vllm serve DIR`` reading DIR (tests/cli/test_cli_vllm_user.cpp
and notebooks/vllm_user.ipynb are the CLI and notebook side of the same rows)."""
import json
import os
import shutil
from pathlib import Path

import pytest

import llmsim

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "data" / "vllm_results"
CHECKPOINTS = ROOT / "tests" / "data" / "hf_checkpoints"
QUICK = dict(replications=1, num_requests=60)


def test_vllm_engine_argument_names_as_keywords(small):
    small["workload"]["num_requests"] = 60
    small["workload"]["warmup_requests"] = 5
    vllm = llmsim.simulate(small, engine__tensor_parallel_size=2).summary
    own = llmsim.simulate(small, hardware__tp=2).summary
    one = llmsim.simulate(small).summary
    assert vllm == own
    assert vllm["kv"]["capacity_tokens"] > 2 * one["kv"]["capacity_tokens"]
    assert llmsim.simulate(small, engine__kv_cache_dtype="fp8_e4m3").summary == \
        llmsim.simulate(small, quant__kv_cache="fp8").summary
    # memory() takes the same names.
    assert llmsim.memory(small, engine__tensor_parallel_size=2) == llmsim.memory(small, tp=2)


def test_vllm_quantization_values_on_memory_and_compare(small):
    args = dict(model="llama-3.1-8b", gpu="a100-80gb-sxm", max_model_len=8192)
    assert llmsim.memory(**args, quant="awq") == llmsim.memory(**args, quant="awq-int4")
    assert llmsim.memory(**args, quant="gptq_marlin") == llmsim.memory(**args, quant="gptq-int4")
    frame = llmsim.compare(small, gpus=["a100-80gb-sxm"], quants=["awq", "gptq", "fp8"], **QUICK)
    assert list(frame["quant"]) == ["awq-int4", "gptq-int4", "fp8"]
    assert frame["fits"].astype(bool).all()
    with pytest.raises(ValueError, match="compressed-tensors"):
        llmsim.memory(**args, quant="compressed-tensors")


def test_check_a_latency_only_summary():
    doc = json.loads((RESULTS / "lambdalabs-h100-llama3-8b-v0.5.4-np80.json").read_text())
    for key in ("duration", "request_throughput", "input_throughput", "output_throughput"):
        del doc[key]
    df = llmsim.check(doc, gpu="h100-80gb-sxm", model="llama-3.1-8b", engine_version="0.5.4",
                      vllm_args="vllm serve meta-llama/Meta-Llama-3-8B-Instruct --max-model-len 2048 --max-num-seqs 256")
    assert "duration" not in set(df["key"]) and "request_throughput" not in set(df["key"])
    ttft = df.set_index("key").loc["mean_ttft_ms"]
    assert ttft["measured"] == doc["mean_ttft_ms"] and ttft["rel_error"] == ttft["rel_error"]  # a number, not NaN
    assert any("latency-only summary" in n for n in df.attrs["notes"])


@pytest.mark.parametrize("model, gpu", [("gpt-oss-120b", "h100-80gb-sxm"), ("llama-4-scout", "4xh100-80gb-sxm"),
                                        ("kimi-k2", "8xb200-180gb-sxm"), ("qwen3-next-80b-a3b", "4xh100-80gb-sxm"),
                                        ("glm-4.7", "8xb200-180gb-sxm"), ("deepseek-v3.2", "8xb200-180gb-sxm"),
                                        ("gemma-4-31b", "h100-80gb-sxm")])
def test_a_family_config_json_plans_as_its_catalogue_id(model, gpu):
    by_id = llmsim.memory(model=model, gpu=gpu, max_model_len=4096)
    by_file = llmsim.memory(model=str(ROOT / "data" / "models" / f"{model}.json"), gpu=gpu, max_model_len=4096)
    assert by_id["fits"]
    assert by_id["params"] == by_file["params"]
    assert by_id["per_gpu"]["weights_bytes"] == by_file["per_gpu"]["weights_bytes"]


def test_modelopt_checkpoint_directories_plan_their_real_bytes():
    fp8 = llmsim.memory(model=str(CHECKPOINTS / "llama-3.1-70b-instruct-fp8"), gpu="h100-80gb-sxm", max_model_len=4096)
    assert fp8["quant"] == "fp8"
    # One byte per weight, the embedding and LM head (128256 x 8192 each) 16-bit: not a 16-bit plan's 141 GB.
    assert fp8["per_gpu"]["weights_bytes"] == pytest.approx(fp8["params"] + 2 * 128256 * 8192, rel=0.01)
    nvfp4 = llmsim.memory(model=str(CHECKPOINTS / "gemma-4-31b-it-nvfp4"), gpu="b200-180gb-sxm", max_model_len=8192)
    bf16 = llmsim.memory(model="gemma-4-31b", quant="bf16", gpu="b200-180gb-sxm", max_model_len=8192)
    assert nvfp4["quant"] == "nvfp4+attn16"
    all_fp4 = llmsim.memory(model="gemma-4-31b", quant="nvfp4", gpu="b200-180gb-sxm", max_model_len=8192)
    # Attention, the 262k-token embedding and the vision tower stay 16-bit: between all-NVFP4 and 16-bit.
    assert all_fp4["per_gpu"]["weights_bytes"] < nvfp4["per_gpu"]["weights_bytes"] < \
        0.6 * bf16["per_gpu"]["weights_bytes"]


def test_vllm_serve_dir_reads_the_directory_not_its_name(tmp_path, small):
    # vLLM reads a path that exists from disk (vllm/transformers_utils/config.py, file_or_path_exists): a folder named
    # like Llama-3.1-8B AWQ holding NVIDIA's ModelOpt FP8 Llama-3.1-70B is that 70B in FP8.
    folder = tmp_path / "Llama-3.1-8B-Instruct-AWQ"
    shutil.copytree(CHECKPOINTS / "llama-3.1-70b-instruct-fp8", folder)
    line = f"vllm serve {folder} --max-model-len 4096"
    plan = llmsim.memory(gpu="h100-80gb-sxm", vllm_args=line)
    assert plan["params"] == pytest.approx(70.55e9, rel=0.01)
    assert plan["quant"] == "fp8"
    assert plan == llmsim.memory(model=str(folder), gpu="h100-80gb-sxm", max_model_len=4096)
    # --quantization naming the checkpoint's own method is the same plan; another method is vLLM's refusal.
    with pytest.warns(llmsim.ServerArgsWarning, match="--quantization modelopt: the checkpoint's own method"):
        assert llmsim.memory(gpu="h100-80gb-sxm", vllm_args=line + " --quantization modelopt") == plan
    with pytest.raises(ValueError, match="does not match the checkpoint's own method 'modelopt'"):
        llmsim.memory(gpu="h100-80gb-sxm", vllm_args=line + " --quantization awq")
    small["workload"]["num_requests"] = 20
    small["workload"]["warmup_requests"] = 0
    small["hardware"]["gpu"] = "h100-80gb-sxm"
    r = llmsim.simulate(small, vllm_args=line)
    assert r.scenario["model"] == str(folder)
