"""Session workloads from Python: the same per-turn summary as the CLI, and a capacity in sessions/s."""
import copy

import pytest

import llmsim
from conftest import SMALL


def _sessions(rate=0.5, n=400):
    sc = copy.deepcopy(SMALL)
    sc["workload"] = {"arrival": {"process": "poisson", "rate": rate},
                      "sessions": {"preset": "chat", "turns": {"dist": "fixed", "value": 4}},
                      "num_requests": n, "warmup_requests": 40, "seed": 3}
    return sc


def test_sessions_summary_by_turn():
    s = llmsim.simulate(_sessions()).summary
    ss = s["sessions"]
    turns = ss["by_turn"]
    assert [t["turn"] for t in turns] == [1, 2, 3, 4]
    assert sum(t["completed"] for t in turns) == s["completed_requests"]
    # Later turns carry the history: longer prompts, most of them cached.
    assert turns[3]["mean_input_tokens"] > turns[0]["mean_input_tokens"]
    assert turns[3]["prefix_hit_rate"] > 0.5
    assert ss["requests_per_s"] == pytest.approx(s["offered"]["requests_per_s"])
    assert ss["turns_per_session"] <= 4


def test_sessions_without_prefix_caching_hit_nothing():
    sc = _sessions()
    sc["engine"]["enable_prefix_caching"] = False
    ss = llmsim.simulate(sc).summary["sessions"]
    assert ss["prefix_hit_rate"] == 0


def test_sessions_bad_field_is_a_value_error():
    sc = _sessions()
    sc["workload"]["sessions"]["user_tokens"] = {"dist": "fixed", "value": 0}
    with pytest.raises(ValueError, match="workload.sessions.user_tokens"):
        llmsim.simulate(sc)
