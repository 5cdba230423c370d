#include "llmsim/analysis/search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "llmsim/analysis/capacity.hpp"
#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/ranking.hpp"
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

bool feasible(const SearchEvaluation& e, const std::optional<double>& budget) {
  return e.fits && e.meets_slo && (!budget || e.monthly_cost <= *budget);
}

bool dominates(const SearchEvaluation& a, const SearchEvaluation& b) {
  const bool no_worse = a.monthly_cost <= b.monthly_cost && a.ttft_p95_ms <= b.ttft_p95_ms && a.tpot_p95_ms <= b.tpot_p95_ms;
  const bool better = a.monthly_cost < b.monthly_cost || a.ttft_p95_ms < b.ttft_p95_ms || a.tpot_p95_ms < b.tpot_p95_ms;
  return no_worse && better;
}

// Non-dominated among `items` (pointers may be null = not feasible), as indices into items.
std::vector<std::size_t> pareto(const std::vector<const SearchEvaluation*>& items) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!items[i]) continue;
    bool dominated = false;
    for (std::size_t j = 0; j < items.size() && !dominated; ++j) {
      if (j == i || !items[j]) continue;
      const auto& a = *items[j];
      const auto& b = *items[i];
      // An identical point earlier in the order (a knob that changed nothing at the target) stands for both.
      const bool same = a.monthly_cost == b.monthly_cost && a.ttft_p95_ms == b.ttft_p95_ms && a.tpot_p95_ms == b.tpot_p95_ms;
      dominated = dominates(a, b) || (same && j < i);
    }
    if (!dominated) out.push_back(i);
  }
  return out;
}

std::string money(double v, const std::string& currency) { return (currency == "USD" ? "$" : currency + " ") + format_fixed(v, 0); }
std::string money2(double v, const std::string& currency) { return (currency == "USD" ? "$" : currency + " ") + format_fixed(v, 2); }

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

double search_cutoff(const std::vector<std::optional<SearchEvaluation>>& done, const SearchOptions& options) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& d : done)
    if (d && feasible(*d, options.budget_per_month)) best = std::min(best, d->monthly_cost);
  double cutoff = best * options.front_cost_ratio;
  if (options.budget_per_month) cutoff = std::min(cutoff, *options.budget_per_month);
  return cutoff;
}

std::vector<std::size_t> next_wave(const SearchPlan& plan, const std::vector<std::optional<SearchEvaluation>>& done,
                                   const SearchOptions& options) {
  const double cutoff = search_cutoff(done, options);
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < plan.candidates.size() && out.size() < static_cast<std::size_t>(options.wave); ++i) {
    if (i < done.size() && done[i]) continue;
    if (detail::over_cutoff(plan.candidates[i].monthly_lower_bound, cutoff)) break;  // sorted by the bound: the rest too
    out.push_back(i);
  }
  return out;
}

std::vector<std::size_t> pareto_positions(const std::vector<std::optional<SearchEvaluation>>& done,
                                          const SearchOptions& options) {
  // The front's window: feasible and within front_cost_ratio of the cheapest (what branch-and-bound guarantees to
  // have simulated in full, whatever the order; a costlier member would depend on what the bound let through).
  const double window = search_cutoff(done, options);  // (a feasible bill is within the budget anyway)
  std::vector<const SearchEvaluation*> items;
  for (const auto& d : done)
    items.push_back(d && feasible(*d, options.budget_per_month) && !detail::over_cutoff(d->monthly_cost, window) ? &*d
                                                                                                               : nullptr);
  return pareto(items);
}

namespace {

// Where the fleets were sized (a daily profile's peak window, the autoscaler off), said with the reasons; "" for a
// workload and deployment sized as given.
std::string sized_at(const SearchPlan& plan) {
  if (plan.candidates.empty()) return "";
  const spec::Scenario sc = spec::scenario_from_json(JsonView(plan.candidates.front().scenario, ""));
  std::string at = spec::sizing_window(sc.workload);
  if (sc.autoscaler)
    at += std::string(at.empty() ? "" : "; ") +
          "fixed replicas (the autoscaler off: it may scale up to the fleet sized); the bills are those fleets held all "
          "month, not the autoscaled day (`llmsim capacity` or `compare` on the winner bills the replica-hours its "
          "autoscaler runs)";
  return at;
}

}  // namespace

