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


def test_start_delay_is_read_from_a_burst_of_short_replies_only():
    # qwen3-14b/h100.md's 1,000 x 128/4 burst (T 22.72 s, mean TTFT 18,282.75 ms): its first tokens flowed from
    # D = 2 * 18.28 - 22.72 = 13.85 s on (docs/cost-model.md, "GPUStack's vLLM bursts read by hand"); the same page's
    # ShareGPT burst (about 200 output tokens a request) is no run of short replies and is left out.
    base = {"set": "gpustack-perflab", "engine": "vllm", "model": "qwen3-14b", "gpu": "h100-80gb-sxm", "tp": "1"}
    short, sharegpt = "gpustack-perflab/qwen3-14b/h100.md:396:runs[114]", "gpustack-perflab/qwen3-14b/h100.md:89:runs[105]"
    rows = [dict(base, where=short, output="4", metric="duration", measured="22.72", predicted="5.459"),
            dict(base, where=short, output="4", metric="mean_ttft_ms", measured="18282.75", predicted="2869.026"),
            dict(base, where=short, output="4", metric="mean_tpot_ms", measured="525.31", predicted="298.788"),
            dict(base, where=sharegpt, output="202", metric="duration", measured="63.53", predicted="35.386"),
            dict(base, where=sharegpt, output="202", metric="mean_ttft_ms", measured="22141.21", predicted="4884.086")]
    t = vs.start_delays(rows)
    assert [x["where"] for x in t] == [short]
    assert abs(t[0]["D"] - 13.8455) < 1e-9
    assert abs(t[0]["D_pred"] - (2 * 2.869026 - 5.459)) < 1e-9
    assert abs(t[0]["tpot_ratio"] - 525.31 / 298.788) < 1e-12
    assert t[0]["T"] == 22.72 and t[0]["T_pred"] == 5.459
    # --where filters on derived columns too: the printed block says this run is a burst, not a closed loop.
    assert vs.start_delays(rows, [("mode", "closed")]) == []
    assert len(vs.start_delays(rows, [("mode", "burst")])) == 1
    # a run without its mean TTFT gives no delay
    assert vs.start_delays([r for r in rows if r["metric"] != "mean_ttft_ms"]) == []
