import pandas as pd
import pytest

import llmsim
from conftest import need

AXES = {"hardware.gpu": ["rtx4090-24gb", "a100-80gb-sxm", "2xrtx4090-24gb"],
        "quant.weights": ["fp16", "awq-int4"],
        "engine.max_num_seqs": [32, 128]}
SCREEN = {"num_requests": 200, "warmup_requests": 20, "replications": 1}


@pytest.fixture(scope="module")
def base():
    return {
        "model": "llama-3.1-8b",
        "engine": {"max_model_len": 8192},
        "workload": {"arrival": {"process": "poisson", "rate": 1.0},
                     "input_tokens": {"dist": "lognormal", "mean": 800, "sigma": 0.8},
                     "output_tokens": {"dist": "lognormal", "mean": 150, "sigma": 0.6},
                     "num_requests": 400, "warmup_requests": 40, "seed": 7},
        "slo": {"ttft_ms": {"p95": 2000}, "tpot_ms": {"p95": 100}},
    }


@pytest.fixture(scope="module")
def front(base):
    need("search")
    return llmsim.search(base, 4.0, axes=AXES, jobs=2, screen=SCREEN, final_check=SCREEN, front_cost_ratio=3.0)


def test_front_is_sorted_with_one_winner_and_counts(front):
    assert len(front) >= 1
    assert front["winner"].sum() == 1
    winner = int(front.index[front["winner"]][0])
    if front.attrs["tie_note"]:  # bills within the noise: the tie rule (lossless, cheaper card, ...) picks
        assert bool(front["tied"].iloc[0]) and bool(front["tied"].iloc[winner])
        assert front["monthly_cost"].iloc[winner] <= front["monthly_cost"].iloc[0] * 1.02 / 0.98 + 1e-9
    else:
        assert winner == 0 and not front["tied"].any()
    assert list(front["monthly_cost"]) == sorted(front["monthly_cost"])
    counts = front.attrs["counts"]
    assert counts["enumerated"] == 12
    assert counts["simulated"] + counts["pruned_bound"] + counts["pruned_memory"] + counts["pruned_budget"] + \
        counts["invalid"] == 12
    assert 0 <= counts["screened"] <= counts["simulated"]
    assert front.attrs["winner"] == front["name"].iloc[winner]
    assert "cheapest" in front.attrs["reasons"][0]


def test_dask_local_cluster_gives_the_identical_front(base, front, dask_client):
    on_dask = llmsim.search(base, 4.0, axes=AXES, client=dask_client, screen=SCREEN, final_check=SCREEN,
                            front_cost_ratio=3.0)
    pd.testing.assert_frame_equal(on_dask, front)
    assert on_dask.attrs == front.attrs


def test_dask_screening_gives_the_identical_front(base, dask_client):
    """Waves of 4 at 12 req/s: the branch-and-bound cutoff screens candidates inside their capacity search; the
    workers get each wave's cutoff from C++, so the cluster screens the same ones and returns the same front."""
    need("search")
    axes = dict(AXES)
    axes["hardware.gpu"] = AXES["hardware.gpu"] + ["2xrtx4090-24gb@pp", "l40s-48gb"]
    kw = dict(axes=axes, screen=SCREEN, final_check=SCREEN, front_cost_ratio=2.0, wave=4)
    threaded = llmsim.search(base, 12.0, jobs=2, **kw)
    assert threaded.attrs["counts"]["screened"] > 0
    on_dask = llmsim.search(base, 12.0, client=dask_client, **kw)
    pd.testing.assert_frame_equal(on_dask, threaded)
    assert on_dask.attrs == threaded.attrs


