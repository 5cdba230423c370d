"""A server's command line as a keyword (``vllm_args=``, ``sglang_args=``) on the functions that take a scenario,
read by the same C++ as the CLI's ``--vllm-args`` / ``--sglang-args`` (issue 30)."""
import json
import subprocess
import warnings

import pytest

import llmsim
from conftest import SMALL

LINE = "vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 2 --max-num-seqs 96 --kv-cache-dtype fp8 --port 8000"
GRID = {"workload.arrival.rate": [2.0]}


def _row(**kw):
    return llmsim.sweep(SMALL, GRID, progress=False, jobs=1, **kw).iloc[0]


def test_vllm_args_set_the_fields_and_keywords_win(small):
    plain = _row()
    assert (plain["tp"], plain["max_num_seqs"], plain["kv_cache"]) == (1, 256, "fp16")
    row = _row(vllm_args=LINE)
    assert (row["tp"], row["max_num_seqs"], row["kv_cache"], row["model"]) == (2, 96, "fp8", "llama-3.1-8b")
    # scenario < command line < keyword overrides
    assert _row(vllm_args=LINE, engine__max_num_seqs=32)["max_num_seqs"] == 32


def test_every_scenario_function_takes_vllm_args(small):
    base = llmsim.simulate(small).summary["kv"]["capacity_tokens"]
    fp8 = llmsim.simulate(small, vllm_args="vllm serve --kv-cache-dtype fp8").summary["kv"]["capacity_tokens"]
    assert fp8 > 1.8 * base
    bad = "vllm serve --max-num-seq 8"
    quick = dict(num_requests=60, replications=1)
    for call in (lambda: llmsim.simulate(small, vllm_args=bad),
                 lambda: llmsim.capacity(small, vllm_args=bad, **quick),
                 lambda: llmsim.throughput(small, vllm_args=bad),
                 lambda: llmsim.compare(small, ["a100-80gb-sxm"], vllm_args=bad, **quick),
                 lambda: llmsim.report(small, ["a100-80gb-sxm"], vllm_args=bad, **quick),
                 lambda: llmsim.search(small, 2.0, gpus=["a100-80gb-sxm"], vllm_args=bad),
                 lambda: llmsim.sweep(small, GRID, progress=False, vllm_args=bad)):
        with pytest.raises(ValueError, match="did you mean --max-num-seqs"):
            call()


def test_flags_not_modelled_are_warned_not_dropped(small):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        llmsim.simulate(small, vllm_args="vllm serve llama-3.1-8b --disable-custom-all-reduce --port 8000")
    texts = [str(w.message) for w in caught if issubclass(w.category, llmsim.ServerArgsWarning)]
    assert texts == ["vLLM arguments llmsim does not model (ignored): --disable-custom-all-reduce"]


def test_sglang_args(small):
    line = ("python -m sglang.launch_server --model-path llama-3.1-8b --tp-size 2 --max-running-requests 48 "
            "--chunked-prefill-size 4096 --enable-mixed-chunk")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        row = _row(sglang_args=line)
    assert (row["tp"], row["max_num_seqs"], row["max_num_batched_tokens"]) == (2, 48, 4096)
    assert any("--enable-mixed-chunk" in str(w.message) for w in caught)
    assert not any("--chunked-prefill-size" in str(w.message) for w in caught)
    with pytest.raises(ValueError, match="'lpm' is not modelled"):
        llmsim.simulate(small, sglang_args="sglang serve --schedule-policy lpm")
    summary = llmsim.simulate(small, sglang_args="sglang serve --model-path llama-3.1-8b").summary
    assert "sglang" in summary["error_band"]["latency"]["group"]
    with pytest.raises(ValueError, match="give one of them"):
        llmsim.simulate(small, vllm_args="vllm serve", sglang_args="sglang serve")
    with pytest.raises(ValueError, match="--vllm-args"):
        llmsim.simulate(small, sglang_args="vllm serve llama-3.1-8b")


def test_python_and_cli_read_the_line_alike(small, cli, tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(small))
    out = subprocess.run([cli, "simulate", str(path), "--json", "--vllm-args", LINE], capture_output=True, text=True,
                         check=True).stdout
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        py = llmsim.simulate(small, vllm_args=LINE).summary
    assert json.loads(out)["kv"] == py["kv"]
    assert json.loads(out)["ttft_ms"] == py["ttft_ms"]


