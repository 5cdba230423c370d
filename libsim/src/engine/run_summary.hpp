#pragma once
// What the replicas measured, into the summary (private to the engine): utilisation (MFU, MBU), KV use, the
// batch size reached, and the saturation throughput.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/metrics/summary.hpp"
#include "llmsim/spec/scenario.hpp"
#include "replica.hpp"

namespace llmsim::engine::detail {

struct RunFacts {
  const spec::ResolvedScenario& rs;
  const memory::MemoryPlan& plan;
  std::span<const Replica> replicas;  ///< the deployment's, or one pool's slice of them
  std::int32_t engines_per_group;
  std::span<const double> kv_integral_at_window;  ///< per replica, ∫ KV used dt at the measured window's start
  double peak_kv_fraction;
  double end_s;
};

/// summary.engine: the scheduler, and what else prices the run when the scenario set it: a release or a runtime other
/// than the scheduler's own (runtime vllm==0.6.3 under policy "vllm" is V1's scheduler on V0's host loop and
/// kernels), and V1's async scheduling (`pp` pipeline stages). The default V1 engine reads "vLLM V1 (0.11 scheduler)".
std::string engine_label(const spec::EngineConfig& e, int pp);

/// Fills summary.mfu/mbu, kv, batch and saturation (summary.duration_s must be set).
void fill_engine(metrics::Summary& summary, const RunFacts& facts);

/// Requests per second of one engine while saturated (× the engines for a deployment): 1 / the seconds a request's
/// work takes at the saturated steps' pace — mean output × their decode seconds per token emitted + prompt tokens
/// computed per request × their prefill seconds per prompt token (SaturationTotals::prefill_s). `prompt_computed`
/// and `emitted`: the whole run's prompt tokens computed and tokens emitted, every request's (their ratio sets the
/// prompt tokens a request costs); `run`: the measured requests' achieved rates (mean output). 0 when nothing was
/// emitted while saturated or no request completed.
double saturated_request_rate(const SaturationTotals& t, double prompt_computed, double emitted,
                              const metrics::Throughput& run);

/// A disaggregated pool's or a fleet member's entry from `measured`, the run's summary with fill_engine applied to the
/// pool's replicas alone; `rs` the pool's scenario. Its saturation rate is saturated_request_rate's (a prefill pool,
/// which emits none, replaces it with its prompt side).
metrics::PoolSummary pool_summary(std::string role, const spec::ResolvedScenario& rs, const metrics::Summary& measured);

/// A heterogeneous fleet (after fill_engine over all its replicas): its MFU, MBU and busy fraction from each member's
/// work against its own card's peaks, GPUs and replicas, summed over the fleet; each member's own measures
/// (summary.fleet_pools); and kv.capacity_tokens, the smallest member's. facts: one per member, its slice of the
/// replicas.
void fill_fleet(metrics::Summary& summary, std::span<const RunFacts> members);

}  // namespace llmsim::engine::detail
