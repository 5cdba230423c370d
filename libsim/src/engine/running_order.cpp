// The running list's order, which decides the preemption victim (the tail, Replica::preempt_tail). vLLM V0 from
// 0.5.4 keeps admission order: a recompute victim re-admitted from the queue head is appended
// (`self.running.extend(prefills)`, vllm/core/scheduler.py `_schedule_default`), so it is the next victim again.
// Before 0.5.4, `_schedule_running` first sorted the running queue by the FCFS policy (vllm/core/policy.py:
// priority = now - arrival_time, earliest first) and preempted `running_queue.pop()`, the latest arrival; vllm#6867
// dropped that sort as the queues "are always sorted by first-come-first-serve order", which a re-admitted victim
// breaks. Under that older rule a re-admitted (or swapped-in) victim takes its arrival's place, so preemption falls
// on the newest arrivals rather than on the same request again.
// Under chunked prefill in 0.5.4-0.5.5 the list is V0's walk order instead (new prompts ahead of the decodes;
// v0_walk.cpp reorders it each step), so a re-admitted victim leads it there.
#include "replica.hpp"

namespace llmsim::engine::detail {

namespace {
/// Arrival order, ties by request id (the client's order: a burst's requests share one arrival time).
bool arrived_after(const Seq& a, const Seq& b) noexcept {
  return a.arrival_s > b.arrival_s || (a.arrival_s == b.arrival_s && a.id > b.id);
}
}  // namespace

void Replica::link_running(std::int32_t i) {
  Seq& s = (*pool_)[i];
  // Fresh admissions come from the FCFS queue after everything running: the tail is their place either way. Only a
  // request preempted before can belong further up; the walk passes the requests that arrived after it (those
  // admitted since it was preempted), so it costs nothing on the common path.
  if (!cfg_.running_by_arrival || s.preemptions == 0 || tail_ < 0 || !arrived_after((*pool_)[tail_], s)) {
    link_tail(i);
    return;
  }
  std::int32_t after = tail_;
  while (after >= 0 && arrived_after((*pool_)[after], s)) after = (*pool_)[after].prev;
  s.prev = after;
  if (after >= 0) {
    s.next = (*pool_)[after].next;
    (*pool_)[after].next = i;
  } else {
    s.next = head_;
    head_ = i;
  }
  (*pool_)[s.next].prev = i;  // s.next >= 0: the tail arrived after s, so s is not the tail
  count_joined_running();
}

}  // namespace llmsim::engine::detail
