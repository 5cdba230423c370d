#pragma once
// Private to the spec layer: the scenario's bound on its bill, checked in scenario_validate.cpp's terms and applied
// by resolve (scenario_resolve.cpp) once the price is known.
namespace llmsim::spec {
struct Scenario;
}

namespace llmsim::spec::detail {

/// The deployment's own monthly bill at `price` per GPU-hour must stay a finite amount in range; throws a
/// ConfigError naming the price that caused it.
void check_monthly_bill(const Scenario& s, double price);

}  // namespace llmsim::spec::detail
