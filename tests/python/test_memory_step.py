import os

import pytest

import llmsim
from conftest import need


def test_memory_field_numbers():
    need("memory")
    p = llmsim.memory(model="llama-3.1-8b", gpu="a100-80gb-sxm")
    assert p["fits"] and p["reason"] == ""
    assert p["kv_bytes_per_token"] == 131072
    assert p["kv_capacity_tokens"] > 100_000


def test_14b_fp16_does_not_fit_a_4090():
    p = llmsim.memory(model="qwen2.5-14b", gpu="rtx4090-24gb", quant="fp16")
    assert not p["fits"]
    assert "weights" in p["reason"]


def test_tp2_halves_weights():
    one = llmsim.memory(model="llama-3.1-8b", gpu="rtx4090-24gb")
    two = llmsim.memory(model="llama-3.1-8b", gpu="2xrtx4090-24gb")
    assert two == llmsim.memory(model="llama-3.1-8b", gpu="rtx4090-24gb", tp=2)
    assert two["per_gpu"]["weights_bytes"] == pytest.approx(one["per_gpu"]["weights_bytes"] / 2, rel=0.05)
    assert two["per_gpu"]["runtime_bytes"] > one["per_gpu"]["runtime_bytes"]  # all-reduce buffers


def test_memory_default_context_as_in_a_scenario(cli):
    """Without --max-model-len the CLI plans the scenario default, as simulate does: vLLM's auto — the model's whole
    context (131072 here) when it fits, else the largest that does, said so. A number keeps vLLM's strict check."""
    import json
    import subprocess

    def run(*extra):
        return json.loads(subprocess.run([cli, "memory", "--model", "llama-3.1-8b", "--gpu", "rtx4090-24gb", "--json",
                                          *extra], capture_output=True, text=True, check=True).stdout)
    out = run()
    assert out == llmsim.memory(model="llama-3.1-8b", gpu="rtx4090-24gb")
    assert out["fits"] and 8192 < out["max_model_len"] < 131072
    assert out["max_model_len"] == out["longest_context_tokens"]
    assert out["max_model_len_note"] == "auto: the model's 131,072 does not fit"
    for same in ("auto", -1):  # every spelling of auto, CLI and Python alike
        assert llmsim.memory(model="llama-3.1-8b", gpu="rtx4090-24gb", max_model_len=same) == out
    assert run("--max-model-len", "auto") == out and run("--max-model-len", "-1") == out
    strict = llmsim.memory(model="llama-3.1-8b", gpu="rtx4090-24gb", max_model_len=131072)
    assert not strict["fits"] and "lower max_model_len" in strict["reason"] and strict["max_model_len_note"] == ""
    assert run("--max-model-len", "131072") == strict
    fits = llmsim.memory(model="llama-3.1-8b", gpu="rtx4090-24gb", max_model_len=8192)
    assert fits["fits"] and fits["max_model_len"] == 8192


def test_memory_cli_identical(cli):
    import json
    import subprocess
    out = subprocess.run([cli, "memory", "--model", "llama-3.1-70b", "--gpu", "rtx4090-48gb", "--quant",
                          "awq-int4", "--max-model-len", "8192", "--json"], capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out) == llmsim.memory(model="llama-3.1-70b", gpu="rtx4090-48gb", quant="awq-int4",
                                            max_model_len=8192)
    out = subprocess.run([cli, "memory", "--model", "qwen2.5-14b", "--gpu", "rtx4090-24gb", "--tp", "2",
                          "--num-gpus", "2", "--max-model-len", "4096", "--json"], capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out) == llmsim.memory(model="qwen2.5-14b", gpu="2xrtx4090-24gb", max_model_len=4096)


