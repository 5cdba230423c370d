// vLLM's sparse MLA for DeepSeek-V3.2's DSA (docs/cost-model.md, "Sparse attention (DeepSeek-V3.2)"): the
// FLASHMLA_SPARSE backend runs every token, prefill and decode alike, through FlashMLA's sparse kernel in MQA mode
// (576-wide query/key over the latent, 512-wide value) over all index_topk slots of its indexer's list, with the
// query heads padded to the kernel's tile.
#pragma once

#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/gpu_spec.hpp"
#include "llmsim/spec/model_spec.hpp"

namespace llmsim::perf {

/// Whether vLLM runs `m`'s attention on FLASHMLA_SPARSE on `gpu`: a model with a DSA indexer (index_topk > 0) on MLA
/// under a vLLM V1 runtime on Hopper or Blackwell (FlashMLASparseBackend.supports_compute_capability: 9.x, 10.x).
bool vllm_flashmla_sparse(const spec::ModelSpec& m, const spec::GpuSpec& gpu, spec::Runtime runtime);

/// The query heads the sparse kernel computes for `heads` heads on one rank: vLLM's FlashMLASparseImpl pads them to
/// the kernel's head tile (64 on Hopper, 128 on Blackwell) when they are fewer (TP 8: 16 -> 64).
int flashmla_sparse_padded_heads(int heads, const spec::GpuSpec& gpu);

/// The head tile vLLM pads to (provenance: sparse_mla.head_tile_sm90 / _sm100).
inline constexpr int kSparseMlaHeadTileSm90 = 64, kSparseMlaHeadTileSm100 = 128;

/// The kernel's rate as a fraction of the GPU's dense BF16 peak: FlashMLA's README, sparse prefill forward "up to 640
/// TFlops" on H800 SXM5 (989.4 dense) and "1450 TFlops on B200" (2,250 dense) (provenance: sparse_mla.efficiency_*).
double flashmla_sparse_efficiency(const spec::GpuSpec& gpu);

/// FLOPs of one query token in one layer: QK^T over `qk_dim` and PV over `v_dim` for every one of the `topk` slots and
/// `padded_heads` heads. The kernel loops over all topk / 64 index blocks (no per-row length in vLLM's call) and masks
/// the -1 slots of a context shorter than topk: it computes them, it only skips their loads.
double sparse_mla_flops_per_token(int padded_heads, int topk, double qk_dim, double v_dim);

}  // namespace llmsim::perf
