#pragma once
// Multi-GPU scaling efficiency as the field guides define it (002 §6.2, 多卡扩展效率 = 多卡吞吐 ÷（单卡吞吐 × 卡数量)):
// the throughput of N cards ÷ (N × the throughput of one card), both measured under the same load — the same number
// of concurrent users, the same request mix, the same SLO. 80 tok/s on one 4090 and 140 on two give 0.875.
#include <optional>

#include "llmsim/analysis/capacity.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::analysis {

/// throughput_n / (n × throughput_1); nullopt when n < 1 or either throughput is not > 0.
std::optional<double> scaling_efficiency(double throughput_n, int n, double throughput_1);

/// The load both are measured at: the concurrent users one GPU carries at its SLO capacity — closed loop, its
/// max_concurrency; open loop, the mean requests in the system at max_qps (Little's law), rounded, at least 1.
/// nullopt when the 1-GPU option has no capacity.
std::optional<int> scaling_concurrency(const CapacityResult& one_gpu);

/// The workload as `users` closed-loop users with no think time and the same lengths; several classes share the
/// users in proportion to their offered rates (at least one each). ConfigError for trace replay.
spec::Workload closed_loop(const spec::Workload& workload, int users);

/// SLO-meeting output tokens per second of the scenario with `users` closed-loop users, on a run as long as one of
/// the capacity search's (options.num_requests, warm-up excluded), on the scenario's seed. 0 when it does not fit.
double goodput_at_concurrency(const spec::ResolvedScenario& scenario, int users, const CapacityOptions& options);

}  // namespace llmsim::analysis
