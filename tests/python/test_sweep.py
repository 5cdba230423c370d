import json
import subprocess

import numpy as np
import pandas as pd
import pytest

import llmsim
from conftest import need

# 5 GPUs x 4 models x 2 formats x 5 rates = 200 scenarios, some of which cannot run (70B fp16 on a 4090).
GRID = {
    "hardware.gpu": ["rtx4090-24gb", "rtx4090-48gb", "l4-24gb", "a100-80gb-sxm", "h100-80gb-sxm"],
    "model": ["llama-3.1-8b", "mistral-7b", "qwen2.5-14b", "llama-3.1-70b"],
    "quant.weights": ["fp16", "awq-int4"],
    "workload.arrival.rate": [0.25, 0.5, 1, 2, 4],
}


@pytest.fixture(scope="module")
def base():
    return {
        "hardware": {"price_per_gpu_hour": 1.0},
        "workload": {"arrival": {"process": "poisson", "rate": 1.0},
                     "input_tokens": {"dist": "lognormal", "mean": 256, "sigma": 0.5},
                     "output_tokens": {"dist": "fixed", "value": 32},
                     "num_requests": 40, "warmup_requests": 4, "seed": 3},
        "slo": {"ttft_ms": {"p95": 2000}, "tpot_ms": {"p95": 100}},
    }


@pytest.fixture(scope="module")
def frame(base):
    need("analysis")
    return llmsim.sweep(base, GRID, jobs=2, progress=False)


def test_one_row_per_scenario_in_grid_order(frame):
    assert len(frame) == 200
    assert list(frame.columns[:4]) == list(GRID)
    # cartesian product, last path varying fastest
    assert list(frame["workload.arrival.rate"][:5]) == GRID["workload.arrival.rate"]
    assert list(frame["hardware.gpu"][::40]) == GRID["hardware.gpu"]


def test_non_fitting_rows_have_reason_and_no_numbers(frame):
    bad = frame[(frame["model"] == "llama-3.1-70b") & (frame["quant.weights"] == "fp16") &
                (frame["hardware.gpu"] == "rtx4090-24gb")]
    assert len(bad) == 5
    assert (~bad["fits"].astype(bool)).all()
    assert bad["reason"].str.len().gt(0).all()
    numeric = [c for c in frame.columns if c.startswith("ttft_ms.")]
    assert numeric and bad[numeric].isna().all().all()
    good = frame[frame["fits"].astype(bool)]
    assert len(good) > 100 and good["ttft_ms.p95"].notna().all()


def test_thread_count_does_not_change_the_frame(base, frame):
    pd.testing.assert_frame_equal(llmsim.sweep(base, GRID, jobs=1, progress=False), frame)


def test_dask_local_cluster_gives_the_identical_frame(base, frame, dask_client):
    on_dask = llmsim.sweep(base, GRID, client=dask_client, progress=False)
    with pytest.raises(ValueError, match="hardware.gpu"):
        llmsim.sweep(base, {"hardware.gpu": ["nope-gpu"]}, client=dask_client, progress=False)
    pd.testing.assert_frame_equal(on_dask, frame)


def test_list_of_overrides_and_of_scenarios(base, frame):
    overrides = [{"hardware.gpu": "a100-80gb-sxm", "model": "mistral-7b", "quant.weights": "fp16",
                  "workload.arrival.rate": 2}]
    row = llmsim.sweep(base, overrides, progress=False)
    assert len(row) == 1
    match = frame[(frame["hardware.gpu"] == "a100-80gb-sxm") & (frame["model"] == "mistral-7b") &
                  (frame["quant.weights"] == "fp16") & (frame["workload.arrival.rate"] == 2)]
    assert row["ttft_ms.p95"].iloc[0] == match["ttft_ms.p95"].iloc[0]
    whole = llmsim.sweep(None, [dict(base, model="mistral-7b"), dict(base, model="llama-3.1-8b")], progress=False)
    assert len(whole) == 2 and list(whole["model"]) == ["mistral-7b", "llama-3.1-8b"]