def test_a_blank_command_line_is_refused_everywhere_as_the_cli_does(small):
    # An unset variable passed as vllm_args would drop the server's settings without a word (llmsim --vllm-args '').
    for name in ("vllm_args", "sglang_args"):
        for call in (lambda kw: llmsim.simulate(small, **kw), lambda kw: llmsim.capacity(small, **kw),
                     lambda kw: llmsim.sweep(small, {"workload.arrival.rate": [1]}, progress=False, **kw),
                     lambda kw: llmsim.check({"duration": 2, "completed": 3, "total_input_tokens": 10,
                                              "total_output_tokens": 20, "request_throughput": 1.5,
                                              "mean_ttft_ms": 12}, gpu="a100-80gb-sxm", model="llama-3.1-8b", **kw)):
            with pytest.raises(ValueError, match=f"{name}: an empty command line") as e:
                call({name: "  "})
            # The example is that server's own line (attack11: an SGLang keyword was shown `vllm serve ...`).
            assert ("sglang.launch_server" in str(e.value)) == (name == "sglang_args")


def test_num_scheduler_steps_from_python_and_vllm_args(small):
    """vLLM V0's multi-step scheduling (engine.num_scheduler_steps, docs/engine.md): the same C++ rule from a
    scenario dict, the engine__ keyword and a server line; refused, naming the field, where the engine has none."""
    small["engine"]["runtime"] = "vllm==0.6.0"
    one = llmsim.simulate(small).summary
    ten = llmsim.simulate(small, engine__num_scheduler_steps=10).summary
    line = llmsim.simulate(small, vllm_args="vllm serve --num-scheduler-steps 10").summary
    # 0.6.0 streams a window's tokens as one chunk: ITL per chunk, several decode steps long; TPOT per token.
    assert ten["itl_ms"]["mean"] > 4 * one["itl_ms"]["mean"]
    assert ten["tpot_ms"]["mean"] < one["tpot_ms"]["mean"]
    assert line["itl_ms"]["mean"] == ten["itl_ms"]["mean"]
    small["engine"]["runtime"] = "sglang"
    with pytest.raises(llmsim.ConfigError, match=r"engine\.num_scheduler_steps: SGLang has no multi-step"):
        llmsim.simulate(small, engine__num_scheduler_steps=4)


@pytest.mark.parametrize("flag,named", [
    ("--max-num-seqs 0", r"--max-num-seqs \(engine\.max_num_seqs\): must be >= 1, got 0"),
    ("-tp 0", r"-tp \(hardware\.tp\): must be in 1\.\.1024, got 0"),
    ("--gpu-memory-utilization 1.5", r"--gpu-memory-utilization \(engine\.gpu_memory_utilization\): must be in"),
    ("--kv-cache-dtype fp7", r"--kv-cache-dtype \(quant\.kv_cache\): unknown KV-cache dtype 'fp7'"),
    ("--max-model-len abc", r"--max-model-len: expected a number of tokens or auto, got 'abc'"),
    ("--quantization foo", r"--quantization: unknown vLLM quantization method 'foo'"),
    ("--max-num-seqs abc", r"--max-num-seqs: expected an integer, got 'abc'"),
])
def test_a_bad_value_on_a_server_line_is_named_by_the_flag_typed(small, cli, tmp_path, flag, named):
    # The class: a value the line gave that its scenario field refuses, whether the field refuses it as it is set
    # (--quantization foo) or when the scenario is read (--max-num-seqs 0). It was named by the field alone
    # ("engine.max_num_seqs: must be >= 1"), a name the user never typed. The same words from the CLI and Python.
    line = "vllm serve meta-llama/Llama-3.1-8B-Instruct " + flag
    with pytest.raises(ValueError, match=named):
        llmsim.simulate(small, vllm_args=line)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(small))
    out = subprocess.run([cli, "simulate", str(path), "--vllm-args", line], capture_output=True, text=True)
    assert out.returncode == 2
    assert __import__("re").search(named, out.stderr), out.stderr
    # A field the keyword overrides (or --set) give again keeps its own name: the value refused is theirs.
    if flag == "--max-num-seqs 0":
        with pytest.raises(ValueError, match=r"^engine\.max_num_seqs: must be >= 1, got -1"):
            llmsim.simulate(small, vllm_args=line, engine__max_num_seqs=-1)
        assert llmsim.simulate(small, vllm_args=line, engine__max_num_seqs=8).scenario["engine"]["max_num_seqs"] == 8


def test_a_bad_value_on_an_sglang_line_is_named_by_its_flag(small):
    with pytest.raises(ValueError, match=r"--max-running-requests \(engine\.max_num_seqs\): must be >= 1"):
        llmsim.simulate(small, sglang_args="python -m sglang.launch_server --model-path llama-3.1-8b "
                                           "--max-running-requests 0")
