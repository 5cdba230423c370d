// When vLLM V0 sends a step's outputs: the reasoning and sources in perf/output_delivery.hpp and docs/cost-model.md
// "Runtimes" (provenance row runtime.outputs_sent_at_launch).
#include "llmsim/perf/output_delivery.hpp"

namespace llmsim::perf {

double outputs_sent_after_s(const CostModel& cost, std::int64_t seqs, double transfer_s) {
  return transfer_s + cost.host_time(seqs);
}

}  // namespace llmsim::perf
