// vLLM's LoRA shrink/expand kernels over a step (perf/lora_kernels.hpp). The wrapped linears' shapes are the memory
// plan's (memory::lora_linears); the traffic per token follows punica_gpu.add_lora_linear: the shrink reads the
// input, its fp32 buffer (slices × rank per token, torch.float32: triton-lang/triton#1387) is zeroed by the shrink op
// (output_tensor.zero_()) and written, the expand reads it and adds into the base layer's output (add_inputs: read
// and written).
#include "llmsim/perf/lora_kernels.hpp"

#include "llmsim/memory/lora_memory.hpp"

namespace llmsim::perf {

namespace {
constexpr double kWeightBytes = 2.0;  // lora_dtype "auto": the model's 16-bit dtype (memory/lora_memory.cpp)
constexpr double kActBytes = 2.0;     // activations in fp16/bf16
constexpr double kBufferBytes = 4.0;  // the shrink's output buffer: float32

void add(LoraStepTerms& t, const std::vector<memory::LoraLinear>& linears, double r, double layers, bool per_slice) {
  for (const memory::LoraLinear& x : linears) {
    const double calls = per_slice ? x.slices : 1;
    t.kernels += 2 * calls * layers;
    t.launches += 3 * calls * layers;
    t.adapter_bytes += layers * r * (x.slices * x.in + x.out) * kWeightBytes;
    t.bytes_per_token += layers * (x.in * kActBytes + 3 * x.slices * r * kBufferBytes + 2 * x.out * kActBytes);
    t.flops_per_token += layers * 2 * r * (x.slices * x.in + x.out);
  }
}
}  // namespace

LoraStepTerms lora_step_terms(const spec::ModelSpec& m, int tp, int rank, bool per_slice) {
  const memory::LoraLayerLinears l = memory::lora_linears(m, tp);
  const double r = rank, moe = m.moe_layers();
  LoraStepTerms t;
  add(t, l.attention, r, m.attention_layers(), per_slice);
  add(t, l.dense_mlp, r, m.num_layers - moe, per_slice);
  add(t, l.shared_mlp, r, moe, per_slice);
  return t;
}

}  // namespace llmsim::perf