def test_bad_inputs_name_the_field(base):
    need("search")
    with pytest.raises(ValueError, match="target_qps"):
        llmsim.search(base, 0, axes=AXES)
    with pytest.raises(ValueError, match=r"search.axes\[1\]"):
        llmsim.search(base, 1, axes={"hardware.gpu": ["a100-80gb-sxm"], "engine.max_num_seqs": []})
    with pytest.raises(ValueError, match=r"search.axes\[1\].path"):  # [0]: the default card axis, kept
        llmsim.search(base, 1, axes={"engine.nonsense": [1]})
    # NaN, inf and non-numbers are ValueErrors naming the argument; numpy numbers are numbers.
    for bad in (float("nan"), float("inf"), "fast"):
        with pytest.raises(ValueError, match="target_qps"):
            llmsim.search(base, bad, axes=AXES)
    with pytest.raises(ValueError, match="budget"):
        llmsim.search(base, 1, axes=AXES, budget=float("nan"))
    with pytest.raises(ValueError, match="front_cost_ratio"):
        llmsim.search(base, 1, axes=AXES, front_cost_ratio=float("nan"))
    import numpy as np
    with pytest.raises(ValueError, match="target_qps"):
        llmsim.search(base, np.float64("nan"), axes=AXES)


def test_axes_without_a_card_axis_keep_the_default_cards_as_the_cli_does(base, cli, tmp_path):
    """Issue 29: ``axes=`` without hardware.gpu replaced the default card axis in Python (one card, the scenario's),
    while the CLI's --axis keeps it. One C++ rule (analysis::with_default_gpu_axis) for both: the same space."""
    need("search")
    import json
    import subprocess
    axes = {"engine.max_num_seqs": [64, 128]}
    default_cards = len(json.loads(llmsim._core.search.default_axes([]))[0][1])
    budget = 1.0  # $1/month: everything is pruned by the bound, so only the enumeration runs
    counts = llmsim.search(base, 2.0, axes=axes, budget=budget, raw=True)["counts"]
    assert counts["enumerated"] == default_cards * 2
    path = tmp_path / "base.json"
    path.write_text(json.dumps(base))
    out = subprocess.run([cli, "search", str(path), "--target-qps", "2", "--budget", str(budget),
                          "--axis", "engine.max_num_seqs=[64,128]", "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["counts"] == counts
    # With gpus= the card axis is over those; a given card axis (or a fleet scenario) is kept as given.
    assert llmsim.search(base, 2.0, axes=axes, gpus=["rtx4090-24gb", "l40s-48gb"], budget=budget,
                         raw=True)["counts"]["enumerated"] == 4
    assert llmsim.search(base, 2.0, axes={"hardware.gpu": ["l40s-48gb"], **axes}, budget=budget,
                         raw=True)["counts"]["enumerated"] == 2


def test_a_disaggregated_base_is_sized_by_its_pools_split(base):
    """Issue 29: search refused a disaggregated base. Now its pools' split is the sizing axis (the one C++ rule,
    analysis::default_search_axes_for), --gpus / gpus= is an error there (it would be ignored)."""
    need("search")
    disagg = {k: v for k, v in base.items() if k != "hardware"}
    disagg["disaggregation"] = {"prefill": {"gpu": "a100-80gb-sxm", "replicas": 1, "price_per_gpu_hour": 1.8},
                                "decode": {"gpu": "rtx4090-24gb", "replicas": 2, "price_per_gpu_hour": 0.4},
                                "link": {"kind": "ethernet", "bandwidth_gbps": 100}}
    counts = llmsim.search(disagg, 2.0, axes={"engine.max_num_seqs": [64]}, budget=1, raw=True)["counts"]
    assert counts["enumerated"] == 2 * 4  # prefill {1, 2} x decode {1, 2, 3, 4}
    assert llmsim.search(disagg, 2.0, budget=1, raw=True)["counts"]["enumerated"] == 2 * 4 * 4 * 4
    with pytest.raises(ValueError, match="gpus"):
        llmsim.search(disagg, 2.0, gpus=["rtx4090-24gb"], budget=1)


def test_an_axis_never_overrides_what_the_caller_set(base, cli, tmp_path):
    """Attack (issue 29): a setting on top of the scenario — a keyword, --set, the server's line — was silently
    overridden by the search's axis over the same field. One C++ rule (analysis::search_axes_for_sets) for both faces:
    a default axis yields (noted), the card axis with a split set and a given axis over a field set are refused."""
    need("search")
    import json
    import subprocess
    import warnings
    budget = 1.0  # everything is pruned by the bound: only the enumeration runs
    full = llmsim.search(base, 2.0, gpus=["a100-80gb-sxm"], budget=budget, raw=True)["counts"]["enumerated"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        counts = llmsim.search(base, 2.0, gpus=["a100-80gb-sxm"], budget=budget, raw=True,
                               vllm_args="vllm serve llama-3.1-8b --max-num-seqs 32")["counts"]
    assert counts["enumerated"] == full // 4  # the max_num_seqs axis (4 values) yields to the line's 32
    assert any("engine.max_num_seqs is not searched" in str(w.message) for w in caught)
    path = tmp_path / "base.json"
    path.write_text(json.dumps(base))
    run = [cli, "search", str(path), "--target-qps", "2", "--gpus", "a100-80gb-sxm", "--budget", str(budget), "--json"]
    out = subprocess.run(run + ["--vllm-args", "vllm serve llama-3.1-8b --max-num-seqs 32"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["counts"] == counts and "engine.max_num_seqs is not searched" in out.stderr
    with pytest.raises(ValueError, match=r"hardware\.gpu.*hardware\.tp = 2"):
        llmsim.search(base, 2.0, gpus=["a100-80gb-sxm"], budget=budget, hardware__tp=2)
    bad = subprocess.run(run + ["--set", "hardware.tp=2"], capture_output=True, text=True)
    assert bad.returncode == 2 and "hardware.tp = 2" in bad.stderr
    with pytest.raises(ValueError, match=r"engine\.max_num_seqs = 64"):
        llmsim.search(base, 2.0, axes={"engine.max_num_seqs": [16, 32]}, budget=budget, engine__max_num_seqs=64)


def test_equal_bills_are_a_tie_said_alike_by_the_cli_and_python(base, cli, tmp_path):
    """Issue 29: search ranked options whose bills were equal by P95 TTFT differences of a few ms, silently. The
    winner is now picked by compare's rule (analysis::pick_winner): a tie within the noise is reported, with the rule
    that broke it, and the CLI (text and JSON) and Python say the same."""
    need("search")
    import json
    import subprocess
    axes = {"hardware.gpu": ["rtx4090-24gb"], "engine.max_num_batched_tokens": [2048, 4096, 8192]}
    frame = llmsim.search(base, 8.0, axes=axes, screen=SCREEN, final_check=SCREEN)
    assert len(frame) >= 2 and frame["monthly_cost"].nunique() == 1  # one card, two replicas each: equal bills
    assert frame["tied"].all()
    note = frame.attrs["tie_note"]
    assert note.startswith("tie within the noise (") and note in frame.attrs["reasons"]
    assert note.endswith(frame.attrs["winner"] + " wins on the lower P95 TTFT")
    path = tmp_path / "base.json"
    path.write_text(json.dumps(base))
    out = subprocess.run([cli, "search", str(path), "--target-qps", "8", "--axis", 'hardware.gpu=["rtx4090-24gb"]',
                          "--axis", "engine.max_num_batched_tokens=[2048,4096,8192]", "--out", str(tmp_path / "s.json")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    j = json.loads((tmp_path / "s.json").read_text())
    if len(j["front"]) > 1 and len({m["monthly_cost"] for m in j["front"]}) == 1:
        assert j["tie_note"] in out.stdout and "= tied with it" in out.stdout
        assert sorted(j["tied"]) == sorted(m["name"] for m in j["front"])
        assert sum(line.startswith("= ") for line in out.stdout.splitlines()) == len(j["tied"]) - 1
