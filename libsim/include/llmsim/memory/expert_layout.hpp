#pragma once
// The routed experts of an MXFP4 checkpoint (gpt-oss) as vLLM holds them on a GPU (issue 27, docs/cost-model.md
// "MoE kernels"): which kernel `get_mxfp4_backend` (quantization/mxfp4.py) picks by release and card, and the padded
// shape `Mxfp4MoEMethod.create_weights` allocates for it. One rule for both readers: the memory plan (the padded
// experts are resident, so they come out of the KV cache) and the cost model (they are streamed and multiplied).
#include <string>

#include "llmsim/spec/gpu_spec.hpp"
#include "llmsim/spec/quantization.hpp"

namespace llmsim::memory {

/// One routed expert's GEMM dimensions on one GPU as the kernel holds them: hidden (K of gate_up, N of down) and the
/// expert's intermediate width per tensor-parallel rank (N/2 of gate_up, K of down).
struct ExpertLayout {
  double hidden = 0;
  double intermediate = 0;
  double matrices = 3;  ///< gate, up and down; 2 for a non-gated expert (Nemotron-H's relu²: up and down)
  /// Parameters of one expert as stored and streamed: its matrices over the padded dimensions.
  double params() const { return matrices * hidden * intermediate; }
};

/// The kernel vLLM's get_mxfp4_backend (quantization/mxfp4.py) runs an MXFP4 checkpoint's experts on, by release
/// (spec::QuantKernels) and GPU (docs/cost-model.md "MoE kernels"):
enum class Mxfp4MoeKernel {
  none,        ///< not an MXFP4 format
  marlin,      ///< weight-only FP4 Marlin: Ampere, Ada, and Hopper while triton_kernels did not import (vLLM < 0.12)
  triton,      ///< triton_kernels' matmul_ogs on Hopper (sm90), bundled from vLLM 0.12.0 (vllm#28788)
  flashinfer,  ///< FlashInfer's block-scaled FP4 MoE (Blackwell, FP4 tensor cores)
};
std::string to_string(Mxfp4MoeKernel k);
/// `format` as it runs on `gpu` (spec::format_for_gpu) under the release's `kernels`.
Mxfp4MoeKernel mxfp4_moe_kernel(const spec::WeightFormat& format, const spec::QuantKernels& kernels,
                                const spec::GpuSpec& gpu);

/// vLLM's Mxfp4MoEMethod.create_weights pads the experts of an MXFP4 checkpoint (gpt-oss) to what its kernel needs:
/// * FP4 Marlin: "the moe marlin kernel requires that for each linear n % 256 == 0 and k % 128 == 0" — intermediate
///   per rank rounded up to 128, hidden to 256;
/// * Triton's matmul_ogs (the `else` branch): intermediate per rank rounded up to 64, hidden as it is;
/// * FlashInfer's block-scaled FP4 MoE (Blackwell, FP4 tensor cores): both rounded up to 256.
/// Other formats (and MXFP4 dims already aligned) are returned unchanged. `kernel` is mxfp4_moe_kernel's answer;
/// `intermediate_per_gpu` the expert's width divided by the TP degree.
/// gpt-oss-120b at TP 4: 2880 x 720 -> 3072 x 768 on Marlin (13.8 % more expert bytes and FLOPs per token),
/// 2880 x 768 on Triton (6.7 %).
ExpertLayout expert_layout(double hidden, double intermediate_per_gpu, Mxfp4MoeKernel kernel);

}  // namespace llmsim::memory