def test_num_gpus_follows_the_cli_rule(cli):
    """num_gpus goes through libsim's one rule (spec::split_for_count), as `llmsim memory --num-gpus` does."""
    import json
    import subprocess
    args = ["--model", "llama-3.1-70b", "--gpu", "a100-80gb-sxm", "--max-model-len", "4096"]
    out = json.loads(subprocess.run([cli, "memory", *args, "--num-gpus", "4", "--pp", "2", "--json"],
                                    capture_output=True, text=True, check=True).stdout)
    py = llmsim.memory(model="llama-3.1-70b", gpu="a100-80gb-sxm", max_model_len=4096, num_gpus=4, pp=2)
    assert py == out and (py["tp"], py["pp"]) == (2, 2)
    with pytest.raises(ValueError, match="num_gpus.*multiple of pp"):
        llmsim.memory(model="llama-3.1-8b", num_gpus=3, pp=2)
    with pytest.raises(ValueError, match="num_gpus.*tp x pp = 2"):
        llmsim.memory(model="llama-3.1-8b", num_gpus=4, tp=2)
    bad = subprocess.run([cli, "memory", *args, "--num-gpus", "4", "--tp", "2", "--json"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "--num-gpus" in bad.stderr and "tp x pp = 2" in bad.stderr


def test_step_decode_and_prefill():
    need("step")
    d = llmsim.step(model="llama-3.1-8b", gpu="rtx4090-24gb", decode_seqs=1, context=512)
    # 16 GB of fp16 weights over 1008 GB/s: at least ~16 ms per decode step.
    assert d["time_ms"] >= 16e9 / 1008e9 * 1e3
    assert d["bound"] == "memory"
    assert {op["name"] for op in d["ops"]} >= {"qkv_proj", "mlp", "lm_head"}
    p = llmsim.step(model="llama-3.1-8b", gpu="rtx4090-24gb", prefill_tokens=4096)
    assert p["bound"] == "compute"
    a100 = llmsim.step(model="llama-3.1-8b", gpu="a100-80gb-sxm", decode_seqs=1, context=512)
    assert a100["time_ms"] < d["time_ms"]


def test_step_rejects_negative_lengths():
    with pytest.raises(ValueError):
        llmsim.step(model="llama-3.1-8b", gpu="rtx4090-24gb", decode_seqs=-1, context=10)


def test_gpu_option_strings_as_in_compare():
    """'2xcard' is tensor parallel 2, '2xcard@pp' a two-stage pipeline; both put half the weights on a GPU. libsim
    parses them (one rule for every face); tp/pp not given take the option's split, given ones (1 too) must agree."""
    tp = llmsim.memory(model="llama-3.1-8b", gpu="2xrtx4090-24gb")
    pp = llmsim.memory(model="llama-3.1-8b", gpu="2xrtx4090-24gb@pp")
    assert pp == llmsim.memory(model="llama-3.1-8b", gpu="rtx4090-24gb", pp=2)
    assert pp["per_gpu"]["weights_bytes"] == pytest.approx(tp["per_gpu"]["weights_bytes"], rel=0.05)
    with pytest.raises(ValueError, match="@xx"):
        llmsim.memory(model="llama-3.1-8b", gpu="2xrtx4090-24gb@xx")
    with pytest.raises(ValueError, match="hardware.tp: tp 1 x pp 4 contradicts gpu '2xrtx4090-24gb@pp'"):
        llmsim.memory(model="llama-3.1-8b", gpu="2xrtx4090-24gb@pp", pp=4)
    with pytest.raises(ValueError, match="hardware.tp"):
        llmsim.memory(model="llama-3.1-8b", gpu="2xrtx4090-24gb@pp", tp=2)
    assert llmsim.memory(model="llama-3.1-8b", gpu="2xrtx4090-24gb@pp", pp=2) == pp


def test_memory_and_step_take_a_server_line_as_the_cli_does(cli):
    """vllm_args=/sglang_args= on memory() and step() go through libsim's rule (analysis::command_server_fields), the
    one the CLI's --vllm-args/--sglang-args on those commands call: the same dict, the same notes, the same refusals."""
    import json
    import subprocess
    import warnings

    def run(*args):
        return json.loads(subprocess.run([cli, *args, "--json"], capture_output=True, text=True, check=True).stdout)

    line = "vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 2 --max-model-len 8192 --kv-cache-dtype fp8 --enforce-eager"
    out = run("memory", "--gpu", "a100-80gb-sxm", "--vllm-args", line)
    py = llmsim.memory(gpu="a100-80gb-sxm", vllm_args=line)
    assert py == out
    assert (py["tp"], py["kv_dtype"], py["max_model_len"]) == (2, "fp8", 8192)
    assert py != llmsim.memory(gpu="a100-80gb-sxm", model="llama-3.1-8b")  # the line was read
    # A keyword given wins over the line, as an option given on the command line does.
    wins = llmsim.memory(gpu="a100-80gb-sxm", vllm_args=line, kv_dtype="fp16")
    assert wins["kv_dtype"] == "fp16" and wins["tp"] == 2
    assert wins == run("memory", "--gpu", "a100-80gb-sxm", "--kv-dtype", "fp16", "--vllm-args", line)
    # num_gpus takes the line's split as the CLI's --num-gpus does.
    assert llmsim.memory(gpu="a100-80gb-sxm", vllm_args=line, num_gpus=2) == out
    batch = ["step", "--gpu", "a100-80gb-sxm", "--decode-seqs", "32", "--context", "1024"]
    kw = dict(gpu="a100-80gb-sxm", decode_seqs=32, context=1024)
    assert llmsim.step(vllm_args=line, **kw) == run(*batch, "--vllm-args", line)
    sg = "python -m sglang.launch_server --model-path llama-3.1-8b --tp-size 2"
    assert llmsim.step(sglang_args=sg, **kw) == run(*batch, "--sglang-args", sg)
    assert llmsim.step(sglang_args=sg, **kw) != llmsim.step(vllm_args=line, **kw)
    # Flags that do not change the answer are said (a ServerArgsWarning), as the CLI says them on stderr.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        llmsim.memory(gpu="a100-80gb-sxm", vllm_args=line + " -dp 2 --no-async-scheduling")
    said = " ".join(str(w.message) for w in caught)
    # (--enable-prefix-caching is read: a hybrid model's state depends on it.)
    assert "--data-parallel-size does not apply to `llmsim.memory()`" in said and "async-scheduling" in said


@pytest.mark.parametrize("fn,kw", [("memory", {}), ("step", {"decode_seqs": 8, "context": 512})])
def test_memory_and_step_refuse_a_bad_server_line(fn, kw):
    f = getattr(llmsim, fn)
    with pytest.raises(ValueError, match=r"--max-num-seqz.*did you mean --max-num-seqs"):
        f(gpu="a100-80gb-sxm", vllm_args="vllm serve llama-3.1-8b --max-num-seqz 8", **kw)
    with pytest.raises(ValueError, match=r"vllm_args: an empty command line"):
        f(gpu="a100-80gb-sxm", vllm_args="  ", **kw)
    with pytest.raises(ValueError, match=r"vllm_args: --kv-offloading-size cannot be used by `llmsim\." + fn):
        f(gpu="a100-80gb-sxm", vllm_args="vllm serve llama-3.1-8b --kv-offloading-size 16", **kw)
    with pytest.raises(ValueError, match=r"vllm_args/sglang_args"):
        f(gpu="a100-80gb-sxm", vllm_args=["vllm", "serve"], **kw)


def test_memory_plans_an_sglang_line_as_the_cli_does(cli):
    """An SGLang server line is planned with SGLang's accounting (it was refused): the CLI's JSON and Python's dict are
    equal, and equal to the plan of a scenario on the SGLang runtime with the same settings."""
    import json
    import subprocess
    import warnings
    line = "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 2 --mem-fraction-static 0.8 --context-length 8192"
    out = json.loads(subprocess.run([cli, "memory", "--gpu", "h100-80gb-sxm", "--sglang-args", line, "--json"],
                                    capture_output=True, text=True, check=True).stdout)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        py = llmsim.memory(gpu="h100-80gb-sxm", sglang_args=line)
    assert py == out
    assert (py["tp"], py["max_model_len"], py["gpu_memory_utilization"]) == (2, 8192, 0.8)
    scenario = {"model": "qwen3-8b", "hardware": {"gpu": "h100-80gb-sxm", "tp": 2},
                "engine": {"runtime": "sglang", "gpu_memory_utilization": 0.8, "max_model_len": 8192}}
    assert llmsim.memory(scenario) == py
    assert llmsim.memory(scenario, engine__runtime="vllm-v1") != py


def test_memory_of_an_sglang_line_speaks_of_what_the_user_typed():
    """SGLang's radix cache is on unless --disable-radix-cache: no note about a --enable-prefix-caching nobody typed
    (there was one); a typed flag is named as written; the block count is labelled as llmsim's unit (kv_unit_note)."""
    import warnings
    line = "python -m sglang.launch_server --model-path Qwen/Qwen3-8B"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plan = llmsim.memory(gpu="h100-80gb-sxm", sglang_args=line)
    assert not [w for w in caught if "prefix-caching" in str(w.message) or "does not apply" in str(w.message)]
    assert "--page-size" in plan["kv_unit_note"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        llmsim.memory(gpu="h100-80gb-sxm", sglang_args=line + " --cuda-graph-max-bs 8")
    assert any("--cuda-graph-max-bs does not apply" in str(w.message) for w in caught)
    # --disable-radix-cache is read (a hybrid model's Mamba pool depends on it); a dense model plans the same.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        off = llmsim.memory(gpu="h100-80gb-sxm", sglang_args=line + " --disable-radix-cache")
    assert not [w for w in caught if "does not apply" in str(w.message)]
    assert off == plan
    assert llmsim.memory(model="qwen3-8b", gpu="h100-80gb-sxm")["kv_unit_note"] == ""


@pytest.mark.parametrize("engine", ["vllm", "vllm-v0", "sglang", "sglang==0.3.5", "sglang==0.4.3", "vllm==0.5.4",
                                    "vllm==0.2.1", "vllm-v1"])
def test_step_is_the_same_iteration_from_the_cli_and_python(cli, engine):
    """`llmsim step --engine E` and `llmsim.step()` on the same engine price one iteration as a simulation does: the
    server's host work and async scheduling / SGLang's overlap scheduler (perf::make_cost_model, the one builder) in both. SGLang's
    overlap was in Python's and not the CLI's (8.46 vs 9.59 ms at TP 2 on an A100)."""
    import json
    import subprocess
    args = ["--gpu", "a100-80gb-sxm", "--model", "llama-3.1-8b", "--tp", "2", "--decode-seqs", "32", "--context",
            "1024", "--engine", engine, "--json"]
    out = json.loads(subprocess.run([cli, "step", *args], capture_output=True, text=True, check=True).stdout)
    over = {"engine__policy": "vllm-v0"} if engine == "vllm-v0" else {} if engine == "vllm" else {"engine__runtime": engine}
    py = llmsim.step(gpu="a100-80gb-sxm", model="llama-3.1-8b", tp=2, decode_seqs=32, context=1024, **over)
    assert py == out


def test_lora_slots_in_memory_as_the_cli_plans_them(cli):
    """vLLM's LoRA slots (engine.enable_lora, max_loras, max_lora_rank) through one alias table: keywords, a server
    line and the CLI's flags give the same plan; the slots come out of the KV pool (memory/lora_memory.cpp)."""
    import json
    import subprocess
    need("memory")
    args = ["--model", "llama-3.1-8b", "--gpu", "a100-80gb-sxm"]
    out = json.loads(subprocess.run([cli, "memory", *args, "--enable-lora", "--max-loras", "4", "--max-lora-rank", "64",
                                     "--json"], capture_output=True, text=True, check=True).stdout)
    py = llmsim.memory(model="llama-3.1-8b", gpu="a100-80gb-sxm", enable_lora=True, max_loras=4, max_lora_rank=64)
    line = llmsim.memory(gpu="a100-80gb-sxm",
                         vllm_args="vllm serve llama-3.1-8b --enable-lora --max-loras 4 --max-lora-rank 64")
    base = llmsim.memory(model="llama-3.1-8b", gpu="a100-80gb-sxm")
    assert py == out == line
    assert py["per_gpu"]["lora_bytes"] == 16 * 41_943_040 * 2  # 4 slots x (rank 64 = 4 x PEFT's rank-16 count), bf16
    assert base["per_gpu"]["lora_bytes"] == 0
    assert py["kv_capacity_tokens"] < base["kv_capacity_tokens"]
    with pytest.raises(ValueError, match="max_lora_rank"):
        llmsim.memory(model="llama-3.1-8b", gpu="a100-80gb-sxm", enable_lora=True, max_lora_rank=12)


def test_lora_kernels_in_step_and_simulate_as_the_cli_prices_them(cli, small, tmp_path):
    """vLLM's LoRA kernels (op 'lora', perf/lora_kernels.hpp): `llmsim step` and llmsim.step() give the same step,
    `simulate` and llmsim.simulate() the same run, with the adapters the requests use (workload.lora_adapters)."""
    import json
    import subprocess
    need("engine")
    lora = dict(engine__enable_lora=True, engine__max_loras=4, engine__max_lora_rank=64)
    out = json.loads(subprocess.run([cli, "step", "--model", "llama-3.1-8b", "--gpu", "h100-80gb-sxm", "--decode-seqs",
                                     "16", "--context", "1000", "--enable-lora", "--max-loras", "4", "--max-lora-rank",
                                     "64", "--lora-adapters", "4", "--json"],
                                    capture_output=True, text=True, check=True).stdout)
    py = llmsim.step(gpu="h100-80gb-sxm", model="llama-3.1-8b", decode_seqs=16, context=1000,
                     workload__lora_adapters=4, **lora)
    assert py == out
    assert any(o["name"] == "lora" and o["time_ms"] > 1.0 for o in py["ops"])
    plain = llmsim.step(gpu="h100-80gb-sxm", model="llama-3.1-8b", decode_seqs=16, context=1000)
    assert all(o["name"] != "lora" for o in plain["ops"]) and plain["time_ms"] < py["time_ms"]
    scenario = json.loads(json.dumps(small))
    scenario["engine"].update(enable_lora=True, max_loras=4, max_lora_rank=64)
    scenario["workload"]["lora_adapters"] = 2
    path = tmp_path / "lora.json"
    path.write_text(json.dumps(scenario))
    cli_run = json.loads(subprocess.run([cli, "simulate", "--scenario", str(path), "--json"], capture_output=True,
                                        text=True, check=True).stdout)
    assert cli_run == llmsim.simulate(scenario).summary
    assert cli_run["tpot_ms"]["p50"] > llmsim.simulate(small).summary["tpot_ms"]["p50"]
    with pytest.raises(ValueError, match="lora_adapters"):
        llmsim.simulate(small, workload__lora_adapters=2)


_PROFILE = os.path.join(os.path.dirname(__file__), "..", "..", "data", "profiles", "a100-80gb-sxm-public.json")


@pytest.mark.parametrize("flags,keywords", [
    (["--engine", "vllm==0.15.1"], {"engine__runtime": "vllm==0.15.1"}),  # async scheduling on
    (["--engine", "vllm==0.13.0"], {"engine__runtime": "vllm==0.13.0"}),  # and off
    (["--engine", "sglang", "--cuda-graph-max-bs", "8"], {"engine__runtime": "sglang", "engine__cuda_graph_max_bs": 8}),
    (["--eager", "--tp", "2"], {"engine__cuda_graphs": False, "tp": 2}),
    (["--quant", "fp8"], {"quant": "fp8"}),  # runs weight-only on an A100 (spec::format_for_gpu), as simulate prices it
    (["--cpu-offload-gb", "4"], {"engine__cpu_offload_gb": 4}),
    (["--gpu-profile", _PROFILE], {"gpu_profile": _PROFILE}),
    (["--engine", "vllm==0.15.1", "--speculative", "eagle", "--num-speculative-tokens", "3"],
     {"engine__runtime": "vllm==0.15.1", "engine__speculative": {"method": "eagle", "num_speculative_tokens": 3}}),
    (["--enable-lora", "--max-loras", "2", "--lora-adapters", "2", "--tp", "2"],
     {"engine__enable_lora": True, "engine__max_loras": 2, "workload__lora_adapters": 2, "tp": 2}),
])
@pytest.mark.parametrize("batch", [dict(decode_seqs=48, context=900), dict(prefill_tokens=768, prefill_context=256)])
def test_step_flags_price_what_the_scenario_prices(cli, flags, keywords, batch):
    """`llmsim step`'s flags are read as the scenario they stand for and priced by libsim's one step
    (analysis::step_of_scenario, the cost model a simulation builds): every flag gives llmsim.step()'s document."""
    import json
    import subprocess
    lengths = [w for k, v in batch.items() for w in ("--" + k.replace("_", "-"), str(v))]
    out = json.loads(subprocess.run([cli, "step", "--gpu", "a100-80gb-sxm", "--model", "llama-3.1-8b", *lengths, *flags,
                                     "--json"], capture_output=True, text=True, check=True).stdout)
    py = llmsim.step(gpu="a100-80gb-sxm", model="llama-3.1-8b", **batch, **keywords)
    assert py == out


def test_memory_and_step_need_no_price(tmp_path, small):
    """memory() and step() bill nothing (spec::resolve_unbilled, as the CLI's memory and step): a GPU spec file
    without price_per_hour plans and prices as the catalogue's card does."""
    import json
    gpu = json.loads(open(os.path.join(os.path.dirname(__file__), "..", "..", "data", "gpus", "rtx4090-24gb.json")).read())
    del gpu["price_per_hour"]
    path = tmp_path / "unpriced.json"
    path.write_text(json.dumps(gpu))
    plan = llmsim.memory(model="llama-3.1-8b", gpu=str(path), max_model_len=8192)
    assert plan["fits"] and plan == llmsim.memory(model="llama-3.1-8b", gpu="rtx4090-24gb", max_model_len=8192)
    step = llmsim.step(model="llama-3.1-8b", gpu=str(path), decode_seqs=4, context=100)
    assert step == llmsim.step(model="llama-3.1-8b", gpu="rtx4090-24gb", decode_seqs=4, context=100)
    with pytest.raises(ValueError, match="price_per_gpu_hour"):  # a simulation bills: there the price is needed
        llmsim.simulate(dict(small, hardware={"gpu": str(path)}))


def test_a_tp_of_1_beside_a_2x_option_is_refused_as_on_the_cli(cli):
    """An explicit tp 1 (keyword, server line, or the scenario's hardware section) beside "2x…" is a ValueError naming
    both, as on the CLI; a tp 1 the scenario wrote for its own card does not bind a gpu= that places two."""
    import subprocess
    two = "2xa100-80gb-sxm"
    with pytest.raises(ValueError, match=r"hardware.tp: tp 1 x pp 1 contradicts gpu '2xa100-80gb-sxm'.*one replica"):
        llmsim.memory(model="llama-3.1-8b", gpu=two, tp=1)
    line = "vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 1"
    with pytest.raises(ValueError, match="contradicts gpu '2xa100-80gb-sxm'"):
        llmsim.memory(gpu=two, vllm_args=line)
    cli_run = subprocess.run([cli, "memory", "--gpu", two, "--vllm-args", line], capture_output=True, text=True)
    assert cli_run.returncode == 2 and "contradicts gpu '2xa100-80gb-sxm'" in cli_run.stderr
    with pytest.raises(ValueError, match="contradicts"):
        llmsim.step(model="llama-3.1-8b", gpu=two, tp=1, decode_seqs=8, context=1024)
    with pytest.raises(ValueError, match="hardware.tp: tp 1 x pp 1 contradicts"):
        llmsim.memory({"model": "llama-3.1-8b", "hardware": {"gpu": two, "tp": 1}})
    own = {"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm", "tp": 1, "pp": 1}}
    assert llmsim.memory(own, gpu=two)["tp"] == 2
    assert llmsim.memory(own, gpu=two) == llmsim.memory(model="llama-3.1-8b", gpu=two)
    with pytest.raises(ValueError, match="contradicts"):
        llmsim.memory(own, gpu=two, tp=1)
    with pytest.raises(ValueError, match="contradicts"):
        llmsim.memory(own, gpu=two, vllm_args=line)
    assert llmsim.memory(model="llama-3.1-8b", gpu=two, pp=1)["tp"] == 2


def test_step_of_a_multi_step_scenario_prices_its_window_as_the_cli_does(cli):
    """vLLM V0's --num-scheduler-steps (engine.num_scheduler_steps): step prices a decode batch's window, its first
    step (time_ms) and its later steps on the GPU alone (multi_step), from a scenario, a keyword or a server line,
    as `llmsim step --vllm-args` does. Before, Python's step printed the first step's time as every step's and the
    CLI refused the flag."""
    import json
    import subprocess
    line = "vllm serve llama-3.1-8b --num-scheduler-steps 8"
    args = ["--gpu", "a100-80gb-sxm", "--engine", "vllm-v0", "--decode-seqs", "16", "--context", "1024", "--json"]
    out = json.loads(subprocess.run([cli, "step", *args, "--vllm-args", line], capture_output=True, text=True,
                                    check=True).stdout)
    py = llmsim.step(gpu="a100-80gb-sxm", engine__policy="vllm-v0", decode_seqs=16, context=1024, vllm_args=line)
    assert py == out
    scenario = {"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm"},
                "engine": {"policy": "vllm-v0", "num_scheduler_steps": 8}}
    assert llmsim.step(scenario, decode_seqs=16, context=1024) == out
    # A release's scenario (vLLM 0.6.3, a context the >32K rule leaves unchunked) prices the same kind of window.
    release = {"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm"},
               "engine": {"runtime": "vllm==0.6.3", "max_model_len": 8192, "num_scheduler_steps": 8}}
    assert llmsim.step(release, decode_seqs=16, context=1024)["multi_step"]["later_step_ms"] < out["time_ms"]
    m = out["multi_step"]
    assert m["num_scheduler_steps"] == 8
    assert m["later_step_ms"] < m["first_step_ms"] == out["time_ms"]
    assert m["window_mean_step_ms"] == pytest.approx((m["first_step_ms"] + 7 * m["later_step_ms"]) / 8)
    single = llmsim.step(scenario, engine__num_scheduler_steps=1, decode_seqs=16, context=1024)
    assert "multi_step" not in single and single["time_ms"] == out["time_ms"]


