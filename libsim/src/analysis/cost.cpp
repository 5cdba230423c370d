#include "llmsim/analysis/cost.hpp"

#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/engine/autoscaler.hpp"
#include "llmsim/spec/gpu_option.hpp"

namespace llmsim::analysis {

int serving_replicas(const spec::ResolvedScenario& s) {
  if (s.fleet.empty()) return s.scenario.hardware.replicas;
  int n = 0;
  for (const auto& m : s.fleet) n += m.scenario.hardware.replicas;
  return n;
}

int gpus_per_unit(const spec::ResolvedScenario& s) {
  return s.fleet.empty() && s.disagg_pools.empty() ? s.scenario.hardware.parallel.gpus() : spec::total_gpus(s);
}

std::optional<double> cost_per_mtok(double hourly_usd, double tokens_per_s) {
  if (!std::isfinite(hourly_usd) || hourly_usd < 0)
    throw ConfigError("cost.per_hour", "must be a finite number >= 0, got " + format_given(hourly_usd));
  if (!std::isfinite(tokens_per_s) || tokens_per_s <= 0) return std::nullopt;
  return hourly_usd / (tokens_per_s * 3600.0) * 1e6;
}

double period_cost(double price_per_gpu_hour, double gpu_hours, double period_hours, const spec::CostSpec& cost) {
  Problems p;
  if (!std::isfinite(price_per_gpu_hour) || price_per_gpu_hour < 0)
    p.add("hardware.price_per_gpu_hour", "must be >= 0, got " + format_given(price_per_gpu_hour));
  if (!(gpu_hours >= 0) || !std::isfinite(gpu_hours)) p.add("gpu_hours", "must be >= 0, got " + format_given(gpu_hours));
  if (!(period_hours >= 0) || !std::isfinite(period_hours))
    p.add("period_hours", "must be >= 0, got " + format_given(period_hours));
  if (!(cost.hours_per_month > 0))
    p.add("cost.hours_per_month", "must be > 0, got " + format_given(cost.hours_per_month));
  p.throw_if_any();
  const double extras = (cost.storage_per_month + cost.network_per_month) * period_hours / cost.hours_per_month;
  return price_per_gpu_hour * gpu_hours * (1.0 + cost.ops_overhead_fraction) + extras;
}

double hourly_cost(double price_per_gpu_hour, int gpus, const spec::CostSpec& cost) {
  if (gpus < 1) throw ConfigError("hardware", "needs at least one GPU, got " + std::to_string(gpus));
  return period_cost(price_per_gpu_hour, gpus, 1.0, cost);
}

double gpus_hourly(const spec::ResolvedScenario& s) {
  // A fleet's price is the GPU-weighted mean of its members' (spec::resolve_fleet): × its GPUs = Σ price × GPUs.
  if (s.disagg_pools.empty()) return s.price_per_gpu_hour * spec::total_gpus(s);
  double usd = 0;
  for (const auto& p : s.disagg_pools) usd += p.price_per_gpu_hour * p.scenario.hardware.gpus_total();
  return usd;
}

double units_hourly(const spec::ResolvedScenario& s, int units) {
  return s.disagg_pools.empty() ? hourly_cost(s.price_per_gpu_hour, gpus_per_unit(s) * units, s.scenario.cost)
                                : period_cost(1.0, gpus_hourly(s) * units, 1.0, s.scenario.cost);
}

int spare_gpus(const spec::ResolvedScenario& s) {
  if (!s.fleet.empty()) return 0;
  const auto& unit = s.disagg_pools.empty() ? s : s.disagg_pools.front();
  return s.scenario.failures.spares * unit.scenario.hardware.parallel.gpus();
}

double hourly_cost(const spec::ResolvedScenario& s) {
  // Disaggregated: both pools' GPUs, each at its own price (period_cost at a unit price over the priced GPU-hours).
  if (!s.disagg_pools.empty())
    return period_cost(1.0, gpus_hourly(s) + spare_gpus(s) * s.disagg_pools.front().price_per_gpu_hour, 1.0,
                       s.scenario.cost);
  return hourly_cost(s.price_per_gpu_hour, spec::total_gpus(s) + spare_gpus(s), s.scenario.cost);
}

std::optional<double> price_on_gpu(const std::string& own_gpu, std::optional<double> own_price, const std::string& gpu,
                                   std::optional<double> price) {
  if (price) return price;
  const auto card = [](const std::string& option) {
    try {
      return spec::parse_gpu_option(option).card;
    } catch (const ConfigError&) {
      return option;  // not an option: compare as written, and let resolve() report it
    }
  };
  return own_gpu == gpu || card(own_gpu) == card(gpu) ? own_price : std::nullopt;
}

void set_gpu(spec::Scenario& s, const std::string& gpu, std::optional<double> price,
             std::optional<double> purchase_price) {
  auto& hw = s.hardware;
  spec::refuse_hardware_card_field("gpu", s.disaggregation.has_value(), !hw.fleet.empty(), "gpu");
  hw.price_per_gpu_hour = price_on_gpu(hw.gpu, hw.price_per_gpu_hour, gpu, price);
  hw.purchase_price_per_gpu = price_on_gpu(hw.gpu, hw.purchase_price_per_gpu, gpu, purchase_price);
  hw.gpu = gpu;
  // A count ("2xa100-80gb-sxm") places the split with the card, as spec::set_json_path does for hardware.gpu: a tp/pp
  // of 1 written for the scenario's own card no longer counts as given (other values still must agree).
  bool counted = false;
  try {
    counted = spec::parse_gpu_option(gpu).count_given;
  } catch (const ConfigError&) {  // reported where the scenario is resolved
  }
  if (counted) {
    hw.parallel.tp_given = hw.parallel.tp_given && hw.parallel.tp != 1;
    hw.parallel.pp_given = hw.parallel.pp_given && hw.parallel.pp != 1;
  }
}

namespace {

// The sections that name a card and price it: a colocated scenario's hardware and a disaggregated one's two pools.
const std::vector<std::string>& card_sections() {
  static const std::vector<std::string> s{"hardware", "disaggregation.prefill", "disaggregation.decode"};
  return s;
}

/// The node at a dotted path of `doc`, or nullptr (const or not, as `doc` is).
template <class J>
J* node_at_path(J& doc, const std::string& dotted) {
  J* j = &doc;
  std::size_t start = 0;
  while (true) {
    const auto dot = dotted.find('.', start);
    const std::string key = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!j->is_object() || !j->contains(key)) return nullptr;
    j = &(*j)[key];
    if (dot == std::string::npos) return j;
    start = dot + 1;
  }
}

/// The card a section names, as text (an inline GPU object as its compact JSON); hardware's default card when
/// hardware names none; nullopt for a pool without one.
std::optional<std::string> card_of(const Json* section, const std::string& name) {
  if (section && section->is_object() && section->contains("gpu")) {
    const Json& g = (*section)["gpu"];
    if (g.is_string()) return g.get<std::string>();
    if (g.is_object()) return g.dump();
  }
  if (name == "hardware") return spec::Deployment{}.gpu;
  return std::nullopt;
}

/// Whether the overrides give `field` a price: the field itself (not null), or a section above it replaced whole
/// (OverrideRule::replace) or merged with a value that holds the field.
bool overrides_price(const std::vector<std::pair<std::string, Json>>& overrides, const std::string& field,
                     OverrideRule rule) {
  for (const auto& [path, value] : overrides) {
    if (path == field) {
      if (!value.is_null()) return true;
      continue;
    }
    if (field.size() > path.size() && field.compare(0, path.size(), path) == 0 && field[path.size()] == '.') {
      if (rule == OverrideRule::replace) return true;
      const Json* v = node_at_path(value, field.substr(path.size() + 1));
      if (v && !v->is_null()) return true;
    }
  }
  return false;
}

}  // namespace

