// `llmsim capacity`: the largest load a scenario's deployment carries inside its SLO, and what it costs.
#include <iostream>

#include "common.hpp"
#include "signals.hpp"
#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/row.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::cli {

namespace {

std::string slo_text(const spec::Scenario& sc) {
  // "none" only when no latency target is set anywhere (analysis::has_slo): a tenant class's own SLO counts.
  if (!analysis::has_slo(sc)) return "none (capacity = the largest stable load)";
  const auto& slo = sc.slo;
  if (slo.empty()) return "per tenant class (workload.classes[].slo)";
  std::string s;
  for (const auto& t : slo.targets)
    s += (s.empty() ? "" : ", ") + spec::to_string(t.metric) + " p" + format_value(t.percentile) + " <= " +
         format_value(t.max_ms);
  if (slo.min_attainment) s += (s.empty() ? "" : ", ") + std::string("attainment >= ") + format_value(*slo.min_attainment);
  return s;
}

std::string currency_mark(const std::string& currency) { return currency == "USD" ? "$" : currency + " "; }
std::string number(const Json& v, int decimals = 1) { return v.is_null() ? "-" : fmt(v.get<double>(), decimals); }

void print_human(const spec::ResolvedScenario& rs, const analysis::Row& row) {
  const Json j = analysis::to_json(row);
  const auto& sc = rs.scenario;
  const std::string cur = currency_mark(sc.cost.currency);
  auto money = [&](const Json& v, int decimals = 2) { return v.is_null() ? "-" : cur + fmt(v.get<double>(), decimals); };
  std::cout << "capacity: " << row.name << " | " << rs.model.id << " " << row.quant << " on ";
  if (rs.fleet.empty()) {  // a disaggregated deployment (both pools) is the unit that is copied
    std::cout << row.replicas << " x " << analysis::gpus_per_unit(rs) << " " << row.gpu << " (tp " << row.tp << ", pp "
              << row.pp << ")";
  } else {  // a heterogeneous fleet: its members, and the router that spreads the load over them
    std::cout << "a fleet of";
    for (std::size_t i = 0; i < rs.fleet.size(); ++i) {
      const auto& m = rs.fleet[i].scenario.hardware;
      std::cout << (i ? " +" : "") << " " << m.replicas << " x " << m.parallel.gpus() << " " << rs.fleet[i].gpu.id;
    }
    std::cout << " (router " << spec::to_string(sc.hardware.router) << "; copies of the whole fleet below)";
  }
  std::cout << "\nSLO: " << slo_text(sc) << "\n";
  if (!rs.interconnect.empty() && !sc.disaggregation) std::cout << "interconnect: " << rs.interconnect << "\n";
  print_disaggregation(rs, row.capacity && row.capacity->at_capacity ? &*row.capacity->at_capacity : nullptr);
  if (!row.fits) {
    std::cout << "cannot run: " << row.reason << "\n";
    return;
  }
  const auto& cap = *row.capacity;
  if (!cap.found) {
    std::cout << "no capacity: " << row.reason << "\n";
    return;
  }
  if (!cap.sized_at.empty()) std::cout << "sized at " << cap.sized_at << "\n";
  if (cap.at_capacity && cap.at_capacity->max_model_len > 0)
    std::cout << memory::describe_context(cap.at_capacity->max_model_len, cap.at_capacity->max_model_len_note) << "\n";
  // Sessions (workload.sessions): the load is sessions/s; their turns' req/s beside it.
  const metrics::SessionSummary* sessions =
      cap.at_capacity && cap.at_capacity->sessions ? &*cap.at_capacity->sessions : nullptr;
  std::cout << (sessions ? "max sessions/s " : "max QPS ") << fmt(cap.max_qps, 2)
            << (cap.sized_at.empty() || cap.closed_loop ? "" : " at the peak");
  if (sessions)
    std::cout << " (" << fmt(cap.at_capacity->throughput.requests_per_s, 2) << " req/s of turns, prefix-cache hit rate "
              << fmt(sessions->prefix_hit_rate, 2) << ")";
  if (cap.max_concurrency) std::cout << " at " << *cap.max_concurrency << " concurrent users";
  if (cap.replications.size() > 1)
    std::cout << " (95% CI " << fmt(cap.ci95_lo, 2) << " to " << fmt(cap.ci95_hi, 2) << " over "
              << cap.replications.size() << " seeds)";
  std::cout << "; " << cap.evaluations << " simulations" << (cap.hit_limit ? "; search limit reached" : "") << "\n";
  // The seeds' interval is the simulation's noise; the model's own error is the validation's (analysis/error_band).
  if (cap.at_capacity && cap.at_capacity->error_band.known)
    std::cout << "trust: capacity " << cap.at_capacity->error_band.throughput.text << "\n";
  // No latency target: no goodput (null in the JSON, slo_met_note says why), so the line says so instead of "-".
  std::cout << "at capacity: "
            << (j["goodput_rps"].is_null() ? std::string("no SLO set, so no goodput")
                                           : "goodput " + number(j["goodput_rps"], 2) + " req/s, " +
                                                 number(j["goodput_output_tps"]) + " output tok/s")
            << "; TTFT p95 " << number(j["ttft_ms"]["p95"]) << " ms, TPOT p95 "
            << number(j["tpot_ms"]["p95"]) << " ms, E2E p95 " << number(j["e2e_ms"]["p95"]) << " ms\n";
  const bool closed = cap.closed_loop;
  if (row.replicas_needed) {
    // A session workload's rate is sessions/s (its turns' req/s are several times it): say which.
    const std::string rate_unit = sessions ? " sessions/s" : " QPS";
    std::cout << "target " << (closed ? std::to_string(*row.target_concurrency) + " users" : fmt(row.target_qps, 2) + rate_unit)
              << ": " << money(j["cost_per_mtok_output_at_target"], 3) << " per million "
              << metrics::priced_output_tokens(j["slo_met_note"].is_null()) << ", "
              << money(j["monthly_cost"], 0) << "/month for ";
    // The bill's own basis: an autoscaled fleet is billed for the replica-hours its simulated run held, not the
    // sized fleet held all month (that is the "held fixed" figure on the bill line).
    if (const auto& b = row.autoscaled_bill)
      std::cout << b->min_replicas << "-" << b->max_replicas << " autoscaled replica(s) of " << analysis::gpus_per_unit(rs)
                << " GPU(s)"
                << (b->period_hours > 0 ? " (" + fmt(b->replica_hours / b->period_hours, 2) + " billed on average" +
                                              (b->spares > 0 ? ", spares included)" : ")")
                                        : std::string());
    else
      std::cout << *row.replicas_needed << (rs.fleet.empty() ? " replica(s) of " : " fleet(s) of ")
                << analysis::gpus_per_unit(rs) << " GPU(s) at " << format_value(sc.cost.hours_per_month) << " h";
    if (row.replicas_added > 0)
      std::cout << " (" << row.replicas_added << (sessions ? " more than max sessions/s suggests: " : " more than max QPS suggests: ")
                << (row.at_target_whole_fleet ? "the smaller fleet, simulated whole, missed the SLO)" : "one copy missed the SLO at that share)");
    if (row.at_target) {
      const Json& at = j["at_target"];
      // The unit copied: a replica, a whole heterogeneous fleet, or a disaggregated deployment (both pools).
      const std::string unit = row.at_target_whole_fleet
                                   ? "; the fleet of " + std::to_string(row.serving_replicas.value_or(0)) + " serving replica(s), router " +
                                         spec::to_string(sc.hardware.router) + ", "
                                   : !rs.fleet.empty() ? "; each fleet " : sc.disaggregation ? "; each deployment " : "; each replica ";
      std::cout << unit
                << (closed ? "with " + std::to_string(*row.at_target_concurrency) + " users (" + number(at["load_qps"], 2) + " req/s)"
                           : "at " + number(at["load_qps"], 2) + rate_unit)
                << " sees TTFT p95 " << number(at["ttft_ms"]["p95"]) << " ms, TPOT p95 " << number(at["tpot_ms"]["p95"])
                << " ms";
      if (!analysis::run_meets_slo(*row.at_target))
        std::cout << "\nSLO NOT met at target load: " << analysis::slo_failures(sc, *row.at_target);
    }
    std::cout << "\nbill: " << row.bill_basis << "\n";
    if (row.autoscaled_bill && !row.autoscaled_bill->slo_met)
      std::cout << "SLO NOT met on the autoscaled day billed: " << row.autoscaled_bill->reason
                << " (" << row.autoscaled_bill->miss_cause << ")\n";
  }
  std::cout << "cost at capacity: " << money(j["cost_per_hour"]) << "/h for one deployment, "
            << money(j["cost_per_mtok_output_slo"], 3) << " per million "
            << metrics::priced_output_tokens(j["slo_met_note"].is_null()) << " ("
            << money(j["cost_per_mtok_total_slo"], 3) << " per million total): the floor a fully loaded fleet approaches; "
            << "cold start " << number(j["cold_start_s"], 0) << " s (" << analysis::cold_start_basis(sc) << ")\n";
  if (sc.disaggregation)  // each pool's price is on its line above
    std::cout << "price: " << cur << fmt(row.price_per_gpu_hour, 2) << " per GPU-hour on average over both pools ("
              << sc.cost.currency << ")"
              << (row.price_is_placeholder ? ", a catalogue placeholder in a pool: set its price_per_gpu_hour" : "") << "\n";
  else
    std::cout << "price: " << cur << fmt(rs.price_per_gpu_hour, 2) << " per GPU-hour (" << sc.cost.currency << ")"
              << (rs.price_is_placeholder ? ", " + rs.gpu.price_label(true) + ": set hardware.price_per_gpu_hour or pass --price" : "")
              << "\n";
  if (!j["owned_monthly_cost"].is_null()) {
    std::cout << "owned: " << money(j["owned_monthly_cost"], 0) << "/month for the same fleet ("
              << money(j["owned_cost_per_gpu_hour"], 3) << " per GPU-hour: purchase "
              << money(j["purchase_price_per_gpu"], 0) << " over " << format_value(sc.cost.depreciation_years)
              << " y, energy, hosting), " << money(j["owned_cost_per_mtok_output_at_target"], 3)
              << " per million output tokens; buying pays back after "
              << (j["break_even_months"].is_null() ? std::string("never") : fmt(j["break_even_months"].get<double>(), 1) + " months")
              << (row.owned_note.empty() ? "" : " (" + row.owned_note + ")") << "\n";
  } else if (!row.owned_note.empty() && sc.cost.electricity_per_kwh) {
    std::cout << "owned: " << row.owned_note << "\n";
  }
  if (!row.quality_caveat.empty()) std::cout << row.quant << ": " << row.quality_caveat << "\n";
  if (!row.slo_headroom_note.empty()) std::cout << "SLO headroom: " << row.slo_headroom_note << "\n";
}

int run_capacity(int argc, char** argv) {
  return guarded("capacity", [&] {
    analysis::CapacityOptions defaults;
    po::options_description opts("llmsim capacity options");
    po::positional_options_description pos;
    add_scenario_options(opts, pos, "scenario JSON file (its SLO defines capacity)");
    opts.add_options()
        ("json", "print the row as JSON (capacity/compare/sweep row format)")
        ("quant", po::value<std::string>(), "override quant.weights")
        ("target-qps", po::value<double>(), "size the fleet for this load (default cost.target_qps, else the offered rate)")
        ("replications", po::value<int>()->default_value(defaults.replications), "independent seeds for the 95% CI")
        ("rel-tol", po::value<double>()->default_value(defaults.rel_tol), "relative tolerance of the bisection")
        ("requests", po::value<long long>()->default_value(defaults.num_requests), "requests per simulation (at most the scenario's)")
        ("max-evaluations", po::value<int>()->default_value(defaults.max_evaluations), "simulations per replication at most");
    add_gpu_options(opts);
    po::variables_map vm;
    if (!parse_args(argc, argv, opts, vm,
                    "usage: llmsim capacity SCENARIO.json [--set PATH=VALUE ...] [--vllm-args \"vllm serve ...\" | --sglang-args \"...\"] [--json] [--gpu G] [--price USD] "
                    "[--target-qps Q] [--replications N] [--rel-tol T] [--requests N]",
                    &pos)) {
      return kOk;
    }
    Json doc = load_scenario(vm);
    if (vm.count("quant")) spec::set_json_path(doc, "quant.weights", vm["quant"].as<std::string>());
    if (vm.count("target-qps")) spec::set_json_path(doc, "cost.target_qps", vm["target-qps"].as<double>());
    spec::Scenario scenario = spec::scenario_from_json(JsonView(doc, ""));
    apply_gpu_options(scenario, vm);
    const auto resolved = spec::resolve(scenario, spec::Catalog::builtin());
    print_scenario_warnings(scenario);

    analysis::RowOptions options;
    options.capacity = true;
    auto& c = options.capacity_options;
    c.replications = vm["replications"].as<int>();
    c.rel_tol = vm["rel-tol"].as<double>();
    c.num_requests = vm["requests"].as<long long>();
    c.max_evaluations = vm["max-evaluations"].as<int>();
    c.validate("capacity");
    CancelScope interrupts;
    options.cancel = interrupts.flag();
    const analysis::Row row = analysis::evaluate_row(resolved, options);
    if (vm.count("json")) print_json(analysis::to_json(row));
    else print_human(resolved, row);
    return kOk;
  });
}

}  // namespace

Command command_capacity() {
  return {"capacity", "largest QPS inside the SLO (bisection, 95% CI), goodput and $/Mtok there, replicas for a target",
          run_capacity};
}

}  // namespace llmsim::cli
