// vLLM's LoRA shrink/expand kernels per layer (perf/lora_kernels.hpp): shapes from vllm/lora/layers
// (column_parallel_linear.py: qkv in three slices, gate_up in two, input whole and output sharded; row_parallel_linear.py:
// o and down with the input sharded and the output whole) and the punica wrapper's fp32 shrink buffer
// (punica_gpu.add_lora_linear: buffer of tokens × rank per slice, float32).
#include "llmsim/perf/lora_kernels.hpp"

#include <algorithm>

namespace llmsim::perf {

namespace {
constexpr double kWeightBytes = 2.0;  // lora_dtype "auto": the model's 16-bit dtype
constexpr double kActBytes = 2.0;     // activations in bf16/fp16
constexpr double kBufferBytes = 4.0;  // the shrink output: torch.float32 (punica_gpu.py)
}  // namespace

LoraLayerTerms lora_layer_terms(const spec::ModelSpec& m, int tp, int rank, bool with_mlp) {
  const double r = rank, h = m.hidden_size, t = tp;
  const double q = static_cast<double>(m.num_heads) * m.head_dim / t;
  const double kv = std::max(1.0, static_cast<double>(m.num_kv_heads) / t) * m.head_dim;
  const double inter = static_cast<double>(m.intermediate_size) / t;
  LoraLayerTerms terms;
  // One linear: `slices` A panels of rank × in, B of out × rank; shrink reads the input, writes slices × rank fp32;
  // expand reads them back and adds into the output (read and write).
  auto linear = [&](double in, double out, int slices) {
    terms.kernels += 2;
    terms.adapter_bytes += (slices * r * in + out * r) * kWeightBytes;
    terms.bytes_per_token += in * kActBytes + 2 * slices * r * kBufferBytes + 2 * out * kActBytes;
    terms.flops_per_token += 2 * r * (slices * in + out);
  };
  linear(h, q + 2 * kv, 3);  // qkv_proj: q, k, v
  linear(q, h, 1);           // o_proj
  if (with_mlp) {
    linear(h, 2 * inter, 2);  // gate_up_proj
    linear(inter, h, 1);      // down_proj
  }
  return terms;
}

}  // namespace llmsim::perf
