// The fleet side of a run: the autoscaler's evaluations, replicas becoming ready, replica failures and the
// requests they held (re-queued or failed). The components (Fleet, Autoscaler, FailureModel) decide; these
// handlers apply their decisions to the replicas, the router and the meters.
#include "simulation.hpp"

namespace llmsim::engine::detail {

std::int64_t Simulation::group_outstanding(std::int32_t g) const {
  std::int64_t n = 0;
  for (std::int32_t v = 0; v < engines_per_group_; ++v)
    n += replicas_[static_cast<std::size_t>(g * engines_per_group_ + v)].outstanding();
  return n;
}

void Simulation::stop_if_drained(std::int32_t g, double now_s) {
  // A draining replica that has no request left stops (and stops being billed).
  if (g >= 0 && fleet_->state(g) == GroupState::draining && group_outstanding(g) == 0) {
    fleet_->set(g, GroupState::off);
    fleet_changed(now_s);
  }
}

void Simulation::start_empty(std::int32_t g, double now_s) {
  // It was off (stopped when drained, or never started): it holds no request, so nothing is evicted; only what
  // its caches kept from before (an earlier life, or a warm cache) goes.
  evicted_.clear();
  produced_.clear();
  for (std::int32_t v = 0; v < engines_per_group_; ++v) {
    const auto e = static_cast<std::size_t>(g * engines_per_group_ + v);
    auto& r = replicas_[e];
    LLMSIM_CHECK(r.outstanding() == 0, "the autoscaler started a replica that holds requests");
    // An iteration still in flight holds no request of its own (static batching's padding): it ends with the old
    // server, as a failed replica's does.
    if (r.busy()) LLMSIM_CHECK(events_.cancel(static_cast<std::int32_t>(e)), "a busy replica without its event");
    r.evict_all(now_s, evicted_, produced_);
  }
  LLMSIM_CHECK(evicted_.empty(), "the autoscaler started a replica that holds requests");
}

void Simulation::fleet_changed(double now_s) { meter_.on_fleet(now_s, fleet_->billed(), fleet_->ready()); }

void Simulation::dispatch_pending(double now_s) {
  while (!pending_.empty()) {
    const std::int32_t r = router_->route(replicas_);
    if (r < 0) return;
    const std::int32_t i = pending_.front();
    pending_.pop_front();
    assign(i, r, now_s);
  }
}

void Simulation::on_autoscale(double now_s) {
  autoscaler_->tick(now_s, *fleet_, [&](std::int32_t g) { return group_outstanding(g); }, actions_);
  for (const auto g : actions_.start) {
    start_empty(g, now_s);
    schedule_fleet(now_s + autoscaler_->scale_up_delay_s(), EventKind::replica_ready, g);
  }
  fleet_changed(now_s);
  dispatch_pending(now_s);  // a draining replica taken back is ready at once
  // Evaluations go on while anything else is still to happen (they alone never keep a finished run alive).
  if (work_left()) schedule_fleet(now_s + autoscaler_->interval_s(), EventKind::autoscale, 0);
}

void Simulation::schedule_fleet(double t, EventKind kind, std::int32_t target) {
  ++fleet_events_;
  events_.schedule(t, kind, target);
}

void Simulation::on_replica_down(std::int32_t target, double now_s) {
  const auto& fs = rs_.scenario.failures;
  const bool scheduled = target < 0;  // a listed outage (-1 - its index), else a random failure of replica `target`
  const std::int32_t g = scheduled ? fs.outages[static_cast<std::size_t>(-1 - target)].replica : target;
  if (!work_left()) return;  // after the run's last request: nothing to fail, nothing more to bill
  const GroupState st = fleet_->state(g);
  if (st != GroupState::ready && st != GroupState::draining && st != GroupState::standby) {
    // Off, starting or already down: nothing to fail; a random clock runs on.
    if (!scheduled && work_left()) schedule_fleet(now_s + failures_->time_to_failure(g), EventKind::replica_down, g);
    return;
  }
  ++replica_failures_;
  fleet_->set(g, GroupState::failed);
  if (st != GroupState::standby)  // a hot spare takes the failed replica's place at once
    for (std::int32_t h = 0; h < fleet_->size(); ++h)
      if (fleet_->state(h) == GroupState::standby) {
        fleet_->set(h, GroupState::ready);
        break;
      }
  fleet_changed(now_s);
  evicted_.clear();
  produced_.clear();
  for (std::int32_t v = 0; v < engines_per_group_; ++v) {
    const auto e = static_cast<std::size_t>(g * engines_per_group_ + v);
    interrupt(static_cast<std::int32_t>(e), now_s);  // its tokens so far are counted
    // Its iteration is lost with it.
    if (replicas_[e].busy()) LLMSIM_CHECK(events_.cancel(static_cast<std::int32_t>(e)), "a busy replica without its event");
    replicas_[e].evict_all(now_s, evicted_, produced_);
  }
  for (std::size_t k = 0; k < evicted_.size(); ++k) requeue_or_fail(evicted_[k], produced_[k], now_s);
  const double down = scheduled ? fs.outages[static_cast<std::size_t>(-1 - target)].duration_s : failures_->time_to_repair(g);
  schedule_fleet(now_s + down, EventKind::replica_up, scheduled ? -1 - g : g);
}

void Simulation::on_replica_up(std::int32_t target, double now_s) {
  const bool scheduled = target < 0;
  const std::int32_t g = scheduled ? -1 - target : target;
  if (fleet_->state(g) != GroupState::failed || !work_left()) return;
  // Back in service while fewer serve than needed (the fleet's serving places; under an autoscaler, what it wants
  // now), else back in standby while the hot spares are short of failures.spares: a spare that took a failed
  // replica's place is restored by its repair. (Sent to serve beside an autoscaler, the repaired replica was the
  // surplus it drained, and the spare pool stayed empty while the bill said it was held throughout.)
  std::int32_t standby = 0;
  for (std::int32_t h = 0; h < fleet_->size(); ++h) standby += fleet_->state(h) == GroupState::standby;
  const std::int32_t needed =
      autoscaler_ ? std::max(rs_.scenario.autoscaler->min_replicas, autoscaler_->last_recommendation()) : serving_;
  const bool spare = standby < rs_.scenario.failures.spares && fleet_->ready() + fleet_->starting() >= needed;
  fleet_->set(g, spare ? GroupState::standby : GroupState::ready);
  fleet_changed(now_s);
  dispatch_pending(now_s);
  if (!scheduled && failures_->random() && work_left())
    schedule_fleet(now_s + failures_->time_to_failure(g), EventKind::replica_down, g);
}

void Simulation::on_replica_ready(std::int32_t g, double now_s) {
  if (fleet_->state(g) != GroupState::starting) return;
  fleet_->set(g, GroupState::ready);
  fleet_changed(now_s);
  dispatch_pending(now_s);
}

}  // namespace llmsim::engine::detail
