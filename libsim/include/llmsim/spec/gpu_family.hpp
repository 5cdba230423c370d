#pragma once
// The GPU families whose kernels and defaults differ, read from a GpuSpec alone. Here in spec (not perf) because the
// memory plan needs it too: which MoE kernel vLLM picks, and so how it pads the experts it holds, depends on it.
#include "llmsim/spec/gpu_spec.hpp"

namespace llmsim::spec {

/// HBM data-centre Ampere (A100/A800/A30, anything with MIG but no FP8), Hopper-class HBM parts with FP8 tensor
/// cores (H100/H200/H20/GH200), Blackwell HBM parts with FP4 tensor cores (B200, GB200: Hopper's priors carried over
/// except where a Blackwell measurement differs, docs/cost-model.md "Blackwell HBM"), and everything else (GDDR
/// GeForce/workstation/inference cards: 3090, 4090, 5090, L4, L20, L40S, A10, RTX 6000 Ada, RTX PRO 6000 Blackwell —
/// the last has MIG but is GDDR).
enum class GpuFamily { ampere_hbm, hopper_hbm, gddr, blackwell_hbm };
GpuFamily gpu_family(const GpuSpec& gpu);

}  // namespace llmsim::spec
