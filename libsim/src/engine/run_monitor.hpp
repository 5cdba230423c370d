#pragma once
// Watches a run for overload and for the bounds that end it early (private to the engine):
//  * overload: in an open loop, the number of requests in the system grew over the second half of the arrivals
//    by more than 5 % of them and more than 3√n + 8 (at exactly critical load it is a random walk with
//    standard deviation ≈ √(2n) over those arrivals, so 3√n is ≈ 2.1 σ: more is drift, not noise); with
//    stop_when_unstable (capacity search) also a waiting queue beyond max_queue, and the run stops there;
//  * overload of a short open loop (fewer than 200 arrivals, where the growth check above cannot tell drift from noise,
//    and requests in the system also grow while the batch fills): at its last arrival the waiting queue (requests
//    not admitted: the batch and KV cache full, not just busy) holds more than 5 % of the arrivals and more than
//    3√n + 8 of them (the growth check's noise bound), and over the run the server completed under half the offered
//    req/s (check_short). A healthy short run with long requests has many in the system but none waiting;
//  * overload of a time-varying load (a daily profile, whose arrivals end with its days, not at num_requests, so the
//    growth check above is never judged): some window of the per-hour fleet table in which the fleet fell behind —
//    fewer requests completed than entered by more than 5 % of those that entered and more than 3√n + 8 (the same
//    noise bound), the rest still in the system, failed or timed out (check_windows);
//  * not judged: closed loops and offline batches (they pace themselves), and a burst — a replayed trace whose rows all
//    arrive at one instant (`vllm bench serve --request-rate inf`): every request is in the system from the start
//    whatever the server's speed, so growth says nothing (Simulation::build);
//  * the memory bound on requests in the system (SimulationOptions::max_in_system) and the clock's precise
//    range (spec::kMaxSimulatedSeconds): the run stops, flagged incomplete.
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <string>
#include <vector>

#include "llmsim/metrics/fleet.hpp"
#include "llmsim/metrics/summary.hpp"

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
  /// Enables the short-run check for an open loop of `arrivals` (< 200) requests: the waiting queue is read at the
  /// last of them (needs_waiting), judged at the end by check_short.
  void watch_short(std::int64_t arrivals) { short_last_ = last_arrival_ = arrivals; }
  /// At the end of a complete short open loop (watch_short): unstable when the waiting queue at its last arrival
  /// exceeded 5 % of the arrivals and 3√n + 8, and the achieved completion rate over the run (`achieved_rps`) was
  /// under half the offered arrival rate (`offered_rps`, measured arrivals over their window).
  void check_short(double offered_rps, double achieved_rps) {
    if (unstable_ || !complete_ || short_last_ <= 0 || waiting_at_last_ < 0 || !(offered_rps > 0)) return;
    const double n = static_cast<double>(short_last_), q = static_cast<double>(waiting_at_last_);
    if (!(q > 0.05 * n && q > 3 * std::sqrt(n) + 8 && achieved_rps < 0.5 * offered_rps)) return;
    flag("a short run (" + std::to_string(short_last_) + " arrivals) completed " + format_rate(achieved_rps) +
         " req/s of the " + format_rate(offered_rps) + " req/s offered, with " + std::to_string(waiting_at_last_) +
         " requests still waiting to be admitted at its last arrival (arrivals faster than service)");
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

  /// Whether after_arrival() reads its `waiting` argument (to stop an unstable run early, or the short-run check's
  /// last arrival): the caller may pass 0 instead of summing the replicas' queues on every arrival. `issued`: the
  /// arrival's count (the short-run check reads the queue at its last arrival only).
  bool needs_waiting(std::int64_t issued) const noexcept { return stop_when_unstable_ || issued == short_last_; }
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
    if (issued == short_last_) waiting_at_last_ = waiting;
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
    unstable_reason_ = std::string(metrics::kUnstableLabel) + std::move(why);  // said once: metrics::unstable_cause
  }
  bool stop_when_unstable_;
  std::int64_t max_queue_, max_in_system_;
  static std::string format_pct(double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  static std::string format_rate(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f" : v >= 1 ? "%.3g" : "%.2g", v);
    return buf;
  }
  std::int64_t half_mark_ = -1, in_system_at_half_ = 0, last_arrival_ = -1;
  std::int64_t short_last_ = -1, waiting_at_last_ = -1;
  bool growth_checked_ = false;
  bool unstable_ = false, stop_ = false, complete_ = true, windows_flagged_ = false;
  std::string unstable_reason_, incomplete_reason_;
};

}  // namespace llmsim::engine::detail
