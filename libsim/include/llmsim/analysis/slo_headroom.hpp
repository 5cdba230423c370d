#pragma once
// How far an SLO sits above what one request takes alone (issue 29). A latency target within the model's typical
// error of one request's unloaded latency leaves requests no room to queue: the capacity search finds a tiny load per
// replica, and the fleet sized for a target is set by which few requests happen to meet one another (queueing noise),
// not by the load. An SLO of 112.5 ms over an unloaded TTFT of ~110 ms sized "500 H100s" with no word. Sizing
// (capacity, compare, report, search, Python) now says so beside the fleet, with the numbers.
#include <optional>
#include <string>

#include "llmsim/analysis/error_band.hpp"
#include "llmsim/metrics/summary.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::analysis {

struct SloHeadroom {
  std::string target;       ///< "ttft_ms.p95" ("class NAME: ttft_ms.p95" with several classes)
  double limit_ms = 0;      ///< the SLO's bound
  double unloaded_ms = 0;   ///< the same percentile of the run alone (unloaded_run)
  double headroom = 0;      ///< limit / unloaded - 1
  ErrorBand band;           ///< the model's typical error of that metric in the scenario's regime at batch 1
};

/// Among the latency targets the unloaded run `alone` meets, the one with the least headroom (limit over its value);
/// nullopt when the run has none (no latency target, nothing completed, a target missed alone: unloaded_slo_miss).
std::optional<SloHeadroom> tightest_slo_headroom(const spec::ResolvedScenario& scenario, const metrics::Summary& alone);

/// The sizing note when the tightest target's headroom is within its band's typical error (the calibrated profile's
/// cross-validated error, else data/error_bands.json; no note when the band is unknown): "the SLO sits within the
/// model's typical error of one request's unloaded latency: ttft_ms.p95 <= 112.5 ms is 2.3 % above 110 ms alone on
/// one replica (...); the fleet sized (500 replicas, each busy 1 % of the time) is set by queueing noise ...".
/// `serving` and `busy_fraction` describe the fleet sized (busy < 0: unknown); `unit` names a fleet's unit.
std::optional<std::string> slo_headroom_note(const spec::ResolvedScenario& scenario, const metrics::Summary& alone,
                                             int serving, double busy_fraction);

}  // namespace llmsim::analysis
