"""The honest money from Python: one GPU-option and repricing rule (libsim's), cost at the user's load leading the
frames, owned hardware, the quality caveat, and the compare plot."""
import json
from pathlib import Path

import matplotlib
import pandas as pd
import pytest

import llmsim
from conftest import need

matplotlib.use("Agg")
CHAT = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "chat-8b.json"


def test_capacity_on_another_card_bills_that_card():
    """chat-8b prices its A100 at $1.80/h; put on a 4090 through a keyword override it is billed at the 4090's
    $0.50/h, as the CLI's --gpu does (the override used to keep the A100's price: $2,628/month instead of $730)."""
    need("analysis")
    row = llmsim.capacity(CHAT, hardware__gpu="rtx4090-24gb", replications=1)
    assert row["price_per_gpu_hour"] == 0.5
    assert row["cost_per_hour"] == 0.5
    assert row["monthly_cost"] == 0.5 * 730 * row["replicas_needed"]
    assert llmsim.capacity(CHAT, hardware__gpu="2xa100-80gb-sxm", replications=1)["price_per_gpu_hour"] == 1.8
    assert llmsim.capacity(CHAT, hardware__gpu="rtx4090-24gb", hardware__price_per_gpu_hour=0.4,
                           replications=1)["cost_per_hour"] == 0.4


def test_python_has_no_copy_of_the_option_or_price_rules():
    import llmsim._scenario as sc
    import llmsim.api as api
    assert not hasattr(sc, "reprice_for_gpu")
    assert not hasattr(api, "_gpu_overrides")
    assert llmsim.catalog.gpu_option("2xa100-80gb-pcie+nvlink@pp") == {
        "card": "a100-80gb-pcie", "count": 2, "count_given": True, "pipeline": True, "nvlink_bridge": True,
        "kv_offload_gb": 0, "text": "2xa100-80gb-pcie+nvlink@pp"}
    assert llmsim.catalog.gpu_option("rtx4090-24gb+offload64")["kv_offload_gb"] == 64


def test_gpu_options_are_one_sweep_axis(small):
    need("analysis")
    options = ["rtx4090-24gb", "2xrtx4090-24gb", "2xrtx4090-24gb@pp", "a100-80gb-sxm", "2xa100-80gb-pcie+nvlink"]
    frame = llmsim.sweep(small, {"hardware.gpu": options}, jobs=1, progress=False)
    assert list(frame["hardware.gpu"]) == options
    assert list(frame["num_gpus"]) == [1, 2, 2, 1, 2]
    assert list(frame["tp"]) == [1, 2, 1, 1, 2]
    assert list(frame["pp"]) == [1, 1, 2, 1, 1]
    assert frame["interconnect"].iloc[4] == "NVLink bridge, 300 GB/s per direction"
    # small prices its A100 SXM at $1.80/h: the other cards are billed at their own (catalogue) prices.
    prices = llmsim.catalog.gpus()["price_per_hour"]
    assert list(frame["price_per_gpu_hour"]) == [prices["rtx4090-24gb"]] * 3 + [1.8, prices["a100-80gb-pcie"]]
    assert list(frame["cost_per_hour"]) == [prices["rtx4090-24gb"], 2 * prices["rtx4090-24gb"],
                                            2 * prices["rtx4090-24gb"], 1.8, 2 * prices["a100-80gb-pcie"]]
    with pytest.raises(ValueError, match="no NVLink bridge connector"):
        llmsim.simulate(small, gpu="2xrtx4090-24gb+nvlink")


def test_compare_frame_leads_with_money_at_the_target_load(small):
    need("analysis")
    small = dict(small, cost={"target_qps": 0.5, "electricity_per_kwh": 0.15, "pue": 1.5})
    frame = llmsim.compare(small, gpus=["rtx4090-24gb", "a100-80gb-sxm"], quants=["awq-int4"], replications=1,
                           prices={"rtx4090-24gb": 0.45}, purchase_prices={"a100-80gb-sxm": 15000})
    cols = list(frame.columns)
    assert cols.index("cost_per_mtok_output_at_target") < cols.index("max_qps") < cols.index("cost_per_mtok_output_slo")
    assert cols.index("monthly_cost") < cols.index("max_qps")
    rtx, a100 = frame.iloc[0], frame.iloc[1]
    assert rtx["price_per_gpu_hour"] == 0.45 and not rtx["price_is_placeholder"]
    assert rtx["cost_per_mtok_output_at_target"] > rtx["cost_per_mtok_output_slo"]
    # Owned: the 4090's MSRP from the catalogue, the A100's from purchase_prices; both priced, with a break-even.
    assert rtx["purchase_price_per_gpu"] == 1599 and a100["purchase_price_per_gpu"] == 15000
    assert rtx["owned_monthly_cost"] > 0 and rtx["break_even_months"] > 0
    assert a100["owned_cost_per_mtok_output_at_target"] > 0
    assert "quality not modelled" in rtx["quality_caveat"]
    ax = llmsim.plot.compare_costs(frame)
    # Every price was given (the scenario's own A100 SXM, the 4090 by `prices`): the plot claims no placeholder.
    assert "0.5 QPS" in ax.get_title() and "placeholder" not in ax.get_title()
    labels = [t.get_text() for t in ax.texts]
    assert any("winner" in t for t in labels)
    assert any("replica" in t and "/Mtok" in t and "/month" in t for t in labels)
    catalogue = llmsim.compare(small, gpus=["rtx4090-24gb"], quants=["awq-int4"], replications=1)
    assert catalogue["price_is_placeholder"].iloc[0]
    assert "placeholder prices" in llmsim.plot.compare_costs(catalogue).get_title()


