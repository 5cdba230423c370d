#pragma once
// The scenario's `failures` section: replicas that fail and come back (random, by MTBF/MTTR, or at listed
// times), what happens to the requests they held, and hot spares. engine/failures.hpp simulates it.
#include <cstdint>
#include <string>
#include <vector>

#include "llmsim/core/json_view.hpp"

namespace llmsim::spec {

enum class OnFailure { requeue, fail };

/// One scheduled outage: replica `replica` is down from start_s for duration_s seconds.
struct Outage {
  double start_s = 0, duration_s = 0;
  int replica = 0;
};

struct FailureSpec {
  double mtbf_h = 0;                 ///< mean hours between failures of each replica (exponential; 0 = none random)
  double mttr_h = 1;                 ///< mean hours to repair (exponential), > 0
  std::vector<Outage> outages;       ///< scheduled outages, in addition to the random ones
  OnFailure on_failure = OnFailure::requeue;  ///< requests held by a failed replica: re-queued from scratch, or lost
  /// Under requeue, the times one request is started again after a failure evicted it; one more eviction fails it
  /// (failed_requests). A client's retries are bounded (the OpenAI Python client's max_retries defaults to 2), and the
  /// bound is the run's progress argument: with failures faster than a request's service time, unbounded retries
  /// never end.
  int max_retries = 2;
  int spares = 0;                    ///< hot spares: billed, loaded, take over a failed replica's place at once
  bool empty() const noexcept { return mtbf_h <= 0 && outages.empty(); }
  /// Every problem with its dotted path (failures.mtbf_h, ...), one ConfigError.
  void validate(const std::string& path = "failures") const;
};

FailureSpec failures_from_json(const JsonView& v);
Json to_json(const FailureSpec& f);

}  // namespace llmsim::spec