def test_memory_labels_the_windowed_capacity_beside_the_concurrency(cli):
    """Gemma-4 E4B on an L4 (issue 29): "KV capacity 82,752 tokens" beside "2 concurrent sequences of 131,072
    tokens" read as one quantity contradicting itself. The capacity counts tokens at every layer's cost (vLLM's "GPU
    KV cache size"; Gemma-4's scaled blocks are charged so by the simulation); the sliding-window layers keep only their last 512 tokens, so
    vLLM holds long sequences in less. Both outputs say so (memory::kv_capacity_note); a model without windows has
    one number and no label."""
    import json
    import subprocess
    need("memory")
    args = ["memory", "--model", "gemma-4-e4b", "--gpu", "l4-24gb"]
    text = subprocess.run([cli, *args], capture_output=True, text=True, check=True).stdout
    out = json.loads(subprocess.run([cli, *args, "--json"], capture_output=True, text=True, check=True).stdout)
    assert out == llmsim.memory(model="gemma-4-e4b", gpu="l4-24gb")
    assert out["kv_sliding_window"] > 0
    # The two numbers that read as a contradiction are both there, and labelled.
    assert out["max_concurrent_seqs"] * out["max_model_len"] > out["kv_capacity_tokens"]
    assert "every layer's per-token cost" in out["kv_capacity_note"]
    assert f"last {out['kv_sliding_window']:,} tokens" in out["kv_capacity_note"]
    line = next(ln for ln in text.splitlines() if ln.startswith("fits: yes"))
    assert f"KV capacity {out['kv_capacity_tokens']} tokens" in line
    assert "at every layer's cost per token" in line and "so vLLM holds longer sequences in less:" in line
    assert f"{out['max_concurrent_seqs']} concurrent sequence" in line
    plain = llmsim.memory(model="llama-3.1-8b", gpu="l4-24gb")
    assert plain["kv_capacity_note"] == ""


