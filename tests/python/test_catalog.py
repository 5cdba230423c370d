import pytest

import llmsim


def test_all_areas_built():
    assert set(llmsim._core.areas) >= {"spec", "memory", "step", "engine", "analysis"}


def test_gpus_frame():
    g = llmsim.catalog.gpus()
    assert {"rtx4090-24gb", "rtx4090-48gb", "a100-80gb-sxm", "h100-80gb-sxm"} <= set(g.index)
    # The 48 GB modded 4090 keeps the 24 GB card's bus: same bandwidth, twice the memory.
    assert g.loc["rtx4090-48gb", "memory_bandwidth_gb_per_s"] == g.loc["rtx4090-24gb", "memory_bandwidth_gb_per_s"]
    assert g.loc["a100-80gb-sxm", "memory_bandwidth_gb_per_s"] > g.loc["a100-80gb-pcie", "memory_bandwidth_gb_per_s"]
    # Issue 30: the dense FP4 tensor peak, 0 where the card has no FP4 path.
    assert g.loc["b200-180gb-sxm", "fp4_tflops"] == 9000
    assert g.loc["rtxpro6000-96gb", "fp4_tflops"] == 2000
    assert g.loc["h100-80gb-sxm", "fp4_tflops"] == 0
    assert g.loc["h20-96gb", "bf16_tflops"] == 148
    # Issue 27: power-limited boards hold a lower clock under sustained tensor work; None where not measured below boost.
    assert g.loc["a100-40gb-pcie", "sustained_tensor_clock_mhz"] == 1180
    assert g.loc["a100-40gb-pcie", "boost_clock_mhz"] == 1410
    assert g.loc["l40s-48gb", "sustained_tensor_clock_mhz"] < g.loc["l40s-48gb", "boost_clock_mhz"]
    assert g["sustained_tensor_clock_mhz"].isna()["a100-40gb-sxm"]


def test_models_frame():
    m = llmsim.catalog.models()
    assert m.loc["llama-3.1-8b", "kv_bytes_per_token_fp16"] == 131072  # 2 x 32 x 8 x 128 x 2
    assert 7.9e9 < m.loc["llama-3.1-8b", "params"] < 8.2e9
    assert m.loc["mixtral-8x7b", "active_params"] < m.loc["mixtral-8x7b", "params"]


def test_quants_frame():
    q = llmsim.catalog.quants()
    assert q.loc["fp16", "bits_per_weight"] == 16
    assert 4 < q.loc["awq-int4", "bits_per_weight"] < 5  # group scales and zeros count


def test_hf_config_loader_matches_catalogue():
    m = llmsim.catalog.models()
    entry = llmsim.load_hf_config(llmsim.resolve({"model": "llama-3.1-8b"})["model"]["config"], id="mine")
    assert entry["id"] == "mine"
    assert entry["params"] == m.loc["llama-3.1-8b", "params"]
    assert entry["kv_bytes_per_token_fp16"] == 131072
    assert entry["config"]["hidden_size"] == 4096


def test_hf_config_loader_rejects_incomplete():
    cfg = llmsim.resolve({"model": "llama-3.1-8b"})["model"]["config"]
    del cfg["hidden_size"]
    with pytest.raises(ValueError, match="hidden_size"):
        llmsim.load_hf_config(cfg, id="broken")


def test_gpu_spec_loader():
    spec = llmsim.resolve({"hardware": {"gpu": "a100-80gb-sxm"}})["gpu"]
    spec["id"] = "my-a100"
    out = llmsim.load_gpu_spec(spec)
    assert out["id"] == "my-a100"
    spec["memory_bandwidth_gb_per_s"] = -1
    with pytest.raises(ValueError, match="memory_bandwidth"):
        llmsim.load_gpu_spec(spec)


def test_inline_gpu_and_model_dicts_act_like_catalogue_ids():
    r = llmsim.resolve({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm"}})
    gpu = dict(r["gpu"], id="my-a100")
    by_id = llmsim.memory(model="llama-3.1-8b", gpu="a100-80gb-sxm")
    inline = llmsim.memory({"model": r["model"]["config"], "hardware": {"gpu": gpu}})
    assert inline["fits"] and by_id["fits"]
    assert inline["kv_capacity_tokens"] == by_id["kv_capacity_tokens"]
    assert inline["per_gpu"]["weights_bytes"] == by_id["per_gpu"]["weights_bytes"]