def test_sweep_row_matches_simulate(base, frame):
    s = llmsim.simulate(base, gpu="a100-80gb-sxm", rate=1)
    row = frame[(frame["hardware.gpu"] == "a100-80gb-sxm") & (frame["model"] == "llama-3.1-8b") &
                (frame["quant.weights"] == "fp16") & (frame["workload.arrival.rate"] == 1)]
    assert row["ttft_ms.p95"].iloc[0] == s.summary["ttft_ms"]["p95"]


def test_a_grid_over_gpus_bills_each_card_at_its_own_price(cli, tmp_path):
    """The base's price was for the base's card; other cards fall back to their catalogue price, as in the CLI."""
    import json
    import subprocess
    need("analysis")
    base = {"hardware": {"gpu": "a100-80gb-sxm", "price_per_gpu_hour": 1.8}, "engine": {"max_model_len": 8192},
            "workload": {"arrival": {"process": "poisson", "rate": 1.0}, "num_requests": 20, "warmup_requests": 0}}
    grid = {"hardware.gpu": ["a100-80gb-sxm", "rtx4090-24gb"]}
    rows = llmsim.sweep(base, grid, jobs=1, progress=False)
    catalogue = llmsim.catalog.gpus().set_index("id")
    assert list(rows["cost_per_hour"]) == [1.8, catalogue.loc["rtx4090-24gb", "price_per_hour"]]
    # An explicit price on the point wins.
    both = llmsim.sweep(base, {**grid, "hardware.price_per_gpu_hour": [0.7]}, jobs=1, progress=False)
    assert list(both["cost_per_hour"]) == [0.7, 0.7]
    grid_file = tmp_path / "grid.json"
    grid_file.write_text(json.dumps({"base": base, "grid": grid}))
    out = tmp_path / "rows.json"
    subprocess.run([cli, "sweep", "--grid", str(grid_file), "--out", str(out)], check=True, capture_output=True)
    assert [r["cost_per_hour"] for r in json.loads(out.read_text())] == list(rows["cost_per_hour"])


def test_capacity_options_without_capacity_are_refused(base):
    # The class: an option of the per-point capacity search, given while no search runs, must not be ignored
    # silently (the CLI refuses --rel-tol without --capacity the same way).
    for options in ({"rel_tol": 0.01}, {"replications": 3, "num_requests": 500}):
        with pytest.raises(ValueError, match="without capacity=True") as e:
            llmsim.sweep(base, {"workload.arrival.rate": [1, 2]}, progress=False, **options)
        for name in options:
            assert name in str(e.value)


def test_an_unset_search_warmup_follows_the_search_requests_from_every_surface(cli, tmp_path):
    # The class (issue 29): the warm-up of a capacity search's runs, left unset, follows the runs' length by one rule
    # in C++, whichever surface shortens them. Python kept a fixed 60: capacity(num_requests=50) was refused and
    # capacity/compare(num_requests=300) warmed up on 40 where the CLI's --requests 300 warmed up on 30.
    sc = {"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm", "price_per_gpu_hour": 1.8},
          "engine": {"max_model_len": 8192},
          "workload": {"arrival": {"process": "poisson", "rate": 2.0}, "num_requests": 400, "seed": 3,
                       "input_tokens": {"dist": "lognormal", "mean": 512, "sigma": 0.8},
                       "output_tokens": {"dist": "lognormal", "mean": 128, "sigma": 0.6}},
          "slo": {"ttft_ms": {"p95": 300}, "tpot_ms": {"p95": 30}}}
    llmsim.capacity(sc, num_requests=50, replications=1)  # was refused: "warmup_requests ... got 60"
    path = tmp_path / "s.json"
    path.write_text(json.dumps(sc))
    for command, python in [("capacity", lambda: [llmsim.capacity(str(path), num_requests=300, replications=1)]),
                            ("compare", lambda: llmsim.compare(str(path), gpus=["a100-80gb-sxm"], num_requests=300,
                                                               replications=1).to_dict("records"))]:
        args = [cli, command, str(path), "--requests", "300", "--replications", "1", "--json"]
        if command == "compare":
            args += ["--gpus", "a100-80gb-sxm"]
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
        doc = json.loads(out)
        rows = doc["rows"] if command == "compare" else [doc]
        # The measured requests at capacity tell the warm-up apart (270 against 260 before), the rate alone may not.
        key = lambda r: (r["max_qps"], r["completed_requests"])  # noqa: E731
        assert [key(r) for r in rows] == [key(r) for r in python()], command


