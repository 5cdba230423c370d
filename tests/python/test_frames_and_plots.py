"""The Python user's experience (issue 15): typed frames, query-friendly names, both ways to call sweep, a repr
that says whether a run saturated, and the compare / timeline / latency-vs-load plots."""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import llmsim  # noqa: E402
from conftest import need  # noqa: E402

SATURATING_RATE = 60  # req/s: far past an A100's service rate for SMALL's lengths (~15 req/s when saturated)


def long(small):
    """SMALL with enough requests for the engine to see an overloaded queue grow (unstable = True)."""
    return dict(small, workload=dict(small["workload"], num_requests=400, warmup_requests=40))


def _object_columns_hold_only_text(frame):
    for c in frame.select_dtypes(include="object").columns:
        kinds = {type(v).__name__ for v in frame[c]}
        assert kinds <= {"str"}, f"column {c} mixes {kinds}"


def test_sweep_numbers_are_numeric_with_nan_for_a_point_that_cannot_run(small):
    need("analysis")
    df = llmsim.sweep(small, {"hardware.gpu": ["rtx4090-24gb", "a100-80gb-sxm"], "model": ["llama-3.1-8b", "llama-3.1-70b"]},
                      progress=False, jobs=1)
    cannot = df[(df["hardware.gpu"] == "rtx4090-24gb") & (df["model"] == "llama-3.1-70b")].iloc[0]
    assert not cannot["fits"] and cannot["reason"]
    for col in ["ttft_ms.p95", "throughput.output_tokens_per_s", "goodput_rps", "max_qps", "scaling_efficiency",
                "cost_per_mtok_output_at_target", "at_target.ttft_ms.p95", "completed_requests"]:
        assert df[col].dtype == np.float64, (col, df[col].dtype)  # was object, holding None
    assert np.isnan(cannot["ttft_ms.p95"]) and df["ttft_ms.p95"].notna().sum() == 2  # 70B fp16 fits neither card
    assert df["fits"].dtype == bool
    assert df["tp"].dtype == np.int64
    _object_columns_hold_only_text(df)
    # Arithmetic works without astype: the frame is usable as it comes.
    assert (df["ttft_ms.p95"] / 1000).max() > 0


def test_query_friendly_names_are_consistent_across_frames(small):
    need("analysis")
    dotted = llmsim.sweep(small, {"workload.arrival.rate": [1, 2]}, progress=False, jobs=1)
    flat = llmsim.sweep(small, {"workload.arrival.rate": [1, 2]}, progress=False, jobs=1, sep="_")
    assert list(flat.columns) == [c.replace(".", "_") for c in dotted.columns]
    picked = flat.query("workload_arrival_rate == 2 and ttft_ms_p95 > 0")
    assert len(picked) == 1 and picked["ttft_ms_p95"].iloc[0] == dotted["ttft_ms.p95"].iloc[1]
    # simulate's summary (and a capacity row) as frames: the same names and types as the sweep's.
    one = llmsim.simulate(small).to_frame(sep="_")
    assert one["ttft_ms_p95"].dtype == np.float64 and one["ttft_ms_p95"].iloc[0] > 0
    assert {"ttft_ms_p95", "tpot_ms_p99", "throughput_output_tokens_per_s", "goodput_rps"} <= set(flat.columns)
    assert {"ttft_ms_p95", "tpot_ms_p99", "throughput_output_tokens_per_s", "goodput_rps"} <= set(one.columns)
    both = llmsim.frame([llmsim.simulate(small), llmsim.simulate(small, rate=1)], sep="_")
    assert len(both) == 2 and both.query("ttft_ms_p95 > 0").shape[0] == 2
    # A capacity row as a frame: the same columns as a capacity sweep's (C++ flattens both).
    cap = llmsim.capacity(small, replications=1, num_requests=150, frame=True, sep="_")
    swept = llmsim.sweep(None, [small], progress=False, jobs=1, capacity=True, replications=1, num_requests=150,
                         sep="_")
    assert list(cap.columns) == list(swept.columns)
    assert cap["max_qps"].dtype == np.float64 and cap["max_qps"].iloc[0] == swept["max_qps"].iloc[0] > 0
    assert cap.query("max_qps_ci95_lo <= max_qps").shape[0] == 1
    with pytest.raises(ValueError, match="sep"):
        llmsim.sweep(small, {"workload.arrival.rate": [1]}, progress=False, sep="/")


