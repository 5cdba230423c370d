// Timed events a run schedules whatever its load (autoscaler evaluations, failures), bounded over the simulated span
// the workload implies (timed_events.hpp).
#include "timed_events.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "llmsim/core/number.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::spec::detail {

namespace {

// Timed events a run schedules whatever its load, bounded like every other loop (issue 29): the engine spends
// ~0.3 us on an autoscaler evaluation and ~10 us on a failure with its repair (measured on this project's build
// machine: 2e6 evaluations in 0.6 s; 745,795 failures in 7.4 s where this estimate said 3.3e6: a replica down or
// standing by is not failing), so these limits keep such a run under ~30 s.
// A month at a 1 s interval is 2.6e6 evaluations; 100 replicas failing hourly for a month are 72,000 failures.
constexpr double kMaxAutoscalerEvaluations = 1e8;
constexpr double kMaxFailureEvents = 1e7;

}  // namespace

// Autoscaler evaluations (every interval_s) and failures (each replica and spare every mtbf_h) over that span.
// 20 requests at 1e-6 req/s (2e7 s) with an autoscaler every 10 ms were 2e9 evaluations, a run that never ended;
// with replicas failing every 18 s, 2.8 million failures (attack8).
void check_timed_events(const Scenario& s, Problems& p) {
  const auto span = arrival_span_s(s.workload);
  if (!span) return;
  const std::string over = " over the run's ~" + format_digits(*span, 3) + " s of simulated time";
  const std::string way = ": raise it, or the arrival rate, or set workload.horizon_s";
  if (s.autoscaler && s.autoscaler->interval_s > 0) {
    const double n = *span / s.autoscaler->interval_s;
    if (n > kMaxAutoscalerEvaluations)
      p.add("autoscaler.interval_s", "an evaluation every " + format_value(s.autoscaler->interval_s) + " s" + over +
                                         " is ~" + format_digits(n, 2) + " evaluations, more than the " +
                                         format_digits(kMaxAutoscalerEvaluations, 1) + " a run may schedule" + way);
  }
  if (s.failures.mtbf_h > 0) {
    const double replicas = (s.autoscaler ? s.autoscaler->max_replicas : s.hardware.replicas) + s.failures.spares;
    const double n = *span * replicas / (s.failures.mtbf_h * 3600);
    if (n > kMaxFailureEvents)
      p.add("failures.mtbf_h", format_value(replicas) + " replicas failing every " + format_value(s.failures.mtbf_h) +
                                   " h on average" + over + " are ~" + format_digits(n, 2) + " failures, more than the " +
                                   format_digits(kMaxFailureEvents, 1) + " a run may schedule" + way);
  }
}

}  // namespace llmsim::spec::detail
