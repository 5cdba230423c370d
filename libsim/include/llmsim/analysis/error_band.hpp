#pragma once
// How far to trust a prediction (issue 27): the typical error of llmsim's predictions in the same regime — GPU
// family × runtime × batch range × metric family — read from the residuals of `make validate`. The table is
// data/error_bands.json (written by the validation report, compiled in), and it prefers BLIND sources (those that set
// no constant, perf/provenance.hpp). Where no blind group of the regime has enough measurements it widens the regime
// (drops the batch range, then the runtime, then the GPU family); where only sources the model was developed on
// have enough, it says so: their residuals are a lower bound on the error elsewhere.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmsim/core/json_view.hpp"
#include "llmsim/metrics/summary.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::analysis {

/// What kind of number a band is about.
enum class MetricFamily {
  latency,     ///< a time per step or per request after the first token: batch latency, decode step, TPOT, ITL, E2E
  ttft,        ///< time to first token, prefill time
  throughput,  ///< tokens/s, requests/s, capacity (the largest load inside an SLO)
};
std::string to_string(MetricFamily m);
MetricFamily parse_metric_family(const std::string& s, const std::string& path);

/// One group of residuals. "*" in a key field means any value (a wider regime).
struct ErrorBandGroup {
  std::string family = "*";   ///< "ampere_hbm" | "hopper_hbm" | "gddr" | "*"
  std::string runtime = "*";  ///< a spec::Runtime name or "*"
  std::string batch = "*";    ///< a batch bucket ("1", "2-15", "16-31", "32-63", "64+") or "*"
  std::string metric = "*";   ///< a MetricFamily name or "*"
  bool blind = false;         ///< residuals of blind sources only (else: sources the model was developed on)
  std::size_t n = 0;
  double median_abs = 0;      ///< median |relative error| on the time scale
  double p90_abs = 0;
  double signed_median = 0;   ///< + = llmsim slower than measured
};

/// The batch bucket of the validation report: "1", "2-15", "16-31", "32-63", "64+".
std::string band_batch_bucket(std::int64_t batch);

struct Regime {
  std::string family;   ///< GPU family name (perf::family_name)
  std::string runtime;  ///< spec::Runtime name
  std::int64_t batch = 1;  ///< sequences decoded together (a static batch, or a serving run's mean running batch)
  MetricFamily metric = MetricFamily::latency;
};

/// The band a prediction carries.
struct ErrorBand {
  double typical = 0;     ///< median |relative error| of the group
  double p90 = 0;
  double signed_median = 0;
  std::size_t n = 0;      ///< measurements behind it; 0 = no group had enough (the band is unknown)
  bool blind = false;
  /// From the calibrated profile's own leave-one-run-out error (HardwareProfile::cross_validated_error); n = runs.
  bool cross_validated = false;
  std::string group;      ///< the group it comes from, e.g. "hopper_hbm / vllm-v1 / batch 16-31 / latency"
  bool known() const noexcept { return n > 0; }
  /// "typical error ±9% in this regime (hopper_hbm / vllm-v1 / latency), from 140 blind measurements".
  std::string describe() const;
};

/// The compiled-in table (data/error_bands.json).
const std::vector<ErrorBandGroup>& error_band_table();
std::vector<ErrorBandGroup> parse_error_bands(const JsonView& v);  ///< ConfigError naming the bad field
Json error_bands_to_json(const std::vector<ErrorBandGroup>& groups, const std::string& generated_by);

/// The band of a regime: the most specific group with >= min_points measurements, blind groups before development
/// ones at every level (exact; without batch; without runtime; without family; any). Unknown when none has enough.
ErrorBand error_band(const Regime& r, const std::vector<ErrorBandGroup>& table = error_band_table(),
                     std::size_t min_points = 10);

/// The regime of a resolved scenario's prediction: its GPU's family and its runtime (a fleet by its first member,
/// as ResolvedScenario describes it).
Regime regime_of(const spec::ResolvedScenario& s, MetricFamily metric, std::int64_t batch);

/// The band of predictions made with the scenario's calibrated profile (hardware.gpu_profile) when that profile was
/// fitted from benchmark runs with cross-validation and for the scenario's runtime: its leave-one-run-out error
/// (how far it predicted runs it had not seen). nullopt otherwise (no profile, a kernel-only profile, another
/// runtime), and then the validation table's band applies.
std::optional<ErrorBand> profile_error_band(const spec::ResolvedScenario& s);

/// The bands of a run's TTFT, latencies and throughputs: the calibrated profile's cross-validated error when it
/// has one (profile_error_band, the same for every metric family), else the table's band of its regime (batch =
/// the run's mean running batch).
metrics::ErrorBands error_bands(const spec::ResolvedScenario& s, const metrics::Summary& summary,
                                const std::vector<ErrorBandGroup>& table = error_band_table());

/// True when values a and b are within the models' typical errors of each other: |a − b| <= a·ta + b·tb. Two options
/// whose capacities or costs are within error cannot be ranked by llmsim.
bool within_error(double a, const ErrorBand& band_a, double b, const ErrorBand& band_b);

}  // namespace llmsim::analysis
