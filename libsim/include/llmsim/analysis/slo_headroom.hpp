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
  double percentile = 95;   ///< the target's percentile
  ErrorBand band;           ///< the model's typical error of that metric in the scenario's regime at batch 1
};

/// Among the latency targets the unloaded run `alone` meets, the one with the least headroom (limit over its value);
/// nullopt when the run has none (no latency target, nothing completed, a target missed alone: unloaded_slo_miss).
std::optional<SloHeadroom> tightest_slo_headroom(const spec::ResolvedScenario& scenario, const metrics::Summary& alone);

/// `scenario` with every latency target's bound (the scenario's SLO and each class's) multiplied by `factor`.
void loosen_slo(spec::Scenario& scenario, double factor);

/// The same sizing with every latency target `factor` times looser: the fewest serving replicas (units) that meet it
/// at the same target load, on the same seed, and their bill held fixed (spares included).
struct LooserSlo {
  double factor = 1;
  int serving = 0;
  double monthly_cost = 0;
  /// The fleet it is compared with: the one sized, or the sizing limit when no fleet up to it met the SLO as set.
  int from_serving = 0;
  bool from_met = true;  ///< false: the SLO as set was not met by up to from_serving replicas (units)
};

/// The knee: loosening every latency target by the tightest one's headroom (factor 1 + h: its room to queue
/// doubled) shrinks the fleet by a larger fraction than the SLO moved, (from - looser) / from > factor - 1.
/// A fleet set by the load shrinks less than the SLO loosens (its latency rises steeply near saturation, so more
/// room buys little load); one set by how often a request meets another shrinks more (each replica carries what its
/// percentile's tail allows, and that share grows with the room). The bill's elasticity to the SLO above 1: a unit
/// boundary, not a tuned one.
bool on_knee(const LooserSlo& looser);

/// The sizing note, when a sign shows (nullopt otherwise): the tightest target's headroom is within its band's
/// typical error (the calibrated profile's cross-validated error, else data/error_bands.json); the fleet sized has
/// several replicas each busy no more than the share of requests the target's percentile lets miss (5 % for a p95:
/// a request finds another in service that often, so the fleet was grown until collisions are rarer than the misses
/// allowed); or the SLO sits on the knee (`looser`, on_knee). "the SLO leaves requests almost no room to queue:
/// ttft_ms.p95 <= 112.5 ms is 2.3 % above the 110.0 ms one request takes alone on one replica ...; the fleet sized
/// (500 replica(s), each busy 0.4 % of the time, ...) is set by queueing noise ...; with every latency target 2.3 %
/// looser (ttft_ms.p95 <= 115.1 ms) 260 replica(s) meet it: 96,000 USD/month instead of 185,000". `serving` and
/// `busy_fraction` describe the fleet sized (busy < 0: unknown); `monthly_cost` is its fixed bill; `looser` is the
/// sizing at 1 + headroom (null: not run, e.g. one replica).
std::optional<std::string> slo_headroom_note(const spec::ResolvedScenario& scenario, const metrics::Summary& alone,
                                             int serving, double busy_fraction, double monthly_cost = 0,
                                             const LooserSlo* looser = nullptr);

}  // namespace llmsim::analysis
