#pragma once
// The scenario's `autoscaler` section: a fleet of replicas that grows and shrinks with the load, each new replica
// paying a cold start before it serves (engine/autoscaler.hpp simulates it). Absent = a fixed fleet of
// hardware.replicas.
#include <optional>
#include <string>

#include "llmsim/core/json_view.hpp"

namespace llmsim::spec {

struct AutoscalerSpec {
  int min_replicas = 1;                       ///< >= 0 (0 = scale to zero: requests wait for a cold start)
  int max_replicas = 1;                       ///< >= max(1, min_replicas)
  /// Trigger (exactly one): target fraction of the fleet's batch slots in use, i.e. requests in the system ÷
  /// (replicas × max_num_seqs × batches in flight), in (0, 1] — or the target number of requests in the system per
  /// replica (> 0). Both give Kubernetes HPA's desired = ceil(in-system ÷ per-replica target).
  std::optional<double> target_utilization;
  std::optional<double> queue_per_replica;
  double interval_s = 15;                     ///< evaluation period (HPA's default sync period is 15 s)
  std::optional<double> scale_up_delay_s;     ///< start to ready; default: the cold start (engine/autoscaler.hpp)
  double scale_down_delay_s = 300;            ///< stabilisation window (HPA's default for scale-down is 300 s)
  double load_gbps = 0;                       ///< weight load speed for the default cold start; 0 = cost.network_gbps
  double engine_start_s = 60;                 ///< process start, torch.compile and CUDA-graph capture (cited in docs)
  /// Every problem with its dotted path (autoscaler.min_replicas, ...), one ConfigError.
  void validate(const std::string& path = "autoscaler") const;
};

AutoscalerSpec autoscaler_from_json(const JsonView& v);
Json to_json(const AutoscalerSpec& a);

}  // namespace llmsim::spec
