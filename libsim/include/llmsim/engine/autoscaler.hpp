#pragma once
// What an added replica waits before it serves: the cold start. Public so the analysis layer's cold-start
// figure and the autoscaler's default delay are one rule.
#include <cstdint>

#include "llmsim/spec/scenario.hpp"

namespace llmsim::engine {

/// Seconds to read `weight_bytes` at `gbps` Gbit/s (80 GB over 1 Gbps = 640 s, the field guides' example).
/// ConfigError at `field` when gbps is not > 0.
double weight_load_s(double weight_bytes, double gbps, const char* field = "cost.network_gbps");

/// A started replica's cold start, the one rule behind every output that quotes one (`cost.cold_start_s` of
/// simulate, capacity, compare and their rows, and the autoscaler's delay): autoscaler.scale_up_delay_s when given,
/// else the replica's weights (all its GPUs' shards) read at autoscaler.load_gbps (0, or no autoscaler:
/// cost.network_gbps) plus the engine start, autoscaler.engine_start_s (process start, torch.compile, CUDA-graph
/// capture; docs/engine.md cites it; without an autoscaler its default, spec::AutoscalerSpec::engine_start_s).
double cold_start_s(const spec::ResolvedScenario& scenario);

/// The autoscaler's start-to-ready delay of one replica: cold_start_s(); 0 without an autoscaler.
double scale_up_delay_s(const spec::ResolvedScenario& scenario);

}  // namespace llmsim::engine
