"""The ShareGPT dataset workload from Python: the same C++ draws as the CLI (workload.dataset), as a scenario field
or a keyword override, with bad values as a ValueError naming the field."""
import copy

import pytest

import llmsim
from conftest import SMALL


def _sharegpt(**dataset):
    sc = copy.deepcopy(SMALL)
    sc["workload"] = {"arrival": {"process": "poisson", "rate": 2.0}, "dataset": {"name": "sharegpt", **dataset},
                      "num_requests": 300, "warmup_requests": 0, "seed": 5}
    return sc


def test_sharegpt_lengths_spread_around_the_given_means():
    r = llmsim.simulate(_sharegpt(input_mean=250, output_mean=150), record_requests=True)
    req = r.requests
    assert len(req) == 300
    assert req["input_tokens"].mean() == pytest.approx(250, rel=0.1)
    assert req["output_tokens"].mean() == pytest.approx(150, rel=0.1)
    assert req["input_tokens"].min() >= 4 and req["input_tokens"].max() <= 1024
    assert (req["input_tokens"] + req["output_tokens"]).max() <= 2048
    assert req["output_tokens"].std() > 30  # spread, not the mean for every request
    # Seeded: the same scenario draws the same requests.
    again = llmsim.simulate(_sharegpt(input_mean=250, output_mean=150), record_requests=True).requests
    assert list(again["input_tokens"]) == list(req["input_tokens"])


def test_sharegpt_as_a_keyword_override():
    sc = copy.deepcopy(SMALL)
    sc["workload"]["num_requests"], sc["workload"]["warmup_requests"] = 60, 0
    r = llmsim.simulate(sc, record_requests=True, workload__dataset="sharegpt")
    # The dataset replaces the scenario's lengths (a fixed 128-token reply): the replies now spread.
    assert r.requests["output_tokens"].nunique() > 10
    assert (r.requests["input_tokens"] + r.requests["output_tokens"]).max() <= 2048


def test_sharegpt_bad_mean_is_a_value_error():
    with pytest.raises(ValueError, match="workload.dataset.input_mean"):
        llmsim.simulate(_sharegpt(input_mean=2000))
    with pytest.raises(ValueError, match="workload.dataset.name"):
        llmsim.simulate(_sharegpt(name="alpaca"))
