#pragma once
// A pool: a group of replicas of one card type and layout inside a larger deployment (a heterogeneous fleet's
// member; a disaggregated deployment's prefill or decode side), written like the hardware section plus optional
// engine overrides.
#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::spec {

/// `base` with its hardware replaced by `hw` and `engine_patch` (when non-null: an RFC 7386 merge patch of the
/// engine section) applied, resolved like any scenario. Throws ConfigError with the scenario's own paths
/// ("hardware.gpu", "engine.max_num_seqs"); callers prefix the pool's place.
ResolvedScenario resolve_pool(const Scenario& base, const Deployment& hw, const Json* engine_patch,
                              const Catalog& catalog);

}  // namespace llmsim::spec
