// Timed events a run schedules whatever its load: autoscaler evaluations and replica failures over the simulated
// span the workload implies (Scenario::validate).
#pragma once

#include <optional>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/workload.hpp"

namespace llmsim::spec {
struct Scenario;
}

namespace llmsim::spec::detail {

/// The simulated time the workload's arrivals take on average (the span offered_rate averages over: a daily
/// profile's days end it), a horizon capping it; nullopt for closed loops, traces and offline batches, whose spans
/// other rules bound.
std::optional<double> arrival_span_s(const Workload& workload);

/// Adds a problem naming autoscaler.interval_s or failures.mtbf_h when the run would schedule more evaluations or
/// failures than a run may (about 30 s of the engine's time each); nothing for closed loops, traces and offline
/// batches, whose spans other rules bound.
void check_timed_events(const Scenario& scenario, Problems& problems);

}  // namespace llmsim::spec::detail
