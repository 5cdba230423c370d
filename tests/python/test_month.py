"""A daily profile on an autoscaled fleet through Python: the scenario fields pass through the scenario JSON, the
per-hour table comes from C++ (Result.fleet_hours), bad input is a ValueError naming the field."""
import pytest

import llmsim
from conftest import need

SHAPE = [0.3, 0.2, 0.2, 0.2, 0.2, 0.3, 0.5, 0.8, 1.2, 1.5, 1.6, 1.7,
         1.7, 1.7, 1.8, 1.9, 1.8, 1.5, 1.2, 1.0, 0.9, 0.7, 0.5, 0.4]


def day(small, rate=0.05):
    sc = dict(small)
    sc["workload"] = dict(small["workload"], arrival={"process": "poisson", "rate": rate}, daily_profile=SHAPE,
                          output_tokens={"dist": "fixed", "value": 16}, warmup_requests=0)
    del sc["workload"]["num_requests"]
    sc["autoscaler"] = {"min_replicas": 1, "max_replicas": 3, "queue_per_replica": 1, "scale_up_delay_s": 120}
    return sc


def test_a_day_has_an_hourly_fleet_table(small):
    need("analysis")
    r = llmsim.simulate(day(small))
    hours = r.fleet_hours
    assert len(hours) >= 24
    assert list(hours["hour"][:3]) == [0.0, 1.0, 2.0]
    # The afternoon brings about 1.9 / 0.2 = 9.5x the night's arrivals.
    assert hours["arrivals"][15] > 4 * hours["arrivals"][3]
    assert hours["completed"].sum() == r["completed_requests"]
    f = r["fleet"]
    assert f["autoscaled"] and f["replica_hours"] >= 24 * 0.99
    assert r["cost"]["period"] == pytest.approx(1.8 * f["replica_hours"])


def test_bad_profiles_and_autoscalers_name_the_field(small):
    sc = day(small)
    sc["workload"]["daily_profile"] = SHAPE[:23]
    with pytest.raises(ValueError, match=r"workload\.daily_profile.*got 23"):
        llmsim.simulate(sc)
    sc = day(small)
    sc["autoscaler"]["min_replicas"] = 5
    with pytest.raises(ValueError, match=r"autoscaler\.min_replicas"):
        llmsim.simulate(sc)
