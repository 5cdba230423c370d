// search (docs/search.md "Pipeline"): the configurations enumerated and pruned statically (plan_search), one
// candidate's capacity search and fleet sizing (evaluate_candidate), and the whole search on threads. The front and
// the branch-and-bound cutoff are search_front.cpp's, the answer and its reasons search_answer.cpp's.
#include "llmsim/analysis/search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "llmsim/analysis/capacity.hpp"
#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/row.hpp"
#include "llmsim/analysis/sweep.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/number.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"
#include "search_bound.hpp"

namespace llmsim::analysis {

using detail::is_disaggregated;

namespace {

constexpr std::int64_t kMaxConfigurations = 5'000'000;  // enumeration is eager: each candidate keeps its scenario

std::string value_text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string candidate_name(const std::vector<std::pair<std::string, Json>>& point) {
  std::string name;
  for (const auto& [path, value] : point) {
    const auto dot = path.rfind('.');
    // A pool's field keeps its pool ("decode.replicas=2"): two pools' "replicas=" would read alike.
    const std::string leaf = path.starts_with("disaggregation.") ? path.substr(15)
                             : dot == std::string::npos          ? path
                                                                 : path.substr(dot + 1);
    std::string part;
    if (path == "hardware.gpu" || path == "quant.weights") part = value_text(value);
    else if (path == "quant.kv_cache") part = "kv=" + value_text(value);
    else if (path == "engine.max_num_seqs") part = "seqs=" + value_text(value);
    else if (path == "engine.max_num_batched_tokens") part = "mnbt=" + value_text(value);
    else part = leaf + "=" + value_text(value);
    name += (name.empty() ? "" : " ") + part;
  }
  return name;
}

}  // namespace

void SearchOptions::validate(const std::string& path) const {
  Problems p;
  if (!(target_qps > 0) || !std::isfinite(target_qps))
    p.add(path + ".target_qps", "must be a request rate > 0, got " + format_given(target_qps));
  if (budget_per_month && (!(*budget_per_month > 0) || !std::isfinite(*budget_per_month)))
    p.add(path + ".budget_per_month", "must be > 0, got " + format_given(*budget_per_month));
  if (!(front_cost_ratio >= 1) || !std::isfinite(front_cost_ratio))
    p.add(path + ".front_cost_ratio", "must be >= 1, got " + format_given(front_cost_ratio));
  if (wave < 1) p.add(path + ".wave", "must be >= 1, got " + std::to_string(wave));
  if (jobs < 1) p.add(path + ".jobs", "must be >= 1, got " + std::to_string(jobs));
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::string at = path + ".axes[" + std::to_string(i) + "]";
    if (axes[i].path.empty()) p.add(at + ".path", "must name a scenario field");
    if (axes[i].values.empty()) p.add(at + " (" + axes[i].path + ")", "must list at least one value");
  }
  p.throw_if_any();
  screen.validate(path + ".screen");
  final_check.validate(path + ".final_check");
}

