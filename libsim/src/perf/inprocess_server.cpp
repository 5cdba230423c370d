// The OpenAI server's per-output work on a pre-0.6 vLLM engine's event loop; the value's derivation in
// perf/inprocess_server.hpp and perf/provenance_engine.cpp (runtime.served_step_per_seq_s), the reasoning in
// docs/cost-model.md "Pre-0.6: the API server on the engine's event loop".
#include "llmsim/perf/inprocess_server.hpp"

namespace llmsim::perf {

static_assert(inprocess_server::derived_per_output_s() > 0.9 * inprocess_server::kPerOutputS &&
                  inprocess_server::derived_per_output_s() < 1.1 * inprocess_server::kPerOutputS,
              "kPerOutputS is vllm#6883's derivation rounded");

double inprocess_server_per_output_s(Runtime r) {
  switch (r) {
    case Runtime::vllm_v0_sync:
    case Runtime::vllm_v0_paged:
      return inprocess_server::kPerOutputS;
    default:
      return 0;
  }
}

}  // namespace llmsim::perf
