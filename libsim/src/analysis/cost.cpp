#include "llmsim/analysis/cost.hpp"

#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/memory/memory_plan.hpp"

namespace llmsim::analysis {

std::optional<double> cost_per_mtok(double hourly_usd, double tokens_per_s) {
  if (!std::isfinite(hourly_usd) || hourly_usd < 0)
    throw ConfigError("cost.per_hour", "must be a finite number >= 0, got " + format_value(hourly_usd));
  if (!std::isfinite(tokens_per_s) || tokens_per_s <= 0) return std::nullopt;
  return hourly_usd / (tokens_per_s * 3600.0) * 1e6;
}

double hourly_cost(double price_per_gpu_hour, int gpus, const spec::CostSpec& cost) {
  Problems p;
  if (!std::isfinite(price_per_gpu_hour) || price_per_gpu_hour < 0)
    p.add("hardware.price_per_gpu_hour", "must be >= 0, got " + format_value(price_per_gpu_hour));
  if (gpus < 1) p.add("hardware", "needs at least one GPU, got " + std::to_string(gpus));
  if (!(cost.hours_per_month > 0))
    p.add("cost.hours_per_month", "must be > 0, got " + format_value(cost.hours_per_month));
  p.throw_if_any();
  const double extras = (cost.storage_per_month + cost.network_per_month) / cost.hours_per_month;
  return price_per_gpu_hour * gpus * (1.0 + cost.ops_overhead_fraction) + extras;
}

double hourly_cost(const spec::ResolvedScenario& s) {
  return hourly_cost(s.price_per_gpu_hour, s.scenario.hardware.gpus_total(), s.scenario.cost);
}

std::optional<double> price_on_gpu(const std::string& own_gpu, std::optional<double> own_price, const std::string& gpu,
                                   std::optional<double> price) {
  if (price) return price;
  return gpu == own_gpu ? own_price : std::nullopt;
}

void set_gpu(spec::Scenario& s, const std::string& gpu, std::optional<double> price) {
  s.hardware.price_per_gpu_hour = price_on_gpu(s.hardware.gpu, s.hardware.price_per_gpu_hour, gpu, price);
  s.hardware.gpu = gpu;
}

double cold_start_s(std::int64_t weight_bytes, double network_gbps) {
  if (!std::isfinite(network_gbps) || network_gbps <= 0)
    throw ConfigError("cost.network_gbps", "must be > 0, got " + format_value(network_gbps));
  return static_cast<double>(weight_bytes) * 8.0 / (network_gbps * 1e9);
}

std::optional<int> replicas_needed(double target_qps, double qps_per_replica, double spare_fraction) {
  if (!(qps_per_replica > 0) || !std::isfinite(qps_per_replica)) return std::nullopt;
  if (!(target_qps > 0)) return 0;
  // A relative epsilon so that 8 QPS over 2 QPS per replica is 4 replicas, not 5 by rounding noise.
  const double base = std::ceil(target_qps / qps_per_replica * (1 - 1e-9));
  const double with_spare = std::ceil(base * (1.0 + std::max(0.0, spare_fraction)) - 1e-9);
  if (with_spare > 1e9) return std::nullopt;
  return static_cast<int>(std::max(1.0, with_spare));
}

metrics::CostSummary cost_summary(const spec::ResolvedScenario& s, const metrics::Summary& summary) {
  metrics::CostSummary c;
  c.per_hour = hourly_cost(s);
  c.monthly = c.per_hour * s.scenario.cost.hours_per_month;
  c.cold_start_s = cold_start_s(memory::weight_bytes(s.model, s.quant.weights), s.scenario.cost.network_gbps);
  // Only SLO-meeting requests count: the metrics layer's goodput rates are exactly those tokens per second.
  if (summary.fits) {
    c.per_mtok_output_slo = cost_per_mtok(c.per_hour, summary.goodput_output_tps).value_or(0.0);
    c.per_mtok_total_slo = cost_per_mtok(c.per_hour, summary.goodput_total_tps).value_or(0.0);
  }
  return c;
}

}  // namespace llmsim::analysis
