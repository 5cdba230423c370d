// search's answer: the result from the first pass and the front's re-checks, the winner by compare's rule, and the
// reasons (where the fleets were sized, why the winner won, what the runner-up lacks).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "llmsim/analysis/capacity.hpp"
#include "llmsim/analysis/ranking.hpp"
#include "llmsim/analysis/row.hpp"
#include "llmsim/analysis/search.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/number.hpp"
#include "llmsim/spec/scenario.hpp"
#include "search_front.hpp"

namespace llmsim::analysis {

using detail::feasible;
using detail::pareto;

namespace {

std::string money(double v, const std::string& currency) { return (currency == "USD" ? "$" : currency + " ") + format_fixed(v, 0); }
std::string money2(double v, const std::string& currency) { return (currency == "USD" ? "$" : currency + " ") + format_fixed(v, 2); }


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

}  // namespace llmsim::analysis