def test_hybrid_state_is_pool_blocks_under_v1_cli_equals_python(cli):
    """Issue 29: Qwen3.5-27B on one H200 at vLLM's default 1,024 sequences plans under V1 (the state of each running
    sequence is blocks of the KV pool, nothing reserved for max_num_seqs); the CLI and Python report the same plan,
    with the number of sequences whose state fits."""
    import json
    import subprocess
    args = dict(model="qwen3.5-27b", gpu="h200-141gb-sxm", quant="fp16")
    py = llmsim.memory(**args)
    out = json.loads(subprocess.run([cli, "memory", "--model", "qwen3.5-27b", "--gpu", "h200-141gb-sxm", "--quant",
                                     "fp16", "--json"], capture_output=True, text=True, check=True).stdout)
    assert out == py
    assert py["fits"], py["reason"]
    assert py["per_gpu"]["linear_state_bytes"] == 0
    assert 0 < py["linear_state_seqs_fit"] < 1024
    assert py["mamba_cache_blocks"] >= 1024
    text = subprocess.run([cli, "memory", "--model", "qwen3.5-27b", "--gpu", "h200-141gb-sxm", "--quant", "fp16"],
                          capture_output=True, text=True, check=True).stdout
    assert f"max_num_seqs 1024 -> {py['linear_state_seqs_fit']} sequences' state fit the pool" in text