def test_sweep_takes_a_list_of_scenarios_or_a_base_and_a_grid(small):
    need("analysis")
    other = dict(small, hardware=dict(small["hardware"], gpu="rtx4090-24gb", price_per_gpu_hour=0.5))
    listed = llmsim.sweep([small, other], progress=False, jobs=1)  # was a TypeError: grid_or_list missing
    assert list(listed["gpu"]) == ["a100-80gb-sxm", "rtx4090-24gb"]
    pd.testing.assert_frame_equal(listed, llmsim.sweep(None, [small, other], progress=False, jobs=1))
    gridded = llmsim.sweep(small, {"hardware.gpu": ["a100-80gb-sxm"]}, progress=False, jobs=1)
    assert gridded["ttft_ms.p95"].iloc[0] == listed["ttft_ms.p95"].iloc[0]
    # The keyword's earlier name still works.
    pd.testing.assert_frame_equal(gridded, llmsim.sweep(small, grid_or_list={"hardware.gpu": ["a100-80gb-sxm"]},
                                                        progress=False, jobs=1))
    with pytest.raises(ValueError, match="list of scenarios"):
        llmsim.sweep(small)  # one scenario and no grid
    with pytest.raises(ValueError, match="list of scenarios"):
        llmsim.sweep("examples/scenarios/chat-8b.json")


def test_repr_says_fits_saturated_and_slo_at_a_glance(small):
    need("analysis")
    ok = repr(llmsim.simulate(small))
    assert "fits" in ok and "stable" in ok and "UNSTABLE" not in ok and "SLO met" in ok
    sat = repr(llmsim.simulate(long(small), rate=SATURATING_RATE))
    assert "UNSTABLE" in sat and "saturated" in sat and "SLO NOT met" in sat
    big = dict(small, model="llama-3.1-70b", hardware=dict(small["hardware"], gpu="rtx4090-24gb"))
    assert "cannot run" in repr(llmsim.simulate(big))


def test_repr_with_no_slo_says_so_instead_of_slo_met(small):
    # Nothing to meet (libsim's analysis::has_slo): "no SLO set", never "SLO met" (attack6), from the dict or a file.
    need("analysis")
    none = repr(llmsim.simulate(dict(small, slo={})))
    assert "no SLO set" in none and "SLO met" not in none and "SLO NOT met" not in none
    tenant = dict(small, slo={})
    tenant["workload"] = dict(small["workload"], classes=[
        {"name": "chat", "arrival": {"process": "poisson", "rate": 2.0}, "input_tokens": small["workload"]["input_tokens"],
         "output_tokens": small["workload"]["output_tokens"], "slo": {"ttft_ms": {"p95": 2000}}}])
    assert "SLO met" in repr(llmsim.simulate(tenant))  # a class's SLO is one to meet
    # Nothing completed (every request timed out) and no SLO: nothing was met, in the summary and the repr alike.
    lost = llmsim.simulate(dict(small, slo={}, workload=dict(small["workload"], timeout_s=0.001)))
    assert lost.summary["completed_requests"] == 0 and lost.summary["slo_met"] is None
    assert lost.summary["slo_met_note"].startswith("no SLO set")
    assert "no SLO set, NOT met: no request completed" in repr(lost)


def test_no_slo_has_no_attainment_either(small):
    # Issue 29 (tidy): slo_met was null with no target but slo_attainment read 1.0; now null too, as the CLI writes it.
    need("analysis")
    r = llmsim.simulate(dict(small, slo={}))
    assert r.summary["completed_requests"] > 0
    assert r.summary["slo_attainment"] is None and r.summary["slo_met"] is None
    assert "attainment" not in repr(r)
    assert isinstance(llmsim.simulate(small).summary["slo_attainment"], float)  # with its SLO, a number
    # Nor goodput: the SLO-meeting rate was the throughput again under another name. Null in the summary, its steady
    # state, vLLM's request_goodput and a sweep row alike (the CLI writes the same JSON); with an SLO, numbers again.
    s = r.summary
    assert s["throughput"]["requests_per_s"] > 0
    for k in ("goodput_rps", "goodput_output_tps", "goodput_total_tps", "request_goodput"):
        assert s[k] is None, k
    assert s["steady_state"]["goodput_rps"] is None
    assert isinstance(llmsim.simulate(small).summary["goodput_rps"], float)
    row = llmsim.sweep(dict(small, slo={}), {"workload.seed": [1]}, progress=False, jobs=1)
    assert row["goodput_output_tps"].isna().all() and row["throughput.output_tokens_per_s"].notna().all()


