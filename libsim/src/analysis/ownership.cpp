#include "llmsim/analysis/ownership.hpp"

#include <algorithm>
#include <cmath>

#include "llmsim/core/error.hpp"

namespace llmsim::analysis {

namespace {
// Depreciation spreads the purchase over calendar hours (365.25 days a year): the card ages whether it serves or not.
constexpr double kHoursPerYear = 8766.0;
}  // namespace

double average_board_watts(const spec::GpuSpec& gpu, double busy_fraction) {
  if (!(busy_fraction >= 0 && busy_fraction <= 1))
    throw ConfigError("busy_fraction", "must be in [0, 1], got " + format_given(busy_fraction));
  const double load = gpu.tdp_watts;
  const double idle = gpu.idle_watts > 0 ? std::min(gpu.idle_watts, load) : load;
  return idle + (load - idle) * busy_fraction;
}

std::optional<OwnedGpuHour> owned_gpu_hour(const spec::ResolvedScenario& s, double busy_fraction, std::string* why) {
  const auto& c = s.scenario.cost;
  auto none = [&](const std::string& reason) -> std::optional<OwnedGpuHour> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (!c.electricity_per_kwh) return none("owned cost needs cost.electricity_per_kwh");
  if (!s.purchase_price_per_gpu)
    return none(c.currency == "USD" ? "owned cost needs a purchase price for " + s.gpu.id +
                                          " (hardware.purchase_price_per_gpu or compare --purchase-prices; the catalogue has none)"
                                    : "owned cost needs hardware.purchase_price_per_gpu in " + c.currency +
                                          " (the catalogue's prices are USD)");
  if (!(s.gpu.tdp_watts > 0)) return none("owned cost needs the board power (tdp_watts) of " + s.gpu.id);
  OwnedGpuHour h;
  h.depreciation = *s.purchase_price_per_gpu / (c.depreciation_years * kHoursPerYear);
  h.watts = average_board_watts(s.gpu, busy_fraction);
  h.idle_power_known = s.gpu.idle_watts > 0;
  h.energy = h.watts * c.pue / 1000.0 * *c.electricity_per_kwh;
  h.hosting = c.hosting_per_gpu_month / c.hours_per_month;
  return h;
}

std::optional<double> break_even_months(double purchase, double rent_per_hour, double running_per_hour,
                                        double hours_per_month) {
  const double saved_per_month = (rent_per_hour - running_per_hour) * hours_per_month;
  if (!(saved_per_month > 0) || !std::isfinite(purchase) || purchase < 0) return std::nullopt;
  return purchase / saved_per_month;
}

}  // namespace llmsim::analysis
