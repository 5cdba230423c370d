#include "llmsim/analysis/throughput.hpp"

#include <variant>

#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/spec/fleet.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/overloaded.hpp"

namespace llmsim::analysis {

namespace {

/// A class's share of an offline mix: its offered rate (open loop), its users (closed loop).
double offline_weight(const spec::ArrivalSpec& a, const spec::Workload& w) {
  return std::visit(Overloaded{
                        [](const spec::ClosedLoop& x) { return static_cast<double>(x.concurrency); },
                        [](const spec::OfflineArrivals& x) { return x.weight; },
                        [](const spec::TraceReplay&) -> double {
                          throw ConfigError("workload.arrival",
                                            "a trace fixes its own arrival times; simulate it instead of asking for "
                                            "an offline maximum throughput");
                        },
                        [&](const auto&) {
                          spec::Workload one = w;
                          one.classes.clear();
                          one.arrival = a;
                          return spec::offered_rate(one).value_or(1.0);
                        },
                    },
                    a);
}

}  // namespace

spec::Scenario offline_scenario(const spec::Scenario& scenario, const ThroughputOptions& options) {
  if (options.num_requests < 0)
    throw ConfigError("num_requests", "must be >= 1 (0 = the scenario's), got " + std::to_string(options.num_requests));
  spec::Scenario s = scenario;
  auto& w = s.workload;
  if (w.classes.empty()) {
    offline_weight(w.arrival, w);  // refuses a trace
    w.arrival = spec::OfflineArrivals{};
  } else {
    for (auto& c : w.classes) c.arrival = spec::OfflineArrivals{offline_weight(c.arrival, w)};
  }
  // Every request is queued at t = 0: a time of day has no meaning, so a daily profile (which scales a Poisson
  // rate, and refused the offline arrivals with "use process poisson") is dropped with the rate it scaled.
  // Its day-long request count (a profile without num_requests runs the whole day) goes with it: the default count.
  if (!w.daily_profile.empty() && w.num_requests == spec::kDailyProfileRequests) w.num_requests = spec::Workload{}.num_requests;
  w.daily_profile = spec::DailyProfile{};
  w.days = 1;
  if (options.num_requests > 0) w.num_requests = options.num_requests;
  w.warmup_requests = 0;  // vllm bench throughput measures every request
  w.horizon_s = 0;
  w.timeout_s = 0;  // nor does it time requests out (every request is queued at t = 0)
  return s;
}

ThroughputResult max_throughput(const spec::Scenario& scenario, const spec::Catalog& catalog,
                                const ThroughputOptions& options) {
  ThroughputResult out;
  out.scenario = spec::resolve(offline_scenario(scenario, options), catalog);
  out.summary = evaluate(out.scenario).summary;
  out.fits = out.summary.fits;
  out.reason = out.fits ? "" : out.summary.reason;
  // Every token counts: a throughput run has no latency target, so its price per token is at the achieved rate.
  auto& c = out.summary.cost;
  c.per_mtok_output_slo = cost_per_mtok(c.per_hour, out.summary.throughput.output_tokens_per_s).value_or(0.0);
  c.per_mtok_total_slo = cost_per_mtok(c.per_hour, out.summary.throughput.total_tokens_per_s).value_or(0.0);
  return out;
}

namespace {
// The deployment's cards as "replicas x gpus-per-replica id": every member of a fleet, both pools of a disaggregated
// deployment (whose top-level hardware section is not used).
std::string cards_text(const spec::ResolvedScenario& r) {
  auto one = [](const spec::ResolvedScenario& m) {
    const auto& hw = m.scenario.hardware;
    return std::to_string(hw.replicas) + " x " + std::to_string(hw.parallel.gpus()) + " " + m.gpu.id;
  };
  if (!r.disagg_pools.empty())
    return "prefill " + one(r.disagg_pools[0]) + ", decode " + one(r.disagg_pools[1]);
  if (r.fleet.empty()) return one(r);
  std::string s;
  for (const auto& m : r.fleet) s += (s.empty() ? "" : " + ") + one(m);
  return s;
}
}  // namespace

Json to_json(const ThroughputResult& r) {
  const auto& sc = r.scenario.scenario;
  const auto& s = r.summary;
  auto or_null = [](double v, bool present) { return present ? Json(v) : Json(nullptr); };
  Json j = {{"fits", r.fits},
            {"reason", r.reason},
            {"engine", s.engine.empty() ? spec::engine_name(sc.engine.policy) : s.engine},
            {"model", r.scenario.model.id},
            {"gpu", r.scenario.disagg_pools.empty()  // "prefill/decode" cards when disaggregated, as rows name them
                        ? r.scenario.gpu.id
                        : r.scenario.disagg_pools[0].gpu.id + "/" + r.scenario.disagg_pools[1].gpu.id},
            {"num_gpus", spec::total_gpus(r.scenario)},  // every fleet member's and pool's GPUs
            {"cards", cards_text(r.scenario)},
            {"quant", r.scenario.quant.weights.id},
            {"max_num_seqs", sc.engine.max_num_seqs},
            {"max_num_batched_tokens", sc.engine.max_num_batched_tokens},
            {"num_requests", sc.workload.num_requests}};
  if (!r.fits) return j;
  const auto whole = metrics::to_json(s);
  j["complete"] = s.complete;
  j["completed_requests"] = s.completed_requests;
  j["elapsed_s"] = s.duration_s;
  j["throughput"] = whole["throughput"];
  j["saturation"] = whole["saturation"];
  j["batch"] = whole["batch"];
  j["kv"] = whole["kv"];
  j["preemptions"] = s.preemptions;
  const bool priced = s.throughput.output_tokens_per_s > 0;
  j["cost"] = {{"per_hour", s.cost.per_hour},
               {"per_mtok_output", or_null(s.cost.per_mtok_output_slo, priced)},
               {"per_mtok_total", or_null(s.cost.per_mtok_total_slo, priced)}};
  return j;
}

}  // namespace llmsim::analysis