def test_an_axis_value_over_a_whole_section_merges_into_the_base_as_on_the_cli(cli, tmp_path):
    """A value of an axis over a whole section merges into the base's section field by field (libsim's
    spec::merge_json_path; issue 29: it dropped the base's other fields, then was refused): the base's LoRA slots and
    replicas stay, null clears a field, and only an ambiguous merge (a variant's kind changed with base fields beside
    it) is a ValueError, with the CLI's message."""
    need("analysis")
    base = {"model": "llama-3.1-8b", "hardware": {"gpu": "rtx4090-24gb", "replicas": 2},
            "engine": {"max_model_len": 8192, "enable_lora": True, "max_loras": 2},
            "workload": {"arrival": {"process": "poisson", "rate": 2.0}, "num_requests": 200,
                         "warmup_requests": 20},
            "slo": {"ttft_ms": {"p95": 2000}}}
    points = llmsim.expand_grid(base, {"engine": [{"max_num_seqs": 64}, {"max_loras": None, "enable_lora": None}]})
    merged = [json.loads(text) for _, text in points]
    assert merged[0]["engine"]["max_loras"] == 2 and merged[0]["engine"]["enable_lora"] is True
    assert merged[0]["engine"]["max_num_seqs"] == 64 and merged[0]["engine"]["max_model_len"] == 8192
    assert merged[0]["hardware"]["replicas"] == 2
    assert merged[1]["engine"].get("enable_lora", False) is False
    # The same as the field's own path.
    by_path = llmsim.expand_grid(base, {"engine.max_num_seqs": [64]})
    assert json.loads(by_path[0][1]) == merged[0]
    moved = json.loads(llmsim.expand_grid(base, {"hardware": [{"gpu": "a100-80gb-sxm"}]})[0][1])
    assert moved["hardware"]["replicas"] == 2 and moved["hardware"]["gpu"] == "a100-80gb-sxm"
    ambiguous = {"workload.arrival": [{"process": "gamma", "cv": 2}]}
    with pytest.raises(ValueError, match=r"workload\.arrival\.process.*rate = 2\.0.*null to clear them"):
        llmsim.expand_grid(base, ambiguous)
    with pytest.raises(ValueError, match=r"search.axes\[\d\] \(workload.arrival\) value 1.*rate = 2\.0"):
        llmsim.search(base, 2, axes=ambiguous)
    path = tmp_path / "lora.json"
    path.write_text(json.dumps(base))
    out = subprocess.run([cli, "search", str(path), "--target-qps", "2", "--axis",
                          'workload.arrival=[{"process":"gamma","cv":2}]'], capture_output=True, text=True)
    assert out.returncode == 2 and "workload.arrival.process" in out.stderr and "rate = 2.0" in out.stderr


def test_a_split_set_on_the_base_of_a_card_axis_labels_rows_with_the_split_they_ran(base):
    # pp 2 set by keyword or by a server line, over a card axis: "a100-80gb-sxm" ran on two cards, which its label
    # alone does not say; the rows gain hardware.tp / hardware.pp labels (libsim's rule, as `llmsim sweep --set`).
    small = dict(base, model="llama-3.1-8b")
    cards = {"hardware.gpu": ["a100-80gb-sxm", "2xa100-80gb-sxm@pp"]}
    plain = llmsim.sweep(small, cards, jobs=1, progress=False)
    assert "hardware.tp" not in plain.columns
    for kwargs in ({"hardware__pp": 2}, {"vllm_args": "vllm serve meta-llama/Llama-3.1-8B -pp 2"}):
        frame = llmsim.sweep(small, cards, jobs=1, progress=False, **kwargs)
        assert list(frame["hardware.pp"]) == list(frame["pp"]) == [2, 2]
        assert list(frame["hardware.tp"]) == list(frame["tp"]) == [1, 1]