def test_sglang_mamba_pool_cli_equals_python(cli):
    """Issue 29: under SGLang Nemotron-3-Nano's Mamba states are a pool of slots sized by the radix cache's share of
    the memory left after the weights (0.9 / 1.9), running requests capped at a third of the slots; the old rule
    reserved 2,048 states (100.5 GB) and said it does not fit one H100. The CLI and Python report the same plan, and
    the text names the split and the cap."""
    import json
    import subprocess
    line = "python -m sglang.launch_server --model-path nemotron-3-nano-30b-a3b"
    args = ["--gpu", "h100-80gb-sxm", "--sglang-args", line]
    py = llmsim.memory(gpu="h100-80gb-sxm", sglang_args=line)
    out = json.loads(subprocess.run([cli, "memory", *args, "--json"], capture_output=True, text=True,
                                    check=True).stdout)
    assert out == py
    assert py["fits"], py["reason"]
    assert py["linear_state_memory_ratio"] == 0.9
    slots = py["linear_state_slots"]
    assert slots > 3
    assert py["max_running_requests"] == slots // 3
    assert py["per_gpu"]["linear_state_bytes"] > 0
    text = subprocess.run([cli, "memory", *args], capture_output=True, text=True, check=True).stdout
    assert f"Mamba state pool (SGLang): {slots} slots" in text
    assert f"running requests capped at {slots // 3}" in text
    # --disable-radix-cache with --max-running-requests 16: 16 slots, 16 running.
    off = llmsim.memory(gpu="h100-80gb-sxm", sglang_args=line + " --disable-radix-cache --max-running-requests 16")
    assert off["fits"], off["reason"]
    assert (off["linear_state_slots"], off["max_running_requests"], off["linear_state_memory_ratio"]) == (16, 16, 0)