void reprice_moved_cards(Json& doc, const Json& base, const std::vector<std::pair<std::string, Json>>& overrides,
                         OverrideRule rule) {
  for (const auto& section : card_sections()) {
    Json* here = node_at_path(doc, section);
    if (!here || !here->is_object()) continue;
    const auto base_gpu = card_of(node_at_path(base, section), section);
    const auto gpu = card_of(here, section);
    if (!base_gpu || !gpu) continue;
    Json& sec = *here;
    for (const char* key : {"price_per_gpu_hour", "purchase_price_per_gpu"}) {
      if (!sec.contains(key) || !sec[key].is_number() || overrides_price(overrides, section + "." + key, rule)) continue;
      if (!price_on_gpu(*base_gpu, sec[key].get<double>(), *gpu)) sec.erase(key);
    }
  }
}

Json apply_overrides(Json doc, const std::vector<std::pair<std::string, Json>>& overrides, OverrideRule rule) {
  const Json base = doc;
  for (const auto& [path, value] : overrides) {
    if (rule == OverrideRule::merge) spec::merge_json_path(doc, path, value);
    else spec::set_json_path(doc, path, value);
  }
  reprice_moved_cards(doc, base, overrides, rule);
  return doc;
}

std::optional<double> fleet_cost_per_mtok(double fleet_hourly, int serving, double tokens_per_s_per_replica) {
  if (serving < 1) return std::nullopt;
  return cost_per_mtok(fleet_hourly, serving * tokens_per_s_per_replica);
}