SearchResult assemble_search(const SearchPlan& plan, const std::vector<std::optional<SearchEvaluation>>& first,
                             const std::vector<SearchEvaluation>& final_evals, const SearchOptions& options) {
  SearchResult r;
  r.target_qps = options.target_qps;
  r.budget_per_month = options.budget_per_month;
  r.enumerated = plan.enumerated;
  r.invalid = plan.invalid;
  r.pruned_memory = plan.pruned_memory;
  r.pruned_budget = plan.pruned_budget;
  std::int64_t time_limited = 0;
  const SearchEvaluation* time_limited_example = nullptr;
  for (const auto& d : first) {
    if (!d) continue;
    ++r.simulated;
    if (d->time_limited && !time_limited_example) time_limited_example = &*d;
    if (d->time_limited) ++time_limited;
    if (d->screened) ++r.screened;
    if (feasible(*d, options.budget_per_month)) ++r.feasible;
  }
  r.pruned_bound = static_cast<std::int64_t>(plan.candidates.size()) - r.simulated;
  const auto positions = pareto_positions(first, options);
  if (final_evals.size() != positions.size())
    throw InternalError("search: " + std::to_string(final_evals.size()) + " re-checks for a front of " +
                        std::to_string(positions.size()));
  r.rechecked = static_cast<std::int64_t>(final_evals.size());
  // The re-checked front: members still feasible at the full settings, and not dominated among themselves.
  std::vector<const SearchEvaluation*> items;
  for (const auto& f : final_evals) items.push_back(feasible(f, options.budget_per_month) ? &f : nullptr);
  for (const auto k : pareto(items)) r.front.push_back({plan.candidates[positions[k]], final_evals[k]});
  std::sort(r.front.begin(), r.front.end(), [](const SearchFrontMember& a, const SearchFrontMember& b) {
    const auto& x = a.evaluation;
    const auto& y = b.evaluation;
    if (x.monthly_cost != y.monthly_cost) return x.monthly_cost < y.monthly_cost;
    if (x.ttft_p95_ms != y.ttft_p95_ms) return x.ttft_p95_ms < y.ttft_p95_ms;
    return a.candidate.index < b.candidate.index;
  });
  if (!plan.candidates.empty()) {
    const Json& sc = plan.candidates.front().scenario;
    if (sc.contains("cost") && sc["cost"].contains("currency")) r.currency = sc["cost"]["currency"].get<std::string>();
  }
  const std::string cur = r.currency;
  // "meets the SLO", or with no latency target "serves the load stably (no SLO set)" (has_slo).
  const std::optional<spec::Scenario> base_sc =
      plan.candidates.empty() ? std::nullopt
                              : std::optional(spec::scenario_from_json(JsonView(plan.candidates.front().scenario, "")));
  const bool slo_set = !base_sc || has_slo(*base_sc);
  if (r.front.empty() && time_limited > 0 && time_limited + r.feasible == r.simulated) {
    // Every failure was the simulated-time limit: the SLO was never what failed, so it is not blamed.
    r.reasons.push_back("no configuration could be judged at " + format_value(r.target_qps) + " req/s: " +
                        std::to_string(time_limited) + " of " + std::to_string(r.simulated) +
                        " simulated stopped at the simulated-time limit, e.g. " + time_limited_example->reason);
    return r;
  }
  if (r.front.empty()) {
    if (time_limited > 0)
      r.reasons.push_back(std::to_string(time_limited) + " of " + std::to_string(r.simulated) +
                          " simulated stopped at the simulated-time limit (raise workload.horizon_s), e.g. " +
                          time_limited_example->reason);
    r.reasons.push_back("no configuration " + (base_sc ? meets_slo_phrase(*base_sc) : "meets the SLO") + " at " +
                        format_value(r.target_qps) + " req/s" +
                        (r.budget_per_month ? " within " + money(*r.budget_per_month, cur) + "/month" : std::string()) +
                        ": " + std::to_string(r.simulated) + " simulated, " + std::to_string(r.feasible) +
                        " feasible in the first pass");
    return r;
  }
  // The winner by compare's rule (analysis/ranking.hpp): bills within the noise are a tie, broken by the lossless
  // format, then the cheaper card, then the lower bill and the lower P95 TTFT — said, never a silent ordering by
  // a difference of milliseconds between percentiles that print alike.
  std::vector<RankCandidate> ranked;
  bool equal_bills = true;
  for (const auto& m : r.front) {
    RankCandidate c;
    c.value = m.evaluation.monthly_cost;
    c.tie_keys = {m.evaluation.ttft_p95_ms, m.evaluation.tpot_p95_ms};
    c.lossless = m.evaluation.quality_caveat.empty();
    c.card_price = m.candidate.price_per_gpu_hour;
    c.name = m.candidate.name;
    ranked.push_back(std::move(c));
  }
  for (std::size_t i : pick_winner(ranked).tied)  // the note names the plain order's deciding key
    equal_bills = equal_bills && r.front[i].evaluation.monthly_cost == r.front[0].evaluation.monthly_cost;
  const RankPick pick = pick_winner(ranked, equal_bills ? "on the lower P95 TTFT" : "on the lower bill");
  r.winner = pick.winner.value_or(0);
  if (pick.tied.size() > 1) {
    for (std::size_t i : pick.tied) r.tied.push_back(i);
    r.tie_note = pick.note;
  }
  if (const std::string at = sized_at(plan); !at.empty()) r.reasons.push_back("sized at " + at);
  const auto& w = r.front[*r.winner];
  const auto& we = w.evaluation;
  // A tie may go to a bill a little above the cheapest (the cheaper card, the lossless format): said, never "cheapest".
  const auto& cheapest = r.front[0];
  const std::string wins_at =
      we.monthly_cost > cheapest.evaluation.monthly_cost
          ? " wins at " + money(we.monthly_cost, cur) + "/month, tied within the noise with the cheapest bill (" +
                cheapest.candidate.name + ", " + money(cheapest.evaluation.monthly_cost, cur) + "; the tie rule below)"
          : " is the cheapest at " + money(we.monthly_cost, cur) + "/month";
  r.reasons.push_back(w.candidate.name + wins_at + ": " +
                      std::to_string(we.replicas) + " replica(s) of " + std::to_string(w.candidate.gpus_per_replica) +
                      " GPU(s) at " + money2(w.candidate.price_per_gpu_hour, cur) + "/GPU-h, each carrying up to " +
                      format_fixed(we.capacity_qps, 2) + (slo_set ? " req/s within the SLO" : " req/s stably (no SLO set)") +
                      "; at the target P95 TTFT " +
                      format_fixed(we.ttft_p95_ms, 0) + " ms, P95 TPOT " + format_fixed(we.tpot_p95_ms, 1) + " ms" +
                      (we.quality_caveat.empty() ? std::string() : "; " + we.quality_caveat));
  if (!we.slo_headroom_note.empty()) r.reasons.push_back(w.candidate.name + ": " + we.slo_headroom_note);
  if (!r.tie_note.empty()) r.reasons.push_back(r.tie_note);
  // The runner-up: the first other front member, else the cheapest other feasible configuration of the first pass.
  const SearchCandidate* rc = nullptr;
  const SearchEvaluation* re = nullptr;
  bool runner_tied = false;
  if (r.front.size() > 1) {
    const std::size_t k = *r.winner == 0 ? 1 : 0;
    rc = &r.front[k].candidate;
    re = &r.front[k].evaluation;
    runner_tied = std::find(r.tied.begin(), r.tied.end(), k) != r.tied.end();
  } else {
    for (std::size_t i = 0; i < first.size(); ++i) {
      if (!first[i] || !feasible(*first[i], options.budget_per_month) || plan.candidates[i].index == w.candidate.index) continue;
      if (!re || first[i]->monthly_cost < re->monthly_cost) rc = &plan.candidates[i], re = &*first[i];
    }
  }
  if (rc) {
    const double per_gpu_w = we.capacity_qps / (w.candidate.gpus_per_replica * w.candidate.price_per_gpu_hour);
    const double per_gpu_r = re->capacity_qps / (rc->gpus_per_replica * rc->price_per_gpu_hour);
    const bool faster = re->ttft_p95_ms < we.ttft_p95_ms || re->tpot_p95_ms < we.tpot_p95_ms;
    std::string lacks = runner_tied ? "it is tied with the winner (the tie rule above): P95 TTFT " + format_fixed(re->ttft_p95_ms, 0) +
                                  " ms against the winner's " + format_fixed(we.ttft_p95_ms, 0) + ", P95 TPOT " +
                                  format_fixed(re->tpot_p95_ms, 1) + " ms against " + format_fixed(we.tpot_p95_ms, 1)
                        : faster ? "it buys lower latency (P95 TTFT " + format_fixed(re->ttft_p95_ms, 0) + " ms, TPOT " +
                                       format_fixed(re->tpot_p95_ms, 1) + " ms) at a higher bill"
                                 : "it is no faster at the target";
    const double extra = we.monthly_cost > 0 ? (re->monthly_cost / we.monthly_cost - 1) * 100 : 0;
    r.reasons.push_back("runner-up " + rc->name + " costs " + money(re->monthly_cost, cur) + "/month (" +
                        (extra < 0 ? "" : "+") + format_fixed(extra, 0) + "%, " + std::to_string(re->replicas) + " replica(s) of " +
                        std::to_string(rc->gpus_per_replica) + " GPU(s)): it carries " + format_fixed(per_gpu_r, 2) +
                        " req/s per GPU-" + (cur == "USD" ? std::string("dollar") : cur) + "-hour against the winner's " + format_fixed(per_gpu_w, 2) + "; " + lacks);
  } else {
    r.reasons.push_back("no other configuration met the SLO at the target");
  }
  return r;
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
