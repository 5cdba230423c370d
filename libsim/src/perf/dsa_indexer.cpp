#include "llmsim/perf/dsa_indexer.hpp"

#include "llmsim/perf/hardware_profile.hpp"

namespace llmsim::perf {

bool vllm_deepgemm_indexer(const spec::ModelSpec& m, const spec::GpuSpec& gpu, spec::Runtime runtime) {
  return m.index_head_dim > 0 && runtime == spec::Runtime::vllm_v1 && hopper_class(gpu_family(gpu)) &&
         gpu.fp8_flops > 0;
}

double deepgemm_mqa_logits_rate(const spec::GpuSpec& gpu) { return gpu.fp8_flops * kMqaLogitsEfficiency; }

}  // namespace llmsim::perf
