"""pytest fixtures for the llmsim package, run against the real compiled module (ctest: python.pytest)."""
import copy
import os

import pytest

import llmsim

SMALL = {
    "model": "llama-3.1-8b",
    "quant": {"weights": "fp16", "kv_cache": "fp16"},
    "hardware": {"gpu": "a100-80gb-sxm", "tp": 1, "replicas": 1, "price_per_gpu_hour": 1.8},
    # vLLM V1 (the default policy) plans for the model's whole context unless told otherwise; 24 GB cards need this.
    "engine": {"max_model_len": 8192},
    "workload": {"arrival": {"process": "poisson", "rate": 2.0},
                 "input_tokens": {"dist": "lognormal", "mean": 512, "sigma": 0.8},
                 "output_tokens": {"dist": "fixed", "value": 128},
                 "num_requests": 150, "warmup_requests": 15, "seed": 7},
    "slo": {"ttft_ms": {"p95": 2000}, "tpot_ms": {"p95": 100}},
}


def need(area):
    if not hasattr(llmsim._core, area):
        pytest.fail(f"llmsim._core was built without the '{area}' area (built: {list(llmsim._core.areas)})")


@pytest.fixture
def small():
    return copy.deepcopy(SMALL)


@pytest.fixture
def cli():
    path = os.environ.get("LLMSIM_CLI")
    if not path or not os.path.exists(path):
        pytest.skip("LLMSIM_CLI not set (ctest sets it when the CLI is built)")
    return path


@pytest.fixture(scope="session")
def dask_client():
    """A real Dask LocalCluster, two worker processes, shared by the tests that compare a run on it with the threaded
    one: starting a cluster (two Python processes importing distributed, pandas and llmsim) was ~2 s of CPU each
    time, three times per pytest run (issue 30). Each test still sends its work to the two worker processes."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        yield client
