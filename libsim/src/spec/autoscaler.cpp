// The scenario's autoscaler section: JSON and validation (the mechanism is engine/autoscaler.cpp).
#include "llmsim/spec/autoscaler.hpp"

#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/workload.hpp"
#include "scenario_json.hpp"

namespace llmsim::spec {

void AutoscalerSpec::validate(const std::string& path) const {
  Problems p;
  constexpr int kMaxFleet = 10'000;
  if (min_replicas < 0 || min_replicas > kMaxFleet)
    p.add(path + ".min_replicas", "must be in 0..10000, got " + std::to_string(min_replicas));
  if (max_replicas < 1 || max_replicas > kMaxFleet)
    p.add(path + ".max_replicas", "must be in 1..10000, got " + std::to_string(max_replicas));
  if (min_replicas > max_replicas)
    p.add(path + ".min_replicas", "must be <= max_replicas (" + std::to_string(max_replicas) + "), got " +
                                      std::to_string(min_replicas));
  if (target_utilization.has_value() == queue_per_replica.has_value())
    p.add(path, "give exactly one trigger: target_utilization (0..1] or queue_per_replica (> 0)");
  if (target_utilization && !(*target_utilization > 0 && *target_utilization <= 1))
    p.add(path + ".target_utilization", "must be in (0, 1], got " + format_given(*target_utilization));
  if (queue_per_replica && !(*queue_per_replica > 0 && std::isfinite(*queue_per_replica)))
    p.add(path + ".queue_per_replica", "must be > 0, got " + format_given(*queue_per_replica));
  auto seconds = [&](const char* f, double v, double lo) {
    if (!(v >= lo && v <= kMaxSimulatedSeconds))
      p.add(path + "." + f, "must be in [" + format_value(lo) + ", 1e9] s, got " + format_given(v));
  };
  seconds("interval_s", interval_s, 1e-3);
  if (scale_up_delay_s) seconds("scale_up_delay_s", *scale_up_delay_s, 0);
  seconds("scale_down_delay_s", scale_down_delay_s, 0);
  seconds("engine_start_s", engine_start_s, 0);
  if (!(load_gbps >= 0 && std::isfinite(load_gbps)))
    p.add(path + ".load_gbps", "must be >= 0 Gbit/s (0 = cost.network_gbps), got " + format_given(load_gbps));
  p.throw_if_any();
}

AutoscalerSpec autoscaler_from_json(const JsonView& v) {
  v.allow_only(detail::kAutoscalerKeys);
  AutoscalerSpec a;
  a.min_replicas = static_cast<int>(v.has("min_replicas") ? v["min_replicas"].as_integer_in(-1'000'000, 1'000'000) : a.min_replicas);
  a.max_replicas = static_cast<int>(v.has("max_replicas") ? v["max_replicas"].as_integer_in(-1'000'000, 1'000'000) : a.max_replicas);
  if (v.has("target_utilization")) a.target_utilization = v.number("target_utilization");
  if (v.has("queue_per_replica")) a.queue_per_replica = v.number("queue_per_replica");
  a.interval_s = v.number_or("interval_s", a.interval_s);
  if (v.has("scale_up_delay_s")) a.scale_up_delay_s = v.number("scale_up_delay_s");
  a.scale_down_delay_s = v.number_or("scale_down_delay_s", a.scale_down_delay_s);
  a.load_gbps = v.number_or("load_gbps", a.load_gbps);
  a.engine_start_s = v.number_or("engine_start_s", a.engine_start_s);
  return a;
}

Json to_json(const AutoscalerSpec& a) {
  Json j{{"min_replicas", a.min_replicas}, {"max_replicas", a.max_replicas}, {"interval_s", a.interval_s},
         {"scale_down_delay_s", a.scale_down_delay_s}, {"load_gbps", a.load_gbps}, {"engine_start_s", a.engine_start_s}};
  if (a.target_utilization) j["target_utilization"] = *a.target_utilization;
  if (a.queue_per_replica) j["queue_per_replica"] = *a.queue_per_replica;
  if (a.scale_up_delay_s) j["scale_up_delay_s"] = *a.scale_up_delay_s;
  return j;
}

}  // namespace llmsim::spec
