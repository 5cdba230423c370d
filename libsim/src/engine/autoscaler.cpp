#include "autoscaler.hpp"

#include <algorithm>
#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/engine/autoscaler.hpp"
#include "llmsim/memory/memory_plan.hpp"

namespace llmsim::engine {

double weight_load_s(double weight_bytes, double gbps, const char* field) {
  if (!std::isfinite(gbps) || gbps <= 0) throw ConfigError(field, "must be > 0, got " + format_given(gbps));
  return weight_bytes * 8.0 / (gbps * 1e9);
}

double cold_start_s(const spec::ResolvedScenario& rs) {
  const auto& a = rs.scenario.autoscaler;
  if (a && a->scale_up_delay_s) return *a->scale_up_delay_s;
  // The whole model is read once per replica (each GPU its shard, from one source: the link is the bound).
  const double bytes = static_cast<double>(memory::weight_bytes(rs.model, rs.quant.weights));
  const bool own = a && a->load_gbps > 0;
  return weight_load_s(bytes, own ? a->load_gbps : rs.scenario.cost.network_gbps,
                       own ? "autoscaler.load_gbps" : "cost.network_gbps") +
         (a ? a->engine_start_s : spec::AutoscalerSpec{}.engine_start_s);
}

double scale_up_delay_s(const spec::ResolvedScenario& rs) { return rs.scenario.autoscaler ? cold_start_s(rs) : 0; }

namespace detail {

Fleet::Fleet(std::int32_t groups, std::int32_t ready)
    : state_(static_cast<std::size_t>(groups), GroupState::off), ready_mask_(static_cast<std::size_t>(groups), 0),
      off_(groups) {
  for (std::int32_t g = 0; g < std::min(groups, ready); ++g) set(g, GroupState::ready);
}

void Fleet::set(std::int32_t g, GroupState s) {
  auto& cur = state_[static_cast<std::size_t>(g)];
  auto count = [&](GroupState x, int d) {
    if (x == GroupState::ready) ready_ += d;
    if (x == GroupState::starting) starting_ += d;
    if (x == GroupState::draining) draining_ += d;
    if (x == GroupState::off) off_ += d;
  };
  const bool was = cur == GroupState::ready, is = s == GroupState::ready;
  count(cur, -1);
  count(s, +1);
  cur = s;
  ready_mask_[static_cast<std::size_t>(g)] = is;
  if (was != is) {  // a change of the fleet (an evaluation, a failure), not of a request: a sorted insert or erase
    const auto at = std::lower_bound(ready_list_.begin(), ready_list_.end(), g);
    if (is) ready_list_.insert(at, g);
    else ready_list_.erase(at);
  }
}

Autoscaler::Autoscaler(const spec::AutoscalerSpec& spec, double scale_up_delay_s, double slots_per_replica)
    : spec_(spec), delay_s_(scale_up_delay_s),
      per_replica_(spec.target_utilization ? *spec.target_utilization * slots_per_replica : *spec.queue_per_replica) {}

void Autoscaler::on_in_system(double now_s, std::int64_t n) {
  integral_ += static_cast<double>(in_system_) * (now_s - last_s_);
  last_s_ = now_s;
  in_system_ = n;
}

std::int32_t Autoscaler::recommend(double now_s) {
  on_in_system(now_s, in_system_);
  const double span = now_s - tick_start_s_;
  const double mean = span > 0 ? integral_ / span : static_cast<double>(in_system_);
  integral_ = 0;
  tick_start_s_ = now_s;
  // HPA: desired = ceil(metric / target), with a 1e-9 relative slack so an exact multiple is not rounded up.
  const double raw = std::ceil(mean / per_replica_ * (1 - 1e-9));
  auto want = static_cast<std::int32_t>(std::clamp(raw, static_cast<double>(spec_.min_replicas),
                                                   static_cast<double>(spec_.max_replicas)));
  // A request waiting with no replica at all needs one, whatever the mean says.
  if (want == 0 && in_system_ > 0) want = 1;
  // The window's maximum, kept as a monotonic deque (recommendations strictly decreasing from the front): a
  // recommendation no larger than a later one can never be the maximum again, so it goes now. O(1) amortised per
  // evaluation whatever scale_down_delay_s / interval_s is (a rescan of the window at every evaluation was
  // O(window) each: 30,000 entries per evaluation at interval_s 0.01, a run that never finished).
  while (!window_.empty() && window_.back().second <= want) window_.pop_back();
  window_.emplace_back(now_s, want);
  while (window_.front().first < now_s - spec_.scale_down_delay_s) window_.pop_front();  // the newest stays
  return want;
}

}  // namespace detail
}  // namespace llmsim::engine
