#pragma once
// A pool: a group of replicas of one card type and layout inside a scenario (a disaggregated prefill or decode
// pool, a member of a heterogeneous fleet). Written exactly like the `hardware` section, plus an optional `engine`
// object of overrides (an RFC 7386 JSON merge patch onto the scenario's `engine`).
#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::spec {

class Catalog;

/// The scenario `base` served by the pool `hw` with `engine_patch` (null = the scenario's engine as is) merged onto
/// its engine: a copy of `base` with `hardware` replaced and the patch applied, resolved by resolve(). Model, quant,
/// workload, SLO and cost stay the scenario's. Throws ConfigError (paths as resolve() names them: "hardware.gpu",
/// "engine.max_num_seqs").
ResolvedScenario resolve_pool(const Scenario& base, const Deployment& hw, const Json* engine_patch, const Catalog& catalog);

}  // namespace llmsim::spec
