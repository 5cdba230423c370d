#pragma once
// What the replicas measured, into the summary (private to the engine): utilisation (MFU, MBU), KV use, the
// batch size reached, and the saturation throughput.
#include <cstdint>
#include <vector>

#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/metrics/summary.hpp"
#include "llmsim/spec/scenario.hpp"
#include "replica.hpp"

namespace llmsim::engine::detail {

struct RunFacts {
  const spec::ResolvedScenario& rs;
  const memory::MemoryPlan& plan;
  const std::vector<Replica>& replicas;
  std::int32_t engines_per_group;
  const std::vector<double>& kv_integral_at_window;  ///< per replica, ∫ KV used dt at the measured window's start
  double peak_kv_fraction;
  double end_s;
};

/// Fills summary.mfu/mbu, kv, batch and saturation (summary.duration_s must be set).
void fill_engine(metrics::Summary& summary, const RunFacts& facts);

}  // namespace llmsim::engine::detail
