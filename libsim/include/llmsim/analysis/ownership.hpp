#pragma once
// Owning the cards instead of renting them: the purchase price spread over its depreciation years, the energy the
// board draws (idle and under load, times the facility's PUE) at the user's electricity price, and hosting, as an
// equivalent price per GPU-hour — then priced exactly like rental (hourly_cost: ops overhead, extras) — and the
// months after which buying has cost less than renting. docs/analysis.md "Owned hardware" states the sources.
#include <optional>
#include <string>

#include "llmsim/spec/scenario.hpp"

namespace llmsim::analysis {

/// What one owned GPU costs per hour, in cost.currency.
struct OwnedGpuHour {
  double depreciation = 0;  ///< purchase price / (depreciation_years × 8766 h)
  double energy = 0;        ///< average board watts × PUE / 1000 × electricity_per_kwh
  double hosting = 0;       ///< hosting_per_gpu_month / hours_per_month
  double watts = 0;         ///< average board power it was priced at (before PUE)
  bool idle_power_known = true;  ///< false: the card's idle draw is unknown and was priced at full board power
  double total() const noexcept { return depreciation + energy + hosting; }
  double running() const noexcept { return energy + hosting; }  ///< what it costs beyond the purchase
};

/// Average board power of a GPU busy (running iterations) `busy_fraction` of the time: idle + (load − idle) × busy,
/// with load the datasheet board power (tdp_watts) — an upper bound, since a memory-bound decode draws less — and
/// idle the catalogue's measured idle (the full board power when unknown). ConfigError for busy_fraction outside
/// [0, 1].
double average_board_watts(const spec::GpuSpec& gpu, double busy_fraction);

/// One owned GPU-hour of the resolved scenario's card at `busy_fraction`. nullopt when owning cannot be priced:
/// cost.electricity_per_kwh is not given, or no purchase price is known (`why` says which, when given).
std::optional<OwnedGpuHour> owned_gpu_hour(const spec::ResolvedScenario& scenario, double busy_fraction,
                                           std::string* why = nullptr);

/// Months after which buying a GPU (price `purchase`, then `running_per_hour` to run) has cost less than renting it
/// at `rent_per_hour`: purchase / ((rent − running) × hours_per_month). nullopt when renting costs no more than
/// running (buying never pays back).
std::optional<double> break_even_months(double purchase, double rent_per_hour, double running_per_hour,
                                        double hours_per_month);

}  // namespace llmsim::analysis