std::string cold_start_basis(const spec::Scenario& sc) {
  const auto& a = sc.autoscaler;
  if (a && a->scale_up_delay_s) return "autoscaler.scale_up_delay_s";
  return "weights over " + format_value(a && a->load_gbps > 0 ? a->load_gbps : sc.cost.network_gbps) + " Gbps + engine start " +
         format_value(a ? a->engine_start_s : spec::AutoscalerSpec{}.engine_start_s) + " s";
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
  // One cold start per output, one rule (engine::cold_start_s): the weights over the link plus the engine start.
  c.cold_start_s = engine::cold_start_s(s);
  // Only SLO-meeting requests count: the metrics layer's goodput rates are exactly those tokens per second.
  if (summary.fits) {
    c.per_mtok_output_slo = cost_per_mtok(c.per_hour, summary.goodput_output_tps).value_or(0.0);
    c.per_mtok_total_slo = cost_per_mtok(c.per_hour, summary.goodput_total_tps).value_or(0.0);
    // The run's own bill: the replica-hours the fleet was held (autoscaled or fixed) over the simulated period,
    // divided by the SLO-meeting output tokens the run delivered (failed and timed-out requests never count).
    const double period_h = summary.fleet.hours.empty() ? 0 : summary.fleet.hours.back().end_s / 3600;
    if (period_h > 0) {
      // GPUs per replica: tp × pp, or a fixed heterogeneous fleet's mean (all its replicas serve throughout).
      const double gpus_per_replica =
          s.fleet.empty() ? s.scenario.hardware.parallel.gpus()
                          : static_cast<double>(spec::total_gpus(s)) / serving_replicas(s);
      const double gpu_hours = summary.fleet.replica_hours * gpus_per_replica;
      c.period_hours = period_h;
      // Disaggregated pools are a fixed fleet: every pool's GPUs, at their prices, for the whole period.
      c.period = s.disagg_pools.empty() ? period_cost(s.price_per_gpu_hour, gpu_hours, period_h, s.scenario.cost)
                                        : period_cost(1.0, gpus_hourly(s) * period_h, period_h, s.scenario.cost);
      c.period_monthly = c.period * s.scenario.cost.hours_per_month / period_h;
      const double good_tokens = summary.goodput_output_tps * summary.duration_s;
      if (good_tokens > 0) c.period_per_mtok_output_slo = c.period / good_tokens * 1e6;
      // An autoscaled fleet is not hardware.replicas held all month: its headline is its own bill — the mean
      // hourly cost of the replica-hours it held, that bill per month and per million SLO-meeting tokens.
      if (summary.fleet.autoscaled) {
        c.per_hour = c.period / period_h;
        c.monthly = c.period_monthly;
        c.per_mtok_output_slo = c.period_per_mtok_output_slo;
        const double good_total = summary.goodput_total_tps * summary.duration_s;
        c.per_mtok_total_slo = good_total > 0 ? c.period / good_total * 1e6 : 0.0;
      }
    }
  }
  return c;
}

}  // namespace llmsim::analysis
