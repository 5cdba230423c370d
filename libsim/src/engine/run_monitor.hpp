#pragma once
// Watches a run for overload and for the bounds that end it early (private to the engine):
//  * overload: in an open loop, the number of requests in the system grew over the second half of the arrivals
//    by more than 5 % of them and more than 3√n + 8 (at exactly critical load it is a random walk with
//    standard deviation ≈ √(2n) over those arrivals, so 3√n is ≈ 2.1 σ: more is drift, not noise); with
//    stop_when_unstable (capacity search) also a waiting queue beyond max_queue, and the run stops there;
//  * overload of a time-varying load (a daily profile, whose arrivals end with its days, not at num_requests, so the
//    growth check above is never judged): some window of the per-hour fleet table in which the fleet fell behind —
//    fewer requests completed than entered by more than 5 % of those that entered and more than 3√n + 8 (the same
//    noise bound), the rest still in the system, failed or timed out (check_windows);
//  * the memory bound on requests in the system (SimulationOptions::max_in_system) and the clock's precise
//    range (spec::kMaxSimulatedSeconds): the run stops, flagged incomplete.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "llmsim/metrics/fleet.hpp"

namespace llmsim::engine::detail {

class RunMonitor {
 public:
  RunMonitor(bool stop_when_unstable, std::int64_t max_queue, std::int64_t max_in_system)
      : stop_when_unstable_(stop_when_unstable), max_queue_(max_queue), max_in_system_(max_in_system) {}

  /// Enables the growth check for an open loop (Poisson, gamma, schedules, trace replay) of `arrivals` (>= 200)
  /// requests: judged at the last of them.
  void watch_growth(std::int64_t arrivals) {
    half_mark_ = arrivals / 2;
    last_arrival_ = arrivals;
  }
  /// At the end of a run whose clients time out (workload.timeout_s): a queue bounded by the clients' patience does
  /// not grow, so the growth check misses the overload; requests given up are its sign instead. Unstable when more
  /// than 5 % of the measured requests that entered timed out (and more than 3√n + 8 of them, as for growth: not a
  /// handful in a short run).
  void check_timeouts(std::int64_t timed_out, std::int64_t entered, double timeout_s) {
    const double n = static_cast<double>(entered), lost = static_cast<double>(timed_out);
    if (unstable_ || entered <= 0 || !(lost > 0.05 * n && lost > 3 * std::sqrt(n) + 8)) return;
    const double pct = std::round(lost / n * 1000) / 10;
    flag(std::to_string(timed_out) + " of " + std::to_string(entered) + " measured requests (" + format_pct(pct) +
         " %) timed out: their clients gave up after workload.timeout_s = " + format_pct(timeout_s) +
         " s (arrivals faster than service)");
  }

  /// At the end of a complete open-loop run whose growth check was never judged (its arrivals ended before
  /// num_requests: a daily profile's days): flags the window of the per-hour table (`hours`, buckets of the fleet
  /// meter) in which the most requests that entered were not completed within it, when they are more than 5 % of
  /// those that entered and more than 3√n + 8 (n entered, >= 100) — the queue grew through it, or its requests
  /// were lost. A window over which the fleet keeps up (its backlog cleared within the window) passes. O(buckets²).
  void check_windows(const std::vector<metrics::FleetHour>& hours);
  /// Whether the end-of-run growth check ran (the run reached its last arrival with the check armed).
  bool growth_judged() const noexcept { return growth_checked_; }
  bool growth_armed() const noexcept { return half_mark_ > 0; }

  /// Whether after_arrival() reads its `waiting` argument (only to stop an unstable run early): the caller may pass
  /// 0 instead of summing the replicas' queues on every arrival.
  bool needs_waiting() const noexcept { return stop_when_unstable_; }
  /// After the `issued`-th request arrived, with `in_system` requests arrived and unfinished and `waiting` not
  /// admitted. Flags overload and the memory bound; stop() tells the event loop to end the run.
  void after_arrival(std::int64_t issued, std::int64_t num_requests, std::int64_t in_system, std::int64_t waiting) {
    if (issued == half_mark_) in_system_at_half_ = in_system;
    // Inline, the tests that every arrival passes; the guards' messages out of line.
    if ((stop_when_unstable_ && waiting > max_queue_) || in_system > max_in_system_ || issued == num_requests ||
        issued == last_arrival_) [[unlikely]]
      check_guards(issued, num_requests, in_system, waiting);
  }
  /// The run ends before serving every request it issued (a guard, the horizon, or the capacity-search stop).
  void end_early(std::string why) {
    stop_ = true;
    complete_ = false;
    if (incomplete_reason_.empty()) incomplete_reason_ = std::move(why);
  }

  bool stop() const noexcept { return stop_; }
  /// The overload was found by check_windows (its reason names the window; the run's mean rates say nothing of it).
  bool windows_flagged() const noexcept { return windows_flagged_; }
  bool unstable() const noexcept { return unstable_; }
  bool complete() const noexcept { return complete_; }
  const std::string& unstable_reason() const noexcept { return unstable_reason_; }
  const std::string& incomplete_reason() const noexcept { return incomplete_reason_; }

 private:
  /// The rest of after_arrival(): the guards themselves (each test again, in order).
  [[gnu::noinline, gnu::cold]] void check_guards(std::int64_t issued, std::int64_t num_requests, std::int64_t in_system,
                                                 std::int64_t waiting) {
    if (stop_when_unstable_ && waiting > max_queue_ && !unstable_) {
      flag("the waiting queue grew beyond " + std::to_string(max_queue_) + " requests (arrivals faster than service)");
      end_early(kStopped);
    }
    if (in_system > max_in_system_) {
      if (!unstable_) flag("more than " + std::to_string(max_in_system_) + " requests were in the system at once");
      end_early("stopped when " + std::to_string(in_system) + " requests were in the system at once (the memory bound, "
                "SimulationOptions::max_in_system); the summary covers the run until then");
    }
    if ((issued == num_requests || issued == last_arrival_) && half_mark_ > 0 && !growth_checked_) {
      growth_checked_ = true;
      const double arrivals = static_cast<double>(issued - half_mark_);
      const double growth = static_cast<double>(in_system - in_system_at_half_);
      if (arrivals >= 100 && growth > 0.05 * arrivals && growth > 3 * std::sqrt(arrivals) + 8 && !unstable_) {
        flag("requests in the system grew by " + std::to_string(static_cast<std::int64_t>(growth)) + " over the last " +
             std::to_string(static_cast<std::int64_t>(arrivals)) + " arrivals (arrivals faster than service)");
        if (stop_when_unstable_) end_early(kStopped);
      }
    }
  }
  static constexpr const char* kStopped = "stopped at overload (SimulationOptions::stop_when_unstable)";
  void flag(std::string why) {
    unstable_ = true;
    unstable_reason_ = "unstable: " + std::move(why);
  }
  bool stop_when_unstable_;
  std::int64_t max_queue_, max_in_system_;
  static std::string format_pct(double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  std::int64_t half_mark_ = -1, in_system_at_half_ = 0, last_arrival_ = -1;
  bool growth_checked_ = false;
  bool unstable_ = false, stop_ = false, complete_ = true, windows_flagged_ = false;
  std::string unstable_reason_, incomplete_reason_;
};

}  // namespace llmsim::engine::detail