def test_latency_vs_load_marks_saturation_instead_of_drawing_it_as_latency(small):
    need("analysis")
    df = llmsim.sweep(long(small), {"workload.arrival.rate": [1, 2, SATURATING_RATE]}, progress=False, jobs=1)
    assert list(df["unstable"]) == [False, False, True]
    ax = llmsim.plot.latency_vs_load(df, y="ttft_ms.p95", sla_ms=2000)
    line = [l for l in ax.get_lines() if l.get_marker() == "o"][0]
    assert list(line.get_xdata()) == [1, 2]  # the saturated load is not drawn as a latency
    assert df["ttft_ms.p95"].iloc[2] not in list(line.get_ydata())
    marks = [l for l in ax.get_lines() if l.get_marker() == "x"]
    assert len(marks) == 1 and list(marks[0].get_xdata()) == [SATURATING_RATE]
    assert any("saturated" in t.get_text() for t in ax.get_legend().get_texts())
    # Frames with query-friendly names plot with the same call.
    flat = llmsim.sweep(long(small), {"workload.arrival.rate": [1, SATURATING_RATE]}, progress=False, jobs=1, sep="_")
    ax = llmsim.plot.latency_vs_load(flat, y="ttft_ms.p95")
    assert [list(l.get_xdata()) for l in ax.get_lines() if l.get_marker() == "o"] == [[1]]


def test_compare_plot_is_a_figure_with_the_winner_the_bill_and_placeholder_prices(small):
    need("analysis")
    small = dict(small, cost={"target_qps": 1.0})
    frame = llmsim.compare(small, gpus=["rtx4090-24gb", "a100-80gb-sxm"], quants=["awq-int4"], replications=1,
                           num_requests=150)
    assert frame["price_is_placeholder"].any()  # the 4090 runs at its catalogue price
    fig = llmsim.plot.compare(frame)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    bills, cost = fig.axes
    assert "placeholder prices" in bills.get_title()
    texts = [t.get_text() for t in bills.texts]
    winner = frame.loc[frame["winner"], "name"].iloc[0]
    assert any("winner" in t and "replica" in t and "/month" in t for t in texts)
    assert any(winner in t.get_text() for t in cost.get_legend().get_texts())
    with pytest.raises(ValueError, match="llmsim.compare"):
        llmsim.plot.compare(pd.DataFrame({"x": [1]}))


def test_plot_labels_claim_an_slo_only_where_one_is_set(small):
    # The class: a label that says "SLO-meeting" or "inside the SLO" on rows whose scenario sets no latency target
    # (their slo_met_note). Their max_qps is the largest stable load and every finished token is priced, and the
    # labels say so in libsim's words (the CLI's compare legend uses the same ones).
    need("analysis")
    with_slo = dict(small, cost={"target_qps": 1.0})
    kw = dict(gpus=["a100-80gb-sxm"], quants=["fp16"], replications=1, num_requests=150)
    for scenario, slo in ((with_slo, True), ({k: v for k, v in with_slo.items() if k != "slo"}, False)):
        frame = llmsim.compare(scenario, **kw)
        assert frame["slo_met_note"].notna().all() == (not slo)
        cost = llmsim.plot.compare(frame).axes[1]
        labels = cost.get_xlabel() + " " + cost.get_ylabel()
        assert ("SLO-meeting" in labels) == slo and ("inside the SLO" in labels) == slo
        if not slo:
            assert "no SLO set" in cost.get_xlabel() and "output tokens" in cost.get_ylabel()


def test_timeline_plot_shows_queue_batch_and_kv_over_time(small):
    need("analysis")
    res = llmsim.simulate(long(small), rate=SATURATING_RATE, time_series=True)
    fig = llmsim.plot.timeline(res)
    assert isinstance(fig, Figure)
    queue, batch, kv = fig.axes[:3]
    series = res.time_series
    waiting = queue.get_lines()[0]
    assert np.allclose(waiting.get_ydata(), series["mean_waiting"])
    assert np.allclose(batch.get_lines()[0].get_ydata(), series["mean_running"])
    assert np.allclose(kv.get_lines()[0].get_ydata(), series["mean_kv_used"])
    assert series["mean_waiting"].iloc[-len(series) // 2] > 10  # the queue built: the figure shows a saturated run
    assert "saturated" in fig._suptitle.get_text()
    with pytest.raises(ValueError, match="time_series=True"):
        llmsim.plot.timeline(llmsim.simulate(small))
