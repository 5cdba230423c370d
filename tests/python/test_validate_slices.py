"""scripts/validate_slices.py (issue 27): the derived columns of a row read from a printed `vllm bench serve` summary
(GPUStack's Performance Lab pages), which tell a burst from a closed loop and carry the run's lengths and rate."""
import importlib.util
import os

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "validate_slices.py")
spec = importlib.util.spec_from_file_location("validate_slices", SCRIPT)
vs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(vs)


def row(where, metric="output_throughput"):
    return vs.derive({"where": where, "metric": metric})


def test_a_burst_block_reads_its_prompts_lengths_and_output_rate():
    # qwen3-14b/h100.md's "# random 128 input" block: 1000 prompts at once, 127,698 / 4,000 tokens, 176.06 tok/s.
    r = row("gpustack-perflab/qwen3-14b/h100.md:396:runs[114]")
    assert r["mode"] == "burst" and r["concurrency"] == "inf"
    assert r["num_prompts"] == "1000"
    assert r["dataset"] == "130/4"
    assert r["out_tps"] == "<300"
    assert r["family"] == "throughput"


def test_a_closed_loop_block_reads_its_concurrency():
    # qwen3-8b/h100-latency.md's first block: 100 prompts at --max-concurrency 4, 496.88 tok/s.
    r = row("gpustack-perflab/qwen3-8b/h100-latency.md:85:runs[163]", "mean_tpot_ms")
    assert r["mode"] == "closed" and r["concurrency"] == "4"
    assert r["num_prompts"] == "100"
    assert r["out_tps"] == "300-1k"
    assert r["family"] == "tpot"


def test_a_row_of_no_serving_file_gets_dashes():
    r = row("vidur/a100.csv:12")
    assert (r["mode"], r["concurrency"], r["num_prompts"], r["dataset"], r["out_tps"]) == ("-",) * 5


def test_rate_buckets_are_half_decades():
    assert [vs.tps_bucket(v) for v in (13.5, 300, 2999.9, 9064.4, 11327.22, None, "x")] == \
        ["<300", "300-1k", "1k-3k", "3k-10k", ">=10k", "-", "-"]