SearchPlan plan_search(const Json& base, const SearchOptions& options, const spec::Catalog& catalog) {
  options.validate();
  if (!base.is_object()) throw ConfigError("scenario", "must be a JSON object");
  const std::vector<SearchAxis> axes = options.axes.empty() ? default_search_axes_for(base) : options.axes;
  if (base.contains("hardware") && base["hardware"].is_object() && base["hardware"].contains("fleet"))
    throw ConfigError("hardware.fleet", "search explores one card type per deployment; give the base as a plain "
                                        "hardware section (a fleet is evaluated with `capacity`)");
  // A disaggregated base is searched as one unit of pools (prefill + decode replicas, default_search_axes_for: the
  // split is the sizing axis), replicated to the target as capacity sizes it; its bound is +inf (no pruning).
  if (is_disaggregated(base))
    for (std::size_t i = 0; i < axes.size(); ++i)
      if (axes[i].path == "hardware.gpu" || axes[i].path == "hardware.tp" || axes[i].path == "hardware.pp")
        throw ConfigError("search.axes[" + std::to_string(i) + "] (" + axes[i].path + ")",
                          "a disaggregated scenario does not use hardware.gpu/tp/pp: its cards are the pools' "
                          "(axes over disaggregation.prefill.gpu, disaggregation.decode.gpu, .tp)");
  // Two axes over one field (the same path twice, or a section beside one of its fields: hardware beside the default
  // hardware.gpu) would overwrite each other, and members would be named by values they did not run (sweep's rule).
  {
    std::vector<std::string> paths;
    for (const auto& a : axes) paths.push_back(a.path);
    refuse_overlapping_paths(paths, "search.axes");
  }
  // Every path must be a scenario field: try each on the base.
  std::int64_t total = 1;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    Json probe = base;
    try {
      spec::set_json_path(probe, axes[i].path, axes[i].values.front());
    } catch (const ConfigError& e) {
      throw ConfigError("search.axes[" + std::to_string(i) + "].path", e.what());
    }
    for (std::size_t v = 0; v < axes[i].values.size(); ++v) {  // a value merges into the base (its fields checked)
      Json merged = base;
      try {
        spec::merge_json_path(merged, axes[i].path, axes[i].values[v]);
      } catch (const ConfigError& e) {
        throw ConfigError("search.axes[" + std::to_string(i) + "] (" + axes[i].path + ") value " + std::to_string(v + 1),
                          e.what());
      }
    }
    total *= static_cast<std::int64_t>(axes[i].values.size());
    if (total > kMaxConfigurations)
      throw ConfigError("search.axes", "the space has more than " + std::to_string(kMaxConfigurations) +
                                           " configurations; narrow an axis");
  }
  {  // the fleet is sized for a request rate: an open-loop workload
    Json probe = base;
    spec::set_json_path(probe, "cost.target_qps", options.target_qps);
    const spec::Scenario sc = spec::scenario_from_json(JsonView(probe, ""));
    if (closed_loop_users(sc.workload) || !spec::offered_rate(sc.workload))
      throw ConfigError("workload.arrival", "search sizes a fleet for a request rate (--target-qps): it needs an "
                                            "open-loop workload (poisson, gamma, constant, onoff, piecewise), not a "
                                            "closed loop, a trace or an offline batch");
  }
  SearchPlan plan;
  plan.enumerated = total;
  enum class Fate { invalid, memory, budget, kept, price };
  struct Slot {
    Fate fate = Fate::invalid;
    std::string why;
    SearchCandidate c;
  };
  std::vector<Slot> slots(static_cast<std::size_t>(total));
  detail::CostModelCache models;
  parallel_for(slots.size(), options.jobs, [&](std::size_t k) {
    Slot& s = slots[k];
    SearchCandidate& c = s.c;
    c.index = static_cast<std::int64_t>(k);
    // One replica (a disaggregated base: one unit of its pools, which hardware.replicas does not count).
    std::vector<std::pair<std::string, Json>> overrides;
    if (!is_disaggregated(base)) overrides.emplace_back("hardware.replicas", 1);
    std::size_t rest = k;
    std::vector<std::size_t> digit(axes.size());
    for (std::size_t a = axes.size(); a-- > 0;) {  // the last axis varies fastest
      digit[a] = rest % axes[a].values.size();
      rest /= axes[a].values.size();
    }
    for (std::size_t a = 0; a < axes.size(); ++a) {
      c.point.emplace_back(axes[a].path, axes[a].values[digit[a]]);
      overrides.emplace_back(axes[a].path, axes[a].values[digit[a]]);
    }
    overrides.emplace_back("cost.target_qps", options.target_qps);
    c.name = candidate_name(c.point);
    try {
      c.scenario = apply_overrides(base, overrides, OverrideRule::merge);
      const spec::ResolvedScenario rs = spec::resolve(spec::scenario_from_json(JsonView(c.scenario, "")), catalog);
      // The plan the simulator would run: vLLM's auto context when max_model_len is unset, the proposer included.
      const auto mp = memory::plan_memory(rs);
      if (!mp.fits || mp.kv_capacity_blocks < 2) {
        s.fate = Fate::memory;
        return;
      }
      const double bound = detail::replica_qps_bound(rs, *models.get(c.scenario, rs), mp);
      c.gpus_per_replica = gpus_per_unit(rs);
      c.price_per_gpu_hour = rs.disagg_pools.empty() ? rs.price_per_gpu_hour : gpus_hourly(rs) / c.gpus_per_replica;
      c.qps_bound_per_replica = bound;
      c.min_replicas = detail::min_replicas(options.target_qps, bound, rs.scenario.cost.spare_fraction).value_or(1000000000);
      // What evaluate_row bills for min_replicas replicas: no configuration can cost less than this.
      c.monthly_lower_bound = detail::bill_at_capacity(rs, options.target_qps, bound);
      s.fate = options.budget_per_month && detail::over_cutoff(c.monthly_lower_bound, *options.budget_per_month)
                   ? Fate::budget
                   : Fate::kept;
    } catch (const ConfigError& e) {
      // A card without a price in the scenario's currency is the user's to fix, not a configuration to drop: the
      // others would win by elimination.
      s.fate = std::string(e.what()).find("hardware.price_per_gpu_hour") != std::string::npos ? Fate::price : Fate::invalid;
      s.why = c.name + ": " + e.what();
    }
  }, ParallelHooks{{}, {}, {}, options.cancel});
  for (const auto& s : slots)
    if (s.fate == Fate::price) throw ConfigError("search", s.why);
  for (auto& s : slots) {
    switch (s.fate) {
      case Fate::invalid:
        ++plan.invalid;
        if (plan.invalid_examples.size() < 5) plan.invalid_examples.push_back(s.why);
        break;
      case Fate::memory: ++plan.pruned_memory; break;
      case Fate::budget: ++plan.pruned_budget; break;
      case Fate::kept: plan.candidates.push_back(std::move(s.c)); break;
      case Fate::price: break;  // thrown above
    }
  }
  if (plan.invalid == total)  // nothing could run: a bad value on some axis, not an empty answer
    throw ConfigError("search.axes", "every configuration is invalid, e.g. " + plan.invalid_examples.front());
  std::stable_sort(plan.candidates.begin(), plan.candidates.end(), [](const SearchCandidate& a, const SearchCandidate& b) {
    return a.monthly_lower_bound < b.monthly_lower_bound;
  });
  return plan;
}

