// `llmsim simulate`: run one scenario through the serving engine and print the summary.
#include <cmath>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include "common.hpp"
#include "output_file.hpp"
#include "signals.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/analysis/capacity.hpp"
#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/metrics/summary.hpp"
#include "llmsim/metrics/time_series.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::cli {

namespace {

// Records as CSV through an OutputFile: every write checked, the file complete at its final path or absent.
void write_requests_csv(OutputFile& out, const std::vector<engine::RequestRecord>& recs) {
  out.write("id,tenant,replica,arrival_s,admitted_s,first_token_s,finish_s,input_tokens,output_tokens,preemptions,warmup,"
            "outcome,retries\n");
  std::ostringstream line;
  line.precision(9);
  for (const auto& r : recs) {
    line.str("");
    line << r.id << ',' << r.tenant << ',' << r.replica << ',' << r.arrival_s << ',' << r.admitted_s << ','
         << r.first_token_s << ',' << r.finish_s << ',' << r.input_tokens << ',' << r.output_tokens << ','
         << r.preemptions << ',' << (r.warmup ? 1 : 0) << ',' << engine::outcome_name(r.outcome) << ',' << r.retries
         << '\n';
    out.write(line.str());
  }
  out.commit();
}

void write_iterations_csv(OutputFile& out, const std::vector<engine::IterationRecord>& recs) {
  out.write("start_s,duration_s,replica,virtual_engine,prefill_tokens,prefill_seqs,decode_seqs,waiting,kv_blocks_used\n");
  std::ostringstream line;
  line.precision(9);
  for (const auto& r : recs) {
    line.str("");
    line << r.start_s << ',' << r.duration_s << ',' << r.replica << ',' << r.virtual_engine << ',' << r.prefill_tokens
         << ',' << r.prefill_seqs << ',' << r.decode_seqs << ',' << r.waiting << ',' << r.kv_blocks_used << '\n';
    out.write(line.str());
  }
  out.commit();
}

void print_latency(Table& t, const char* name, const metrics::LatencyStats& l) {
  // No sample (no measured request completed, or none got that far): "-", never 0.0 ms read as a latency.
  if (l.count == 0) {
    t.add({name, "-", "-", "-", "-", "-"});
    return;
  }
  t.add({name, fmt(l.mean, 1), fmt(l.p50, 1), fmt(l.p90, 1), fmt(l.p95, 1), fmt(l.p99, 1)});
}

void print_rates(Table& t, const char* name, const metrics::Throughput& r, bool present) {
  auto v = [&](double x, int d) { return present ? fmt(x, d) : std::string("-"); };
  t.add({name, v(r.requests_per_s, 2), v(r.output_tokens_per_s, 1), v(r.total_tokens_per_s, 1)});
}

void print_time_series(const std::vector<metrics::TimeWindow>& ts) {
  if (ts.empty()) return;
  // At most ~30 rows: every k-th window, so a long run still fits a screen (--json has them all).
  const std::size_t step = (ts.size() + 29) / 30;
  Table t({"window (s)", "arrivals", "done", "waiting", "max wait", "running", "KV %", "TTFT p95 ms"});
  for (std::size_t i = 0; i < ts.size(); i += step) {
    const auto& w = ts[i];
    t.add({fmt(w.start_s, 0) + "-" + fmt(w.end_s, 0), std::to_string(w.arrivals), std::to_string(w.completions),
           fmt(w.mean_waiting, 1), fmt(w.max_waiting, 0), fmt(w.mean_running, 1), fmt(100 * w.mean_kv_used, 1),
           w.has_latency ? fmt(w.ttft_p95_ms, 0) : std::string("-")});
  }
  std::cout << "\ntime series (" << ts.size() << " windows of " << fmt(ts.front().end_s - ts.front().start_s, 2)
            << " s" << (step > 1 ? ", every " + std::to_string(step) + "th shown" : std::string()) << ")\n";
  t.print(std::cout);
}

// A catalogue price (not the user's) in the bill: the deployment's card, or either pool's.
bool placeholder_price(const spec::ResolvedScenario& rs) {
  if (rs.disagg_pools.empty()) return rs.price_is_placeholder;
  return rs.disagg_pools[0].price_is_placeholder || rs.disagg_pools[1].price_is_placeholder;
}

void print_human(const spec::ResolvedScenario& rs, const metrics::Summary& s) {
  const auto& sc = rs.scenario;
  std::string on = " on ";
  if (sc.disaggregation) {
    on = " disaggregated (pools below)";
  } else if (!rs.fleet.empty()) {  // its top-level gpu is the first member's: name them all
    on += "a fleet of";
    for (std::size_t k = 0; k < rs.fleet.size(); ++k) {
      const auto& hw = rs.fleet[k].scenario.hardware;
      on += (k ? " + " : " ") + std::to_string(hw.replicas) + " x " + std::to_string(hw.parallel.gpus()) + " " +
            rs.fleet[k].gpu.id;
    }
  } else {
    on += std::to_string(sc.hardware.replicas) + " x " + std::to_string(sc.hardware.parallel.gpus()) + " " + rs.gpu.id;
  }
  std::cout << "scenario: " << (sc.name.empty() ? sc.model : sc.name) << " | " << rs.model.id << " " << sc.weights << on
            << " | policy " << spec::to_string(sc.engine.policy) << "\n";
  if (!rs.interconnect.empty() && !sc.disaggregation) std::cout << "interconnect: " << rs.interconnect << "\n";
  print_disaggregation(rs, s.fits ? &s : nullptr);
  if (s.fits) print_fleet_pools(s);
  if (!s.fits) {
    std::cout << "cannot run: " << s.reason << "\n";
    return;
  }
  std::cout << "engine: " << s.engine;
  if (!sc.engine.synthetic_service && !sc.disaggregation)  // a pool's knobs are on its line above
    std::cout << ", max_num_seqs " << sc.engine.max_num_seqs << ", max_num_batched_tokens " << sc.engine.max_num_batched_tokens;
  if (s.max_model_len > 0) std::cout << ", " << memory::describe_context(s.max_model_len, s.max_model_len_note);
  std::cout << "\n";
  if (s.unstable) std::cout << "UNSTABLE: " << metrics::unstable_cause(s) << "\n";  // the heading says it once
  else if (!s.complete) std::cout << "INCOMPLETE: " << s.reason << "\n";
  if (s.offered.arrivals == 0)
    std::cout << "NO MEASURED REQUEST: none arrived after the warm-up (workload.warmup_requests = "
              << sc.workload.warmup_requests << ") before the run ended; nothing below is a measurement\n";
  std::cout << "completed " << s.completed_requests << " requests";
  // The warm-up the statistics leave out, said where the count is (its default scales with num_requests).
  if (s.warmup.arrivals > 0) std::cout << " after " << s.warmup.arrivals << " warm-up requests (left out)";
  std::cout << " in " << fmt(s.duration_s, 1) << " s"
            << " (rejected " << s.rejected_requests << ", clipped " << s.clipped_requests << ", preemptions "
            << s.preemptions << ", iterations " << s.iterations << "); mean in system " << fmt(s.mean_in_system, 2)
            << ", batch up to " << s.batch.max_seqs << " sequences\n";
  if (s.failed_requests + s.timed_out_requests + s.requeued_requests + s.unfinished_requests > 0)
    std::cout << "not completed: failed " << s.failed_requests << ", timed out " << s.timed_out_requests
              << ", unfinished at the end " << s.unfinished_requests << " (requeued " << s.requeued_requests << "); "
              << fmt(s.wasted_output_tokens, 0) << " output tokens wasted\n";
  std::cout << "\n";
  Table rates({"throughput", "req/s", "output tok/s", "total tok/s"});
  metrics::Throughput offered;
  offered.requests_per_s = s.offered.requests_per_s;
  const bool has_offered = s.offered.window_s > 0;
  // No measured arrival at all (a horizon or a stop inside the warm-up) is not "all at once".
  rates.add({"offered", has_offered ? fmt(offered.requests_per_s, 2)
                        : s.offered.arrivals == 0 ? std::string("-") : std::string("all at once"), "", ""});
  print_rates(rates, "achieved over the run", s.throughput, true);
  print_rates(rates, "steady state (to the last arrival)", s.steady_state.throughput, s.steady_state.window_s > 0);
  print_rates(rates, "saturation (while requests waited)", s.saturation.throughput, s.saturation.time_s > 0);
  rates.print(std::cout);
  std::cout << "drain after the last arrival: " << fmt(s.drain.duration_s, 1) << " s, " << s.drain.completed_requests
            << " requests\n\n";
  Table t({"latency (ms)", "mean", "p50", "p90", "p95", "p99"});
  print_latency(t, "TTFT", s.ttft_ms);
  print_latency(t, "TPOT", s.tpot_ms);
  print_latency(t, "ITL", s.itl_ms);
  print_latency(t, "E2E", s.e2e_ms);
  print_latency(t, "queue", s.queue_ms);
  t.print(std::cout);
  // How far to trust these numbers: the validation residuals of this regime (analysis/error_band.hpp).
  if (s.error_band.known) {
    std::cout << "trust: TTFT " << s.error_band.ttft.text << "\n       TPOT/ITL/E2E " << s.error_band.latency.text
              << "\n       throughput " << s.error_band.throughput.text << "\n";
  }
  // With no latency target anywhere (analysis::has_slo, a class's own SLO counts) there is nothing to meet; a run that
  // completed nothing is not met either way (metrics: slo_met is false then).
  const bool slo_set = analysis::has_slo(sc);
  std::cout << "\n" << (slo_set ? (s.slo_met ? "SLO met" : "SLO NOT met")
                         : s.completed_requests > 0 ? "no SLO set" : "no SLO set; NOT met: no request completed")
            // No SLO: no attainment either (every request would "meet" it: 100 %, which says nothing).
            // nor goodput (the SLO-meeting rate would be the throughput again): the JSON writes null for both.
            << (s.slo_set ? "; attainment " + fmt(100 * s.slo_attainment, 1) + "%, goodput " + fmt(s.goodput_rps, 2) +
                                " req/s, " + fmt(s.goodput_output_tps, 1) + " output tok/s"
                          : std::string(" (nothing to meet, so no goodput)"))
            << "\n";
  std::cout << "KV capacity " << s.kv.capacity_tokens << " tokens/replica" << (rs.fleet.empty() ? "" : " (the smallest member's)")
            << ", peak " << fmt(100 * s.kv.peak_used_fraction, 1)
            << "%, mean " << fmt(100 * s.kv.mean_used_fraction, 1) << "%; MFU " << fmt(100 * s.mfu, 1) << "%, MBU "
            << fmt(100 * s.mbu, 1) << "%\n";
  if (s.kv.host_tier && s.kv.prefix_cache_query_tokens > 0)  // engine.kv_offload_gb (docs/engine.md "Host KV tier")
    std::cout << "host KV tier " << fmt(s.kv.host_capacity_gb, 1) << " GiB: prompt tokens from the GPU cache "
              << fmt(100 * s.kv.prefix_cache_hit_tokens / s.kv.prefix_cache_query_tokens, 1) << "%, from the host tier "
              << fmt(100 * s.kv.host_cache_hit_tokens / s.kv.prefix_cache_query_tokens, 1) << "%; "
              << fmt(s.kv.host_stored_gb, 1) << " GiB stored, " << fmt(s.kv.host_loaded_gb, 1) << " GiB loaded over PCIe\n";
  const std::string cur = sc.cost.currency == "USD" ? "$" : sc.cost.currency + " ";  // money is labelled, never converted
  auto f_autoscaled = [](const metrics::Summary& x) { return x.fleet.autoscaled; };
  std::cout << "cost " << cur << fmt(s.cost.per_hour, 2) << "/h" << (s.fleet.autoscaled ? " (autoscaled: mean over the run)" : "")
            << ", " << cur << fmt(s.cost.monthly, 0) << "/month" << (placeholder_price(rs) ? " (placeholder price)" : "") << "; "
            << (s.cost.per_mtok_output_slo > 0 ? cur + fmt(s.cost.per_mtok_output_slo, 3)
                                               : std::string("n/a (no request met the SLO)"))
            << " per million " << metrics::priced_output_tokens(s.slo_set)
            << (f_autoscaled(s) ? " (the run's bill below)"
                                : s.slo_set ? " (hourly price / SLO-meeting tokens per hour)" : " (hourly price / tokens per hour)")
            << "; cold start " << fmt(s.cost.cold_start_s, 0) << " s"
            << " (" << analysis::cold_start_basis(sc) << (sc.autoscaler ? "; the autoscaler's start delay)" : ")") << "\n";
  // The run's own bill (fleet.replica_hours), which the line above leads with for an autoscaled fleet.
  const auto& f = s.fleet;
  if (s.cost.period_hours > 0) {
    auto hours = [](double h) { return h == 0 ? std::string("0") : fmt(h, h < 0.1 ? 4 : h < 10 ? 2 : 1); };
    std::cout << "fleet " << (f.autoscaled ? "autoscaled" : "fixed") << ": " << hours(f.replica_hours)
              << " replica-hours over " << hours(s.cost.period_hours) << " h (" << hours(f.idle_replica_hours)
              << " idle), peak " << f.peak_replicas << " replicas";
    if (f.autoscaled)
      std::cout << ", " << f.scale_ups << " starts of " << fmt(f.scale_up_delay_s, 0) << " s, " << f.scale_downs << " stops";
    std::cout << "; bill " << cur << fmt(s.cost.period, 2) << " (" << cur << fmt(s.cost.period_monthly, 0) << "/month), "
              << (s.cost.period_per_mtok_output_slo > 0 ? cur + fmt(s.cost.period_per_mtok_output_slo, 3) : std::string("n/a"))
              << " per million " << metrics::priced_output_tokens(s.slo_set)
              << (f.autoscaled ? "" : " over the run (its replica-hours, the drain after the last arrival included)") << "\n";
  }
  if (f.hours.size() > 1 && f.autoscaled) {
    std::cout << "hour  arrivals  SLO met  replicas billed/ready\n";
    for (const auto& h : f.hours) {
      const double a = h.slo_attainment();
      std::cout << std::setw(4) << static_cast<long long>(h.start_s / 3600) << std::setw(10) << h.arrivals << std::setw(8)
                << (!s.slo_set ? std::string("no SLO") : a >= 0 ? fmt(100 * a, 1) + "%" : std::string("-")) << "   " << fmt(h.replicas_billed, 2) << " / "
                << fmt(h.replicas_ready, 2) << "\n";
    }
  }
  for (const auto& c : s.classes)
    std::cout << "  class " << c.name << ": " << c.completed_requests << " done, TTFT p95 " << fmt(c.ttft_ms.p95, 1)
              << " ms, TPOT p95 " << fmt(c.tpot_ms.p95, 1) << " ms, "
              << (s.slo_set ? "attainment " + fmt(100 * c.slo_attainment, 1) + "%, " : std::string())
              << (!s.slo_set ? "no SLO set" : c.slo_met ? "SLO met" : "SLO NOT met") << "\n";
}

int run_simulate(int argc, char** argv) {
  return guarded("simulate", [&] {
    po::options_description opts("llmsim simulate options");
    po::positional_options_description pos;
    add_scenario_options(opts, pos);
    opts.add_options()
        ("json", "print the summary as JSON (the result format)")
        ("requests-csv", po::value<std::string>(), "write one row per request to this CSV file")
        ("iterations-csv", po::value<std::string>(), "write one row per engine iteration to this CSV file")
        ("time-series", po::value<double>(), "report the run per window of this many seconds (0 = automatic): queue, "
                                             "batch, KV use, arrivals, completions, TTFT (in --json: \"time_series\")")
        ("seed", po::value<long long>(), "override workload.seed")
        ("rate", po::value<double>(), "override the offered rate (requests/s; closed loop: concurrency)")
        ("num-requests", po::value<long long>(), "override workload.num_requests")
        ("quant", po::value<std::string>(), "override quant.weights");
    add_gpu_options(opts);
    po::variables_map vm;
    if (!parse_args(argc, argv, opts, vm,
                    "usage: llmsim simulate SCENARIO.json [--set PATH=VALUE ...] [--vllm-args \"vllm serve ...\" | --sglang-args \"...\"] [--json] [--requests-csv F] "
                    "[--iterations-csv F] [--time-series S] [--seed N] [--rate QPS] [--num-requests N] [--gpu G] "
                    "[--price USD] [--quant Q]",
                    &pos)) {
      return kOk;
    }
    Json doc = load_scenario(vm);
    if (vm.count("seed")) {
      if (vm["seed"].as<long long>() < 0) throw ConfigError("--seed", "must be >= 0, got " + std::to_string(vm["seed"].as<long long>()));
      spec::set_json_path(doc, "workload.seed", vm["seed"].as<long long>());
    }
    if (vm.count("num-requests")) spec::set_json_path(doc, "workload.num_requests", vm["num-requests"].as<long long>());
    if (vm.count("quant")) spec::set_json_path(doc, "quant.weights", vm["quant"].as<std::string>());
    spec::Scenario scenario = spec::scenario_from_json(JsonView(doc, ""));
    apply_gpu_options(scenario, vm);
    if (vm.count("rate")) scenario.workload = spec::with_rate(scenario.workload, vm["rate"].as<double>());
    const auto resolved = spec::resolve(scenario, spec::Catalog::builtin());

    CancelScope interrupts;  // first, so that no signal can leave a temporary output file behind
    // Output files open before the run: a missing directory fails now, not after the simulation.
    std::optional<OutputFile> requests_csv, iterations_csv;
    if (vm.count("requests-csv")) requests_csv.emplace(vm["requests-csv"].as<std::string>(), "--requests-csv");
    if (vm.count("iterations-csv")) iterations_csv.emplace(vm["iterations-csv"].as<std::string>(), "--iterations-csv");
    engine::SimulationOptions options;
    options.record_requests = requests_csv.has_value();
    options.record_iterations = iterations_csv.has_value();
    options.cancel = interrupts.flag();
    if (vm.count("time-series")) {
      options.time_series_window_s = vm["time-series"].as<double>();
      if (!(options.time_series_window_s >= 0) || !std::isfinite(options.time_series_window_s))
        throw ConfigError("--time-series", "must be >= 0 seconds (0 = automatic), got " + format_given(options.time_series_window_s));
    }
    const auto result = analysis::evaluate(resolved, options);  // simulate + the cost fields
    if (requests_csv) write_requests_csv(*requests_csv, result.requests);
    if (iterations_csv) write_iterations_csv(*iterations_csv, result.iterations);
    for (const auto& w : result.summary.warnings) std::cerr << "warning: " << w << "\n";
    if (vm.count("json")) {
      Json j = metrics::to_json(result.summary);
      if (vm.count("time-series")) j["time_series"] = metrics::to_json(result.time_series);
      print_json(j);
    } else {
      print_human(resolved, result.summary);
      print_time_series(result.time_series);
    }
    return kOk;
  });
}

}  // namespace

Command command_simulate() {
  return {"simulate", "run a scenario through the serving engine: latency percentiles, throughput, SLO, KV use",
          run_simulate};
}

}  // namespace llmsim::cli