def test_step_takes_the_server_lines_max_model_len_as_the_cli_does(cli):
    """A V0 release chunks prefills above 32K by itself (vllm#6666) and multi-step does not run chunked: the server
    line's --max-model-len decides it. `llmsim step` dropped it (issue 29); Python and the CLI take it alike."""
    import json
    import subprocess
    line = "vllm serve llama-3.1-8b --max-model-len 8192 --num-scheduler-steps 8"
    args = ["--gpu", "a100-80gb-sxm", "--decode-seqs", "16", "--context", "1024", "--engine", "vllm==0.6.3", "--json"]
    out = json.loads(subprocess.run([cli, "step", *args, "--vllm-args", line], capture_output=True, text=True,
                                    check=True).stdout)
    py = llmsim.step(gpu="a100-80gb-sxm", engine__runtime="vllm==0.6.3", vllm_args=line, decode_seqs=16, context=1024)
    assert py == out
    assert py["multi_step"]["num_scheduler_steps"] == 8


def test_nemotron_h_mamba_hybrid_plans_and_steps_on_an_h100(cli):
    """Issue 30: Nemotron-3-Nano (Mamba-2 + attention + MoE layers) from its real config: the KV per token counts its
    6 attention layers, each running sequence holds its Mamba state as pool blocks, and a decode step's state traffic
    does not grow with the context; the CLI and Python give the same plan."""
    import json
    import subprocess
    args = dict(model="nemotron-3-nano-30b-a3b", gpu="h100-80gb-sxm", quant="fp16")
    py = llmsim.memory(**args, engine__max_num_seqs=256)
    out = json.loads(subprocess.run([cli, "memory", "--model", args["model"], "--gpu", args["gpu"], "--quant", "fp16",
                                     "--max-num-seqs", "256", "--json"], capture_output=True, text=True,
                                    check=True).stdout)
    assert out == py
    assert py["fits"], py["reason"]
    assert py["kv_bytes_per_token"] == 6 * 2 * 2 * 128 * 2
    assert py["linear_state_bytes_per_seq_per_gpu"] > 23 * 64 * 64 * 128 * 4  # FP32 SSM state on 23 layers
    assert py["per_gpu"]["linear_state_bytes"] == 0
    short = llmsim.step(**args, decode_seqs=32, context=2048)
    long = llmsim.step(**args, decode_seqs=32, context=4096)
    attn = {s: next(op for op in r["ops"] if op["name"] == "attention_decode") for s, r in (("s", short), ("l", long))}
    kv_added = 6 * 32 * 2048 * 2 * 2 * 128 * 2
    assert attn["l"]["bytes"] - attn["s"]["bytes"] == pytest.approx(kv_added, rel=0.05)
    assert long["time_ms"] > short["time_ms"] > 0