def test_quality_table_is_a_frame():
    q = llmsim.catalog.quality()
    assert {"format", "model", "metric", "delta", "source"} <= set(q.columns)
    assert (q["format"] == "awq-int4").any()


def test_gpus_frame_states_units_and_owned_fields():
    g = llmsim.catalog.gpus()
    assert g.loc["rtx4090-24gb", "memory_gib"] == 24
    assert g.loc["rtx4090-24gb", "memory_gb"] == pytest.approx(24 * 2**30 / 1e9)
    assert g.loc["rtx4090-24gb", "purchase_price"] == 1599
    assert g.loc["a100-80gb-pcie", "nvlink_bridge_gb_per_s"] == 300
    assert pd.isna(g.loc["a100-80gb-sxm", "purchase_price"])


def test_a_mixed_fleet_reports_each_member(small):
    """Round robin gives a 4090 and an A100 the same requests; the 4090 takes about twice as long over each. Each
    member is measured on its own replicas (fleet_pools, from C++; its busy share prices its owned energy)."""
    need("analysis")
    assert "fleet_pools" not in llmsim.simulate(small).summary  # one card: no members
    small["hardware"] = {"router": "round_robin", "fleet": [
        {"gpu": "rtx4090-24gb", "replicas": 1, "price_per_gpu_hour": 0.4},
        {"gpu": "a100-80gb-sxm", "replicas": 1, "price_per_gpu_hour": 1.8}]}
    r = llmsim.simulate(small, rate=0.5)  # neither saturated
    members = r["fleet_pools"]
    assert [m["gpu"] for m in members] == ["rtx4090-24gb", "a100-80gb-sxm"]
    assert members[0]["busy_fraction"] > 1.4 * members[1]["busy_fraction"]
    assert r["utilization"]["busy_fraction"] == pytest.approx(
        (members[0]["busy_fraction"] + members[1]["busy_fraction"]) / 2)
    assert r["kv"]["capacity_tokens"] == members[0]["kv_capacity_tokens"] < members[1]["kv_capacity_tokens"]


def test_a_gpu_spec_without_a_price_is_an_error_not_a_free_winner(small, tmp_path):
    """A spec file without price_per_hour was billed $0 and won every comparison on cost (issue 29)."""
    card = llmsim.load_gpu_spec(Path(__file__).resolve().parents[2] / "data" / "gpus" / "rtx4090-24gb.json")
    card["id"] = "priceless-4090"
    card.pop("price_per_hour", None)
    path = tmp_path / "priceless.json"
    path.write_text(json.dumps(card))
    sc = dict(small, hardware=dict(small["hardware"], gpu=str(path)))
    sc["hardware"].pop("price_per_gpu_hour")
    with pytest.raises(ValueError, match=r"hardware\.price_per_gpu_hour.*no price_per_hour"):
        llmsim.simulate(sc)
    sc["hardware"]["price_per_gpu_hour"] = 0.4  # given: billed at it
    assert llmsim.simulate(sc)["cost"]["per_hour"] == pytest.approx(0.4)


def test_another_currency_without_every_price_is_an_error(small):
    sc = dict(small, cost={"currency": "HKD"})
    sc["hardware"] = dict(small["hardware"], price_per_gpu_hour=14.0)  # HKD, for the base card only
    with pytest.raises(ValueError, match="rtx4090-24gb.*HKD|HKD.*rtx4090-24gb"):
        llmsim.compare(sc, gpus=["a100-80gb-sxm", "rtx4090-24gb"], replications=1, num_requests=100)


def test_equal_bills_are_a_tie_that_the_lossless_format_takes(small):
    f = llmsim.compare(dict(small, cost={"target_qps": 0.2}), gpus=["a100-80gb-sxm"],
                       quants=["fp16", "int8", "awq-int4"], replications=1, num_requests=100)
    assert f["monthly_cost"].nunique() == 1  # one replica of each: the same bill
    assert f["tied"].all() and f.loc[f["winner"], "quant"].iloc[0] == "fp16"
    assert "lossless" in f.attrs["tie_note"]


def test_a_daily_profile_is_sized_at_its_peak(small):
    day = dict(small, workload=dict(small["workload"], daily_profile=[0.3] * 12 + [2.0] + [0.3] * 11))
    day["workload"].pop("num_requests")
    flat = dict(small, workload=dict(small["workload"], arrival={"process": "poisson", "rate": 4.0}))
    flat["workload"].pop("num_requests")  # both at the default request count
    a = llmsim.capacity(day, replications=1, num_requests=200)
    b = llmsim.capacity(flat, replications=1, num_requests=200)
    assert a["max_qps"] == b["max_qps"] and a["target_qps"] == pytest.approx(4.0)
    assert "peak window (12:00, 2 x the base rate)" in a["sized_at"] and b["sized_at"] == ""