SearchEvaluation evaluate_candidate(const SearchCandidate& c, const CapacityOptions& capacity,
                                    const spec::Catalog& catalog, const std::atomic<bool>* cancel, double max_bill) {
  SearchEvaluation e;
  e.index = c.index;
  RowOptions ro;
  ro.capacity = true;
  ro.capacity_options = capacity;
  ro.cancel = cancel;
  // The bounds and the screening price fixed fleets, so the bills ranked must be those too (sized_at() says so).
  ro.bill_autoscaler = false;
  Row row;
  try {
    const auto rs = spec::resolve(spec::scenario_from_json(JsonView(c.scenario, "")), catalog);
    const double target = rs.scenario.cost.target_qps;
    ro.capacity_options.give_up_below_qps = detail::screen_threshold_qps(rs, target, max_bill);
    row = evaluate_row(rs, ro);
  } catch (const ConfigError& x) {  // this configuration's own limit (e.g. more than 1e9 replicas): not feasible
    e.fits = false;
    e.reason = x.what();
    return e;
  }
  e.fits = row.fits;
  e.reason = row.reason;
  e.quality_caveat = row.quality_caveat;
  e.slo_headroom_note = row.slo_headroom_note;
  if (!row.fits || !row.capacity || !row.capacity->found) {
    if (e.reason.empty() && row.capacity) e.reason = row.capacity->reason;
    e.time_limited = row.capacity && row.capacity->time_limited;
    if (row.capacity && row.capacity->gave_up) {
      e.screened = true;
      e.reason += ": its bill would exceed the cutoff";
    }
    return e;
  }
  e.capacity_qps = row.capacity->max_qps;
  e.replicas = row.replicas_needed.value_or(0);
  e.monthly_cost = row.monthly_cost.value_or(0);
  e.cost_per_mtok_output = row.cost_per_mtok_output_at_target;
  if (row.at_target) {
    e.ttft_p95_ms = row.at_target->ttft_ms.p95;
    e.tpot_p95_ms = row.at_target->tpot_ms.p95;
    e.meets_slo = run_meets_slo(*row.at_target);
    if (!e.meets_slo && !row.at_target->unstable && !row.at_target->complete) {
      e.time_limited = true;
      e.reason = "its run at its share of the target " + row.at_target->reason +
                 " (the simulated-time limit: raise workload.horizon_s; the SLO was not what failed)";
    } else if (!e.meets_slo) {
      e.reason = "misses the SLO at its share of the target even with " + std::to_string(e.replicas) + " replicas" +
                 (row.reason.empty() ? "" : " (" + row.reason + ")");
    }
  }
  return e;
}

SearchResult search(const Json& base, const SearchOptions& options, const spec::Catalog& catalog) {
  const SearchPlan plan = plan_search(base, options, catalog);
  std::vector<std::optional<SearchEvaluation>> done(plan.candidates.size());
  std::size_t simulated = 0;
  for (auto wave = next_wave(plan, done, options); !wave.empty(); wave = next_wave(plan, done, options)) {
    std::vector<SearchEvaluation> out(wave.size());
    const double cutoff = search_cutoff(done, options);  // the wave's, whatever the thread count
    parallel_for(wave.size(), options.jobs, [&](std::size_t k) {
      out[k] = evaluate_candidate(plan.candidates[wave[k]], options.screen, catalog, options.cancel, cutoff);
    }, ParallelHooks{{}, {}, {}, options.cancel});
    for (std::size_t k = 0; k < wave.size(); ++k) done[wave[k]] = std::move(out[k]);
    simulated += wave.size();
    if (options.progress) options.progress(simulated, plan.candidates.size());
  }
  const auto positions = pareto_positions(done, options);
  std::vector<SearchEvaluation> finals(positions.size());
  parallel_for(positions.size(), options.jobs, [&](std::size_t k) {
    finals[k] = evaluate_candidate(plan.candidates[positions[k]], options.final_check, catalog, options.cancel);
  }, ParallelHooks{{}, {}, {}, options.cancel});
  return assemble_search(plan, done, finals, options);
}

}  // namespace llmsim::analysis