def test_a_card_axis_that_contradicts_a_split_refuses_only_its_rows_from_cli_and_python(base, cli, tmp_path,
                                                                                        dask_client):
    # The class: a point whose values contradict each other (a counted card "2x...@pp" is a pipeline of two, so tp 2
    # would need four; "2x..." is tp 2, so tp 1 would need one) while each value runs in another point. Before, the
    # whole sweep failed on the first such point; now those rows cannot run, with the reason, and the rest run.
    # A split set on top (keyword, server line, --set) is the same contradiction.
    need("analysis")
    small = dict(base, model="llama-3.1-8b")
    cards = ["rtx4090-24gb", "2xrtx4090-24gb@pp", "2xrtx4090-24gb"]
    grid = {"hardware.gpu": cards, "hardware.tp": [1, 2]}
    impossible = {("2xrtx4090-24gb@pp", 2), ("2xrtx4090-24gb", 1)}
    frame = llmsim.sweep(small, grid, jobs=1, progress=False)
    for _, row in frame.iterrows():
        bad = (row["hardware.gpu"], row["hardware.tp"]) in impossible
        assert bool(row["fits"]) is not bad
        if bad:
            assert row["reason"].startswith("cannot run: hardware.tp: tp ") and "contradicts gpu '2xrtx4090-24gb" in row["reason"]
            assert np.isnan(row["throughput.output_tokens_per_s"])
        else:
            assert row["throughput.output_tokens_per_s"] > 0
    # Threads, Dask chunks (each chunk carries the whole grid's verdict) and the CLI give the same rows.
    pd.testing.assert_frame_equal(llmsim.sweep(small, grid, jobs=2, progress=False), frame)
    pd.testing.assert_frame_equal(llmsim.sweep(small, grid, client=dask_client, chunk_size=1, progress=False), frame)
    grid_file = tmp_path / "grid.json"
    grid_file.write_text(json.dumps({"base": small, "grid": grid}))
    out = subprocess.run([cli, "sweep", str(grid_file), "--json"], check=True, capture_output=True, text=True)
    assert [r["fits"] for r in json.loads(out.stdout)] == list(frame["fits"])
    # Set on top of a card axis: only the card that cannot take it is refused.
    cards_only = {"hardware.gpu": cards}
    for kwargs in ({"hardware__tp": 2}, {"vllm_args": "vllm serve meta-llama/Llama-3.1-8B -tp 2"}):
        on_top = llmsim.sweep(small, cards_only, jobs=1, progress=False, **kwargs)
        assert list(on_top["fits"]) == [True, False, True]
        assert "with what is set on every point" in on_top["reason"][1]
    cards_file = tmp_path / "cards.json"
    cards_file.write_text(json.dumps({"base": small, "grid": cards_only}))
    out = subprocess.run([cli, "sweep", str(cards_file), "--set", "hardware.tp=2", "--json"], check=True,
                         capture_output=True, text=True)
    assert [r["fits"] for r in json.loads(out.stdout)] == [True, False, True]
    # A value that runs nowhere is still an error naming the point, before anything runs.
    with pytest.raises(ValueError, match=r"grid point 2 .*unknown GPU 'nope-gpu'"):
        llmsim.sweep(small, {"hardware.gpu": ["rtx4090-24gb", "nope-gpu"], "hardware.tp": [1, 2]}, progress=False)
    with pytest.raises(ValueError, match="unknown GPU 'nope-gpu'"):
        llmsim.sweep(small, {"hardware.gpu": ["rtx4090-24gb", "nope-gpu"]}, progress=False, hardware__tp=2)
