#pragma once
// Money: what a deployment costs per hour and per month, what a million SLO-meeting tokens cost, and how
// long the weights take to download. DESIGN.md "The question it must answer" holds the worked examples.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmsim/metrics/summary.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::analysis {

/// USD per million tokens served at `tokens_per_s` by something costing `hourly_usd` per hour:
/// hourly ÷ (tokens/s × 3600) × 1e6 (4/h at 80 tok/s → 13.89). nullopt when tokens_per_s <= 0 (no tokens,
/// no price per token — never a silent 0). ConfigError when hourly_usd is negative or not finite.
std::optional<double> cost_per_mtok(double hourly_usd, double tokens_per_s);

/// What renting costs over a period of `period_hours` in which the GPUs were held for `gpu_hours` in total (a fixed
/// fleet: gpus × period; an autoscaled one: the sum of its replica-hours × GPUs per replica):
/// price × gpu_hours × (1 + ops_overhead_fraction) + (storage + network per month) × period_hours / hours_per_month.
/// In cost.currency. ConfigError for a negative price, hours or a bad hours_per_month.
double period_cost(double price_per_gpu_hour, double gpu_hours, double period_hours, const spec::CostSpec& cost);
/// Per hour of a deployment of `gpus` GPUs at `price_per_gpu_hour`: period_cost over one hour,
/// price × gpus × (1 + ops_overhead_fraction) + (storage + network per month) / hours_per_month.
double hourly_cost(double price_per_gpu_hour, int gpus, const spec::CostSpec& cost);
/// hourly_cost() of the scenario's whole deployment (tp × pp × replicas GPUs; disaggregated: both pools' GPUs, each
/// at its own price), its hot spares (failures.spares: billed, loaded, idle until a failure) included.
double hourly_cost(const spec::ResolvedScenario& scenario);
/// What the deployment's GPUs alone cost per hour (no overhead, no extras): price × GPUs, summed over the pools of a
/// disaggregated deployment.
double gpus_hourly(const spec::ResolvedScenario& scenario);
/// Per hour of `units` copies of the unit gpus_per_unit() counts (one replica, a disaggregated deployment with both
/// pools at their prices, or a heterogeneous fleet): what a capacity row's fleet of replicas_needed units is billed
/// (and what search bounds bills with).
double units_hourly(const spec::ResolvedScenario& scenario, int units);
/// GPUs of the hot spares (failures.spares) a deployment holds beside its replicas: spares × one replica's GPUs (the
/// prefill pool's replica when disaggregated); 0 for a heterogeneous fleet (its members name their own replicas).
int spare_gpus(const spec::ResolvedScenario& scenario);
/// Deployment replicas of the scenario: hardware.replicas, or summed over a heterogeneous fleet's members.
int serving_replicas(const spec::ResolvedScenario& s);
/// GPUs of the unit a capacity row sizes copies of: one replica (tp × pp), or a whole heterogeneous fleet.
int gpus_per_unit(const spec::ResolvedScenario& s);

/// The price per GPU-hour to bill when a scenario written for `own_gpu` (priced `own_price`, if it says) runs on
/// `gpu` (both GPU options, spec/gpu_option.hpp: "2xa100-80gb-sxm" is still an A100 SXM): `price` when given
/// (--price, --prices); else `own_price` only on the same card, since it priced that card; else nullopt, i.e. the
/// new card's catalogue price. compare, capacity/simulate --gpu, sweep grids over hardware.gpu and Python all
/// price through this, so a card costs the same wherever it is asked about. The purchase price follows the card by
/// the same rule.
std::optional<double> price_on_gpu(const std::string& own_gpu, std::optional<double> own_price, const std::string& gpu,
                                   std::optional<double> price = std::nullopt);
/// Puts the scenario on `gpu` (a GPU option), priced by price_on_gpu() (hourly `price`, purchase `purchase_price`).
void set_gpu(spec::Scenario& scenario, const std::string& gpu, std::optional<double> price = std::nullopt,
             std::optional<double> purchase_price = std::nullopt);

/// The scenario JSON object with dotted-path overrides applied (spec::set_json_path, in order), then repriced as
/// set_gpu() does (reprice_moved_cards): when the overrides move it to another card without pricing it, the base's
/// prices — which priced the base's card — are dropped so the new card's catalogue prices apply. What Python's keyword overrides and its sweep points use.
/// ConfigError for a path that is not a scenario field. `rule` merge applies each value as an axis value
/// (spec::merge_json_path: an object over a section merges into the base's; search's candidates), replace as `--set`.
enum class OverrideRule { replace, merge };
Json apply_overrides(Json scenario, const std::vector<std::pair<std::string, Json>>& overrides,
                     OverrideRule rule = OverrideRule::replace);
/// The one repricing rule for overrides that move a card (Python keywords, search candidates, sweep grid points):
/// in each section that names and prices a card — hardware, disaggregation.prefill, disaggregation.decode — a
/// price_per_gpu_hour / purchase_price_per_gpu the base gave for its card is dropped when `doc` names another card
/// there (price_on_gpu) and the overrides do not price it themselves (the field, or a section above it replaced
/// whole or merged with the field in it).
void reprice_moved_cards(Json& doc, const Json& base, const std::vector<std::pair<std::string, Json>>& overrides,
                         OverrideRule rule);

/// What engine::cold_start_s counted, for a reader beside the figure: "weights over 1 Gbps + engine start 60 s"
/// (the link autoscaler.load_gbps or cost.network_gbps), or "autoscaler.scale_up_delay_s" when the user set it.
std::string cold_start_basis(const spec::Scenario& scenario);

/// USD (cost.currency) per million tokens of a fleet costing `fleet_hourly` per hour whose `serving` replicas each
/// deliver `tokens_per_s_per_replica` SLO-meeting tokens (spares deliver none): what a million tokens cost at the
/// user's load. nullopt without tokens.
std::optional<double> fleet_cost_per_mtok(double fleet_hourly, int serving, double tokens_per_s_per_replica);

/// Replicas needed to carry `target_qps` when one replica sustains `qps_per_replica`, plus the spare
/// fraction (rounded up). nullopt when qps_per_replica <= 0 (no number of replicas is enough).
std::optional<int> replicas_needed(double target_qps, double qps_per_replica, double spare_fraction);

/// The cost fields of a simulated summary: per_hour of the deployment, per Mtok of SLO-meeting output and
/// total tokens (goodput_output_tps / goodput_total_tps; 0 when no request met the SLO, as
/// metrics::CostSummary documents), monthly bill at hours_per_month, cold start. For an autoscaled run the headline
/// fields (per_hour, monthly, per_mtok_*) are the run's own bill (period: the replica-hours it held), not
/// hardware.replicas held all the time.
metrics::CostSummary cost_summary(const spec::ResolvedScenario& scenario, const metrics::Summary& summary);

}  // namespace llmsim::analysis
