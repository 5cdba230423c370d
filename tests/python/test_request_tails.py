"""scripts/request_tails.py (issue 27): where a measured run's TTFT/ITL tail sits, from its per-request arrays."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "request_tails.py")
spec = importlib.util.spec_from_file_location("request_tails", SCRIPT)
request_tails = importlib.util.module_from_spec(spec)
spec.loader.exec_module(request_tails)


def write(tmp_path, d, name="r.json"):
    p = tmp_path / name
    p.write_text(json.dumps(d))
    return str(p)


def test_a_staggered_burst_shows_its_waves_and_a_lone_first_token(tmp_path):
    # One first token alone, then waves of 3 and 5 a step apart: the frontend's signature.
    ttfts = [0.185, 0.230, 0.235, 0.240, 0.330, 0.332, 0.334, 0.340, 0.345]
    p = write(tmp_path, {"request_rate": "inf", "max_concurrency": None, "ttfts": ttfts,
                         "input_lens": [200] * 9, "output_lens": [50] * 9, "errors": [""] * 9})
    out = request_tails.main([p, "--json"])
    t = out["measured"]["ttft"]
    assert out["burst"]
    assert [w["n"] for w in t["waves"]] == [1, 3, 5]
    assert t["waves"][0]["first"] == pytest.approx(185.0)
    assert t["between_wave_share"] > 0.95  # the spread is between the waves, not within them
    assert t["send_order_rank_correlation"] == pytest.approx(1.0)  # reached the engine in the order sent
    # Sent in the reverse order of their first tokens: the rank correlation says so.
    p_rev = write(tmp_path, {"request_rate": "inf", "ttfts": ttfts[::-1]}, "rev.json")
    assert request_tails.main([p_rev, "--json"])["measured"]["ttft"]["send_order_rank_correlation"] == \
        pytest.approx(-1.0)
    # The same TTFTs from a Poisson run are not read as waves.
    p2 = write(tmp_path, {"request_rate": 4.0, "ttfts": ttfts}, "p.json")
    assert "waves" not in request_tails.main([p2, "--json"])["measured"]["ttft"]


def test_a_length_driven_spread_is_told_apart_from_one_the_prompt_does_not_explain(tmp_path):
    lens = [100, 500, 1000, 2000, 4000]
    driven = write(tmp_path, {"request_rate": 1.0, "ttfts": [0.02 + 1e-4 * x for x in lens], "input_lens": lens})
    fit = request_tails.main([driven, "--json"])["measured"]["ttft"]["length_fit"]
    assert fit["ms_per_1k"] == pytest.approx(100.0) and fit["r2"] == pytest.approx(1.0)
    flat = write(tmp_path, {"request_rate": 1.0, "ttfts": [0.3, 0.1, 0.3, 0.1, 0.3], "input_lens": lens}, "f.json")
    assert request_tails.main([flat, "--json"])["measured"]["ttft"]["length_fit"]["r2"] < 0.2


def test_long_gaps_are_counted_placed_and_grouped_into_global_events(tmp_path):
    # Two requests sent together; both see one 3-step stall at the same wall time, the first also a 2-step merge.
    itls = [[0.05, 0.05, 0.15, 0.05, 0.10, 0.05], [0.05, 0.05, 0.15, 0.05, 0.05, 0.05]]
    p = write(tmp_path, {"request_rate": "inf", "ttfts": [0.1, 0.1], "itls": itls, "output_lens": [7, 7]})
    it = request_tails.main([p, "--json", "--long", "1.5"])["measured"]["itl"]
    assert it["gaps"] == 12 and it["median"] == pytest.approx(50.0)
    assert it["long"] == 3 and it["long_near_integer_multiple"] == 3
    assert it["long_where"] == {"after_first": 0, "last": 0, "middle": 3}
    assert it["long_events"] == 2  # the shared stall is one event, the merge another
    assert it["long_share_of_variance"] > 0.7  # 3 of 12 gaps carry most of it


def test_the_simulated_run_is_read_from_its_requests_csv(tmp_path):
    csv_path = tmp_path / "r.csv"
    csv_path.write_text("id,arrival_s,first_token_s,input_tokens,output_tokens,outcome,warmup\n"
                        "0,0,0.22,200,50,completed,0\n1,0,0.22,300,50,completed,0\n"
                        "2,0,0.5,300,50,failed,0\n3,0,0.9,300,50,completed,1\n")
    p = write(tmp_path, {"request_rate": "inf", "ttfts": [0.2, 0.4]})
    out = request_tails.main([p, "--json", "--sim", str(csv_path)])
    assert out["llmsim"]["ttft"]["n"] == 2  # the failed and the warm-up request are left out
    assert [w["n"] for w in out["llmsim"]["ttft"]["waves"]] == [2]


@pytest.mark.parametrize("content,needle", [
    ("{}", "no per-request 'ttfts'"),
    ('{"ttfts": [0.1, 0.2], "input_lens": [1]}', "'input_lens' has 1 entries"),
    ('{"ttfts": [0.1], "itls": [["x"]]}', "itls[0] is not a list of numbers"),
    ('{"ttfts": [0.1], "request_rate": "fast"}', "request_rate 'fast'"),
    ("not json", "not a JSON result file"),
])
def test_bad_files_name_the_file_and_the_field(tmp_path, content, needle):
    p = tmp_path / "bad.json"
    p.write_text(content)
    r = subprocess.run([sys.executable, SCRIPT, str(p)], capture_output=True, text=True)
    assert r.returncode != 0 and str(p) in r.stderr and needle in r.stderr


# scripts/whatif_handoff.py: the burst re-run with a staggered hand-off (what-if only; the binary is not needed here).
WHATIF = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "whatif_handoff.py")
wspec = importlib.util.spec_from_file_location("whatif_handoff", WHATIF)
whatif_handoff = importlib.util.module_from_spec(wspec)
wspec.loader.exec_module(whatif_handoff)


def test_the_whatif_staggers_the_burst_in_send_order_and_leaves_the_scenario_alone():
    sc = {"workload": {"arrival": {"process": "trace", "requests": [[0.0, 10, 5], [0.0, 20, 6], [0.0, 30, 7]]}}}
    s = whatif_handoff.staggered(sc, 0.1, 0.002)
    assert [r[0] for r in s["workload"]["arrival"]["requests"]] == pytest.approx([0.1, 0.102, 0.104])
    assert [r[1:] for r in s["workload"]["arrival"]["requests"]] == [[10, 5], [20, 6], [30, 7]]
    assert sc["workload"]["arrival"]["requests"][2][0] == 0.0  # a copy
    with pytest.raises(SystemExit, match="for a burst"):
        whatif_handoff.staggered({"workload": {"arrival": {"requests": [[0.0, 1, 1], [0.5, 1, 1]]}}}, 0, 0.001)
    with pytest.raises(SystemExit, match="no inline trace"):
        whatif_handoff.staggered({"workload": {}}, 0, 0.001)


def test_the_whatif_times_ttft_from_the_send_and_tpot_as_the_clients_do():
    rows = [{"outcome": "completed", "warmup": "0", "first_token_s": "0.2", "finish_s": "1.2", "output_tokens": "11"},
            {"outcome": "completed", "warmup": "0", "first_token_s": "0.4", "finish_s": "0.4", "output_tokens": "1"},
            {"outcome": "failed", "warmup": "0", "first_token_s": "9", "finish_s": "9", "output_tokens": "3"}]
    t = whatif_handoff.tails(rows)
    assert t["mean_ttft_ms"] == pytest.approx(300.0)  # both completed requests, from t = 0
    assert t["mean_tpot_ms"] == pytest.approx(100.0) and t["std_tpot_ms"] == 0  # the 1-token reply has no TPOT