def test_memory_reads_the_pp_layer_partition_as_the_cli_does():
    # VLLM_PP_LAYER_PARTITION from a pasted launch line, or the scenario field: the largest stage is sized (CLI =
    # Python: one rule in libsim, analysis::command_server_fields); a split that does not add up names the field.
    line = "VLLM_PP_LAYER_PARTITION=24,8 vllm serve meta-llama/Llama-3.1-8B -pp 2 --max-model-len 4096"
    skew = llmsim.memory(gpu="rtx4090-24gb", vllm_args=line)
    even = llmsim.memory(model="llama-3.1-8b", gpu="rtx4090-24gb", pp=2, max_model_len=4096)
    field = llmsim.memory(model="llama-3.1-8b", gpu="rtx4090-24gb", pp=2, max_model_len=4096,
                          hardware__pp_layer_partition="24,8")
    assert skew["per_gpu"]["weights_bytes"] > 1.3 * even["per_gpu"]["weights_bytes"]
    assert field["per_gpu"]["weights_bytes"] == skew["per_gpu"]["weights_bytes"]
    with pytest.raises(ValueError, match="pp_layer_partition"):
        llmsim.memory(model="llama-3.1-8b", gpu="rtx4090-24gb", pp=2, hardware__pp_layer_partition="16,8")


