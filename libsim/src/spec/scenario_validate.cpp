// The scenario's checks on its own (no catalogue): each section's, the rules across sections, and the bounds that
// keep what is computed from it (bills, GPU counts) finite and in range.
#include "llmsim/spec/scenario.hpp"

#include <cmath>
#include <cstdint>
#include <string>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/quantization.hpp"
#include "scenario_checks.hpp"
#include "timed_events.hpp"

namespace llmsim::spec {

namespace {

constexpr double kMaxUsd = 1e15;           // ten times world GDP per year (USD): any larger amount is an input error
constexpr std::int64_t kMaxGpus = 10'000'000;

}  // namespace

namespace detail {

// The deployment's own monthly bill (the cost layer's formula bounded from above: no spare, no fleet sizing) must
// be a finite amount in range; a price of 1e308 $/h printed "$inf/month" before. Names the price that caused it.
void check_monthly_bill(const Scenario& s, double price) {
  const auto& c = s.cost;
  const double gpus = static_cast<double>(s.hardware.parallel.tp) * s.hardware.parallel.pp * s.hardware.replicas;
  const double monthly = price * gpus * (1 + c.ops_overhead_fraction) * c.hours_per_month + c.storage_per_month +
                         c.network_per_month;
  if (monthly <= kMaxUsd) return;
  const std::string field = s.hardware.price_per_gpu_hour ? "hardware.price_per_gpu_hour" : "hardware.gpu.price_per_hour";
  throw ConfigError(field, format_value(price) + " " + c.currency + " per GPU-hour makes the monthly bill of " +
                               std::to_string(static_cast<std::int64_t>(gpus)) + " GPU(s) " + format_value(monthly) +
                               " " + c.currency + ", more than " + format_value(kMaxUsd));
}

}  // namespace detail

void CostSpec::validate(const std::string& path) const {
  Problems p;
  auto non_negative = [&](const char* f, double v) {
    if (!(v >= 0) || !std::isfinite(v)) p.add(path + "." + f, "must be >= 0, got " + format_given(v));
  };
  non_negative("storage_per_month", storage_per_month);
  non_negative("network_per_month", network_per_month);
  non_negative("ops_overhead_fraction", ops_overhead_fraction);
  non_negative("spare_fraction", spare_fraction);
  non_negative("target_qps", target_qps);
  // Upper bounds keep what is computed from these (monthly bills, fleet sizes) finite and in range; each is far
  // beyond any real deployment (the busiest public LLM services serve ~1e5 requests/s).
  auto at_most = [&](const char* f, double v, double hi, const char* why) {
    if (v > hi) p.add(path + "." + f, "must be <= " + format_value(hi) + " (" + why + "), got " + format_given(v));
  };
  at_most("storage_per_month", storage_per_month, kMaxUsd, "USD");
  at_most("network_per_month", network_per_month, kMaxUsd, "USD");
  at_most("ops_overhead_fraction", ops_overhead_fraction, 100, "+10000%");
  at_most("spare_fraction", spare_fraction, 100, "100 spare replicas per serving one");
  at_most("target_qps", target_qps, 1e9, "requests/s; the fleet size for it must fit in a count");
  if (!(hours_per_month > 0 && hours_per_month <= 744)) {
    p.add(path + ".hours_per_month", "must be in (0, 744], got " + format_given(hours_per_month));
  }
  if (!(network_gbps > 0) || !std::isfinite(network_gbps)) {
    p.add(path + ".network_gbps", "must be > 0, got " + format_given(network_gbps));
  }
  bool code = currency.size() == 3;
  for (char ch : currency) code = code && ch >= 'A' && ch <= 'Z';
  if (!code) p.add(path + ".currency", "must be an ISO 4217 code of three capital letters (USD, HKD, CNY), got '" +
                                           currency + "'");
  if (electricity_per_kwh) non_negative("electricity_per_kwh", *electricity_per_kwh);
  if (!(pue >= 1 && pue <= 5)) p.add(path + ".pue", "must be in [1, 5] (total facility power / IT power), got " +
                                                        format_value(pue));
  if (!(depreciation_years > 0 && depreciation_years <= 30))
    p.add(path + ".depreciation_years", "must be in (0, 30], got " + format_given(depreciation_years));
  non_negative("hosting_per_gpu_month", hosting_per_gpu_month);
  // Owned-cost inputs multiply into bills: bounded like the others (in any currency: 1e6 per kWh is ~1e5 USD in the
  // weakest currencies, far beyond any tariff), so a bill stays finite.
  if (electricity_per_kwh) at_most("electricity_per_kwh", *electricity_per_kwh, 1e6, "per kWh");
  at_most("hosting_per_gpu_month", hosting_per_gpu_month, 1e12, "per GPU-month");
  p.throw_if_any();
}

void Scenario::validate() const {
  Problems p;
  auto collect = [&](auto&& fn) { p.collect(fn); };
  if (model.empty()) p.add("model", "must name a model");
  collect([&] {
    if (to_lower(weights) != kAutoWeights) weight_format(weights, "quant.weights");
  });
  collect([&] { parse_kv_dtype(kv_cache, "quant.kv_cache"); });
  collect([&] { hardware.validate("hardware"); });
  collect([&] { engine.validate("engine"); });
  collect([&] { workload.validate("workload"); });
  collect([&] { slo.validate("slo"); });
  collect([&] { metrics.validate("metrics"); });
  collect([&] { cost.validate("cost"); });
  if (autoscaler) collect([&] { autoscaler->validate("autoscaler"); });
  collect([&] { failures.validate("failures"); });
  if (disaggregation) collect([&] { disaggregation->validate("disaggregation"); });
  // A warm cache is the prefix cache's content (engine/warm_cache.hpp): rules across sections.
  if (workload.warm_cache && !engine.prefix_caching())
    p.add("workload.warm_cache", "a warm cache is the prefix cache's content: it needs prefix caching "
                                 "(engine.enable_prefix_caching true; vLLM V1's default)");
  if (workload.warm_cache && disaggregation)
    p.add("workload.warm_cache", "a warm cache with disaggregation is not modelled");
  // Derived counts: each factor is bounded, their product too (an int product of tp, pp and replicas overflowed).
  const std::int64_t gpus = std::int64_t{hardware.parallel.tp} * hardware.parallel.pp * hardware.replicas;
  if (p.empty() && gpus > kMaxGpus)
    p.add("hardware.replicas", "tp x pp x replicas = " + std::to_string(gpus) + " GPUs, more than " +
                                   std::to_string(kMaxGpus) + ", got " + std::to_string(hardware.replicas) + " replicas");
  if (p.empty()) detail::check_timed_events(*this, p);
  p.throw_if_any();
}

}  // namespace llmsim::spec
