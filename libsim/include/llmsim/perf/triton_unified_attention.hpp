// vLLM's Triton unified attention kernel as it prefills (docs/cost-model.md, "Triton unified attention for attention
// sinks"): the backend vLLM V1 picks on Ampere and Ada for a model with attention sinks (gpt-oss), whose Q-block of
// BLOCK_M rows packs BLOCK_M / (query heads per KV head) query tokens, so every K/V tile it reads from the L2 serves
// only that many tokens.
#pragma once

#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/gpu_spec.hpp"
#include "llmsim/spec/model_spec.hpp"

namespace llmsim::perf {

/// Whether vLLM runs `m`'s attention on its Triton unified kernel on `gpu`: a model with attention sinks (gpt-oss) under
/// a vLLM V1 runtime on a GPU below Hopper. vllm/platforms/cuda.py (0.10.x) `if has_sink and not
/// cls.is_device_capability(90): return TRITON_ATTN_VLLM_V1`; from 0.11 the priority list skips FLASH_ATTN
/// (fa_utils.flash_attn_supports_sinks(): FA3 only, sm90) and FLASHINFER (sinks only with its TRT-LLM kernels, sm100).
bool vllm_triton_unified_prefill(const spec::ModelSpec& m, const spec::GpuSpec& gpu, spec::Runtime runtime);

/// The Q-block's least row count (provenance: triton_unified_attention.block_m).
inline constexpr int kTritonUnifiedBlockM = 16;

/// The kernel's Q-block: BLOCK_M = 16 rows when a KV head has at most 16 query heads, else the next power of two
/// (triton_attn.py / triton_unified_attention.py `unified_attention`), BLOCK_Q = BLOCK_M / queries per KV head tokens.
int triton_unified_block_q(int query_heads_per_kv);

/// L2 bytes the 2D kernel reads per causal query-key token pair and layer: each Q-block of BLOCK_Q tokens reads the K
/// and V of every key it attends to, for each of `kv_heads` KV heads (its grid is q-blocks × KV heads).
double triton_unified_l2_bytes_per_pair(double kv_heads, double head_dim, double kv_bytes, int query_heads_per_kv);

}  // namespace llmsim::perf
