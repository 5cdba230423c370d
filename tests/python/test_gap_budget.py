"""scripts/gap_budget.py (issue 27): a simulated run's ITL variance split by what each gap spans."""
import importlib.util
import os
import subprocess
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "gap_budget.py")
spec = importlib.util.spec_from_file_location("gap_budget", SCRIPT)
gap_budget = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gap_budget)


def steps(kinds, d=0.05, p=0.2):
    """Iterations back to back: 'd' decode-only (d s), 'p' prefill-only (p s), 'm' mixed (p s)."""
    out, t = [], 0.0
    for k in kinds:
        dur = d if k == "d" else p
        out.append({"start_s": t, "duration_s": dur, "prefill_seqs": int(k in "pm"), "decode_seqs": int(k in "dm")})
        t += dur
    return out


def ends(its):
    return [r["start_s"] + r["duration_s"] for r in its]


def test_a_prefill_step_between_decodes_is_a_stall_and_carries_the_variance():
    its = steps("ddddpdddd")
    e = ends(its)
    # First token at the end of step 0; 8 more tokens at the other decode steps' ends.
    req = [{"first_token_s": e[0], "finish_s": e[8], "output_tokens": 8, "preemptions": 0}]
    g = gap_budget.budget(req, its)
    assert len(g["stall"]) == 1 and g["stall"][0] == pytest.approx(250.0)  # the prefill step plus a decode
    assert len(g["decode"]) == 6 and all(x == pytest.approx(50.0) for x in g["decode"])
    text, out = gap_budget.report(g)
    assert "stall" in text and out["gaps"] == 7
    stall_var = (250.0 - out["mean"]) ** 2
    assert stall_var > 0.8 * out["variance_sum"]  # one stall outweighs six regular gaps


def test_mixed_steps_and_a_preempted_request_are_counted_apart():
    its = steps("dmdmdddddd")
    e = ends(its)
    req = [{"first_token_s": e[0], "finish_s": e[4], "output_tokens": 5, "preemptions": 0},
           # Preempted: 3 tokens over a span that its steps' mean gap would cover in far less time.
           {"first_token_s": e[0], "finish_s": e[9], "output_tokens": 3, "preemptions": 1}]
    g = gap_budget.budget(req, its)
    assert len(g["mixed"]) == 2 and len(g["decode"]) == 2
    assert len(g["preempted"]) == 1 and g["preempted"][0] > 0


def test_measured_spread_gives_the_size_and_count_of_the_missing_events():
    its = steps("d" * 101)
    e = ends(its)
    req = [{"first_token_s": e[0], "finish_s": e[100], "output_tokens": 101, "preemptions": 0}]
    g = gap_budget.budget(req, its)
    # Simulated: 100 gaps of 50 ms. Measured: same median, the mean 10 ms higher, std 300 ms.
    _, out = gap_budget.report(g, (60.0, 50.0, 300.0))
    assert out["missing"] == pytest.approx(300.0 ** 2 * 100, rel=1e-6)
    assert out["tail"] == pytest.approx(1000.0, rel=1e-6)  # 10 ms a gap over 100 gaps
    # Events carrying both: 9e6 / 1e3 = 9 s long, 1000 / 9000 of one.
    text, _ = gap_budget.report(g, (60.0, 50.0, 300.0))
    assert "9.0 s each" in text


def test_bad_inputs_name_the_file_and_column(tmp_path):
    r = tmp_path / "r.csv"
    i = tmp_path / "i.csv"
    r.write_text("first_token_s,finish_s,output_tokens,preemptions\n0.1,x,3,0\n")
    i.write_text("start_s,duration_s,prefill_seqs,decode_seqs\n0,0.05,0,1\n")
    p = subprocess.run([sys.executable, SCRIPT, str(r), str(i)], capture_output=True, text=True)
    assert p.returncode != 0 and "r.csv: row 2: column 'finish_s'" in p.stderr
    i.write_text("start_s,duration_s\n0,0.05\n")
    p = subprocess.run([sys.executable, SCRIPT, str(r), str(i)], capture_output=True, text=True)
    assert p.returncode != 0 and "missing columns" in p.stderr and "i.csv" in p.stderr
    p = subprocess.run([sys.executable, SCRIPT, str(r), str(i), "--measured", "1,2"], capture_output=True, text=True)
    assert p.returncode != 0 and "--measured" in p.stderr
