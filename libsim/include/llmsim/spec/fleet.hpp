#pragma once
// A heterogeneous fleet (hardware.fleet): pools of different card types and layouts behind one router.
#include "llmsim/spec/scenario.hpp"

namespace llmsim::spec {

class Catalog;

/// Resolves every member with resolve_pool(); the result describes the fleet as a whole: `fleet` holds the
/// members, the top-level model/gpu/quant/engine are the first member's (the model and workload are shared),
/// price_per_gpu_hour is the GPU-weighted mean price (so price × total_gpus() is the fleet's GPU rent per hour).
/// ConfigError naming hardware.fleet[i] for a bad member; a fleet with an autoscaler, failures or the synthetic
/// service is refused (not modelled).
ResolvedScenario resolve_fleet(const Scenario& s, const Catalog& catalog);

}  // namespace llmsim::spec