@pytest.mark.parametrize("release", ["vllm==0.5.4", "vllm==0.7.4", "vllm==0.11.0", "sglang==0.4.9", "sglang==0.5.3"])
def test_memory_engine_version_plans_as_python_and_simulate_do(cli, release):
    """A flag memory shows a default for enters the plan only when given (attack11): `--engine-version sglang==X`
    planned SGLang at vLLM's 0.90 while Python's memory() and simulate took the release's own mem_fraction_static
    (0.836 on one H100 at 0.5.3): a KV pool 10 % larger than the engine keeps. Every release kind, CLI = Python."""
    import json
    import subprocess

    def run(*extra):
        p = subprocess.run([cli, "memory", "--model", "llama-3.1-8b", "--gpu", "h100-80gb-sxm", "--json",
                            "--engine-version", release, *extra], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)
    out = run()
    assert out == llmsim.memory(model="llama-3.1-8b", gpu="h100-80gb-sxm", engine__runtime=release)
    sim = llmsim.simulate({"model": "llama-3.1-8b", "hardware": {"gpu": "h100-80gb-sxm"},
                           "engine": {"runtime": release},
                           "workload": {"arrival": {"process": "poisson", "rate": 1.0}, "num_requests": 5,
                                        "input_tokens": {"dist": "fixed", "value": 100},
                                        "output_tokens": {"dist": "fixed", "value": 10}}}).summary
    assert out["kv_capacity_tokens"] == sim["kv"]["capacity_tokens"]
    if release.startswith("sglang"):
        assert out["gpu_memory_utilization"] < 0.9  # the release's own fraction, not vLLM's default
    # A fraction written on the command line is the user's, whatever the release.
    assert run("--gpu-memory-utilization", "0.9")["gpu_memory_utilization"] == 0.9


@pytest.mark.parametrize("command", ["memory", "check"])
def test_engine_version_refuses_a_runtime_name_naming_what_was_given(cli, command):
    """--engine-version takes a release; a runtime name ("sglang") was read as vLLM's version "vllm==sglang" and
    refused at engine.runtime quoting text the user never wrote (attack11): now the flag and the text given."""
    import pathlib
    import subprocess
    args = {"memory": ["--model", "llama-3.1-8b", "--gpu", "h100-80gb-sxm"],
            "check": ["--vllm-result", str(pathlib.Path(__file__).parents[1] / "data" / "vllm_results" /
                                           "lambdalabs-a100-llama3-8b-np80.json"),
                      "--gpu", "a100-80gb-sxm", "--model", "llama-3.1-8b"]}[command]
    p = subprocess.run([cli, command, *args, "--engine-version", "sglang"], capture_output=True, text=True)
    assert p.returncode == 2
    assert "--engine-version" in p.stderr and "got 'sglang'" in p.stderr and "vllm==sglang" not in p.stderr


def test_every_catalogue_model_is_reached_by_its_published_name():
    """data/models/README.md names the checkpoint each catalogue model was taken from; a server line naming that
    checkpoint must be sized as one of its row's models (analysis::catalogue_model_for, one rule for --vllm-args,
    check and Python). attack11: both Nemotron entries, Llama 4, Mistral-Small-2501 and Qwen3-Next-Thinking were
    refused as "not a catalogue model"."""
    import pathlib
    import re
    import warnings
    catalogue = set(llmsim.catalog.models().index)
    readme = (pathlib.Path(__file__).parents[2] / "data" / "models" / "README.md").read_text()
    checked = 0
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        short = [i.strip() for i in cells[0].split("/")] if len(cells) > 1 else []
        if not short or short[0] not in catalogue:
            continue
        # "qwen2.5-7b / 14b / 32b": the other ids replace the first one's trailing parts.
        first = short[0].split("-")
        row = {short[0]} | {"-".join(first[:k] + [o]) for o in short[1:] for k in range(1, len(first))} & catalogue
        for name in re.findall(r"[\w.\-]+/[\w.\-{},]+", cells[1]):
            name = name.rstrip(",.")
            m = re.match(r"(.*)\{([^}]*)\}(.*)", name)
            for full in ([m.group(1) + o + m.group(3) for o in m.group(2).split(",")] if m else [name]):
                with warnings.catch_warnings(record=True) as said:
                    warnings.simplefilter("always")
                    try:
                        llmsim.memory(gpu="h200-141gb-sxm", vllm_args=f"vllm serve {full}")
                    except llmsim.ConfigError as e:
                        pytest.fail(f"{full}: {e}")
                got = re.search(r"catalogue model '([^']+)'", " ".join(str(w.message) for w in said))
                assert got and got.group(1) in row, (full, got and got.group(1), row)
                checked += 1
    assert checked >= 45
