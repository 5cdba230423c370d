#include "llmsim/analysis/compare.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>

#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/error_band.hpp"
#include "llmsim/analysis/ranking.hpp"
#include "llmsim/analysis/scaling.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/gpu_option.hpp"

namespace llmsim::analysis {

std::string to_string(RankBy r) {
  switch (r) {
    case RankBy::monthly_cost: return "monthly_cost";
    case RankBy::cost_per_mtok: return "cost_per_mtok";
    case RankBy::cost_per_mtok_at_capacity: return "cost_per_mtok_at_capacity";
  }
  throw InternalError("unknown RankBy " + std::to_string(static_cast<int>(r)));
}

RankBy parse_rank_by(const std::string& s, const std::string& path) {
  if (s == "monthly_cost" || s == "monthly") return RankBy::monthly_cost;
  if (s == "cost_per_mtok" || s == "mtok") return RankBy::cost_per_mtok;
  if (s == "cost_per_mtok_at_capacity") return RankBy::cost_per_mtok_at_capacity;
  throw ConfigError(path, unknown_name_message("ranking", s, {"monthly_cost", "cost_per_mtok", "cost_per_mtok_at_capacity"}));
}

std::vector<std::size_t> pareto_frontier(const std::vector<std::pair<double, double>>& pts) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < pts.size(); ++i)
    if (std::isfinite(pts[i].first) && std::isfinite(pts[i].second)) idx.push_back(i);
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    return pts[a].first != pts[b].first ? pts[a].first < pts[b].first : pts[a].second < pts[b].second;
  });
  std::vector<std::size_t> front;
  double best_latency = std::numeric_limits<double>::infinity();
  for (std::size_t i : idx) {
    if (pts[i].second < best_latency) {  // cheaper ones all had higher latency: not dominated
      front.push_back(i);
      best_latency = pts[i].second;
    }
  }
  return front;
}

namespace {

struct Option {
  spec::Scenario scenario;
  std::string name;
  std::string card;               ///< the GPU option's card (scaling baselines match on it)
  std::size_t single = SIZE_MAX;  ///< index of the 1-GPU counterpart (multi-GPU options)
  bool listed = true;             ///< false: run only as a scaling baseline
  int count = 1;                  ///< GPUs of one replica
};

std::optional<double> rank_value(const Row& r, RankBy by) {
  if (!r.meets_slo()) return std::nullopt;
  if (r.at_target && !run_meets_slo(*r.at_target)) return std::nullopt;  // its fleet misses the SLO at the target
  switch (by) {
    case RankBy::monthly_cost: return r.monthly_cost;
    case RankBy::cost_per_mtok: return r.cost_per_mtok_output_at_target;
    case RankBy::cost_per_mtok_at_capacity:
      if (!r.summary) return std::nullopt;
      return cost_per_mtok(r.summary->cost.per_hour, r.summary->goodput_output_tps);
  }
  return std::nullopt;
}

// The ranking key: the criterion, then the cheaper token at the target load, then at capacity (never "no number").
std::vector<double> rank_key(const Row& r, RankBy by) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> key{rank_value(r, by).value_or(inf)};
  for (RankBy tie : {RankBy::cost_per_mtok, RankBy::cost_per_mtok_at_capacity})
    if (tie != by) key.push_back(rank_value(r, tie).value_or(inf));
  return key;
}

}  // namespace

std::optional<double> price_for(const std::map<std::string, double>& prices, const std::string& gpu) {
  const auto it = prices.find(gpu);
  return it == prices.end() ? std::nullopt : std::optional<double>(it->second);
}

CompareResult compare(const spec::Scenario& base, const CompareOptions& opt, const Progress& progress) {
  const spec::Catalog& catalog = opt.catalog ? *opt.catalog : spec::Catalog::builtin();
  opt.capacity.validate("capacity");
  if (opt.jobs < 1) throw ConfigError("--jobs", "must be >= 1, got " + std::to_string(opt.jobs));
  check_fleet_target(base);
  // Every option is sized by a capacity search: a workload whose load is fixed (a trace, an offline batch) is the
  // scenario's error, refused before anything runs (was a "cannot run" row for every card and "winner: none", exit 0).
  check_capacity_workload(base.workload, "compare sizes every option by a capacity search, which");

  // Everything named is checked before anything runs: a typo is an error, not a "cannot run" row. Options without a
  // count prefix run on one card each, except the scenario's own deployment when no GPUs are listed.
  struct Named {
    spec::GpuOption option;
    spec::ParallelConfig parallel;
  };
  catalog.model(base.model, "model");  // every option runs this model: an unknown one is the scenario's error
  // compare varies hardware.gpu, which a disaggregated or fleet scenario does not use: every row would be the same.
  // The error names what the user gave: --gpus when listed, else the scenario's own section (issue 29's attack:
  // `compare`/`report` on a disaggregated file without --gpus blamed --gpus).
  if (base.disaggregation || !base.hardware.fleet.empty()) {
    const std::string field = !opt.gpus.empty() ? "--gpus" : base.disaggregation ? "disaggregation" : "hardware.fleet";
    throw ConfigError(field, std::string("compare varies hardware.gpu, which a ") +
                                 (base.disaggregation ? "disaggregated scenario (disaggregation.prefill/decode)"
                                                      : "heterogeneous fleet (hardware.fleet)") +
                                 " does not use: " +
                                 (base.disaggregation
                                      ? "size it with `llmsim capacity`, search its pools' split with `llmsim search`, "
                                        "or vary the pools' cards with sweep (disaggregation.<pool>.gpu)"
                                      : "size it with `llmsim capacity`, edit the members' cards (hardware.fleet[i].gpu), "
                                        "or compare plain deployments with llmsim search"));
  }
  std::vector<Named> gpus;
  if (opt.gpus.empty()) {
    const auto o = spec::parse_gpu_option(base.hardware.gpu);
    gpus.push_back({o, spec::split_for(o, base.hardware.parallel)});
  }
  // A tp/pp the user set on top of the options (--set hardware.tp=2, the server line's -tp 2, a keyword, a value
  // other than 1 in the file) applies to each listed option as it does to `--gpu` (set_gpu: a 1 written for the
  // scenario's own card does not count): an option without a count takes it, a counted one must agree. Each ran on
  // one card before, so `compare --gpus a100-80gb-sxm,h100-80gb-sxm --vllm-args "vllm serve M -tp 2"` silently
  // compared single cards.
  spec::ParallelConfig given{base.hardware.parallel.tp, base.hardware.parallel.pp};
  given.tp_given = given.tp != 1;
  given.pp_given = given.pp != 1;
  // A count in the scenario's own option ("2xa100-80gb-sxm") is that card's split, not one set on top of it.
  try {
    if (spec::parse_gpu_option(base.hardware.gpu).count_given) given = {};
  } catch (const ConfigError&) {  // an inline or unknown card: reported where the scenario is resolved
  }
  for (const auto& t : opt.gpus) {
    const auto o = spec::parse_gpu_option(t, "--gpus");
    catalog.gpu(o.card, "--gpus");
    gpus.push_back({o, spec::split_for(o, given, "--gpus")});
  }
  auto check_prices = [&](const std::map<std::string, double>& prices, const char* flag) {
    for (const auto& [id, price] : prices) {
      catalog.gpu(id, flag);
      if (!(price >= 0) || !std::isfinite(price))
        throw ConfigError(flag, id + " must cost >= 0, got " + format_given(price));
    }
  };
  check_prices(opt.prices, "--prices");
  check_prices(opt.purchase_prices, "--purchase-prices");
  {  // an option without a price is an error, never a "cannot run" row that hands the win to the others
    std::vector<std::string> missing;
    const bool usd = base.cost.currency == "USD";
    for (const auto& g : gpus) {
      const auto price = price_on_gpu(base.hardware.gpu, base.hardware.price_per_gpu_hour, g.option.text,
                                      price_for(opt.prices, g.option.card));
      if (!price && (!usd || !(catalog.gpu(g.option.card).price_per_hour > 0)) &&
          std::find(missing.begin(), missing.end(), g.option.card) == missing.end())
        missing.push_back(g.option.card);
    }
    if (!missing.empty()) {
      std::string list;
      for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
      throw ConfigError("--prices", (usd ? std::string("the GPU spec has no price_per_hour for ")
                                         : "cost.currency is " + base.cost.currency +
                                               " but the catalogue's prices are in USD (no exchange rate is assumed); "
                                               "give the price per GPU-hour in " + base.cost.currency + " for ") +
                                        list + " (--prices gpu=PRICE,...)");
    }
  }
  std::vector<std::string> quants = opt.quants.empty() ? std::vector<std::string>{base.weights} : opt.quants;
  for (auto& q : quants) {
    // "auto" (the scenario default) is the checkpoint's own format: named, so each row says what it planned.
    std::vector<std::string> unused;
    if (to_lower(q) == spec::kAutoWeights)
      q = spec::weight_format_for_model(catalog.model(base.model), q, "--quants", unused).id;
    else
      q = spec::weight_format(q, "--quants").id;  // vLLM's names too: "awq" is awq-int4
  }
  std::vector<spec::SchedulerPolicy> policies;
  for (const auto& p : opt.policies) policies.push_back(spec::parse_policy(p, "--policies"));
  if (policies.empty()) policies.push_back(base.engine.policy);
  std::vector<int> seqs = opt.max_num_seqs.empty() ? std::vector<int>{base.engine.max_num_seqs} : opt.max_num_seqs;
  std::vector<int> toks = opt.max_num_batched_tokens.empty() ? std::vector<int>{base.engine.max_num_batched_tokens}
                                                             : opt.max_num_batched_tokens;

  std::vector<Option> options;
  auto make = [&](const Named& g, const std::string& q, spec::SchedulerPolicy pol, int s, int t, bool listed) {
    Option o;
    o.scenario = base;
    auto& hw = o.scenario.hardware;
    // The price follows the card (price_on_gpu); resolve() turns the option's count into tp × pp.
    set_gpu(o.scenario, g.option.text, price_for(opt.prices, g.option.card), price_for(opt.purchase_prices, g.option.card));
    hw.parallel = g.parallel;
    hw.replicas = 1;
    o.scenario.weights = q;
    o.scenario.engine.policy = pol;
    o.scenario.engine.max_num_seqs = s;
    o.scenario.engine.max_num_batched_tokens = t;
    const bool labelled = g.option.count_given || g.parallel.gpus() == 1;
    o.name = (labelled ? g.option.text : std::to_string(g.parallel.gpus()) + "x" + g.option.text) + " " + q;
    if (policies.size() > 1) o.name += " " + spec::to_string(pol);
    if (seqs.size() > 1) o.name += " seqs=" + std::to_string(s);
    if (toks.size() > 1) o.name += " tokens=" + std::to_string(t);
    o.scenario.name = o.name;
    o.listed = listed;
    o.card = g.option.card;
    o.count = g.parallel.gpus();
    return o;
  };
  for (const auto& g : gpus)
    for (const auto& q : quants)
      for (auto pol : policies)
        for (int s : seqs)
          for (int t : toks) options.push_back(make(g, q, pol, s, t, true));
  // Multi-GPU options need their 1-GPU counterpart (the same card, format and knobs) for scaling efficiency.
  const std::size_t listed = options.size();
  for (std::size_t i = 0; i < listed; ++i) {
    if (options[i].count == 1) continue;
    const auto& sc = options[i].scenario;
    for (std::size_t j = 0; j < options.size(); ++j) {
      const auto& c = options[j].scenario;
      if (options[j].count == 1 && options[j].card == options[i].card && c.weights == sc.weights &&
          c.engine.policy == sc.engine.policy && c.engine.max_num_seqs == sc.engine.max_num_seqs &&
          c.engine.max_num_batched_tokens == sc.engine.max_num_batched_tokens) {
        options[i].single = j;
        break;
      }
    }
    if (options[i].single == SIZE_MAX) {
      Named one{spec::parse_gpu_option(options[i].card), {1, 1}};
      options.push_back(make(one, sc.weights, sc.engine.policy, sc.engine.max_num_seqs,
                             sc.engine.max_num_batched_tokens, false));
      options[i].single = options.size() - 1;
    }
  }

  RowOptions row_options;
  row_options.capacity = true;
  row_options.capacity_options = opt.capacity;
  std::vector<Row> rows(options.size());
  std::vector<std::optional<spec::ResolvedScenario>> resolved(options.size());
  std::size_t visible_done = 0;
  parallel_for(
      options.size(), opt.jobs,
      [&](std::size_t i) {
        Row row;
        try {
          resolved[i] = spec::resolve(options[i].scenario, catalog);
          row = evaluate_row(*resolved[i], row_options);
        } catch (const ConfigError& e) {
          // The model cannot be run this way (a split that does not divide it, a format the card lacks).
          resolved[i].reset();
          row = Row{};
          row.name = options[i].name;
          row.model = base.model;
          row.gpu = options[i].card;
          row.quant = options[i].scenario.weights;
          row.policy = spec::to_string(options[i].scenario.engine.policy);
          row.tp = options[i].scenario.hardware.parallel.tp;
          row.pp = options[i].scenario.hardware.parallel.pp;
          row.num_gpus = options[i].count;
          row.max_num_seqs = options[i].scenario.engine.max_num_seqs;
          row.max_num_batched_tokens = options[i].scenario.engine.max_num_batched_tokens;
          row.currency = base.cost.currency;
          row.fits = false;
          row.reason = std::string("cannot run: ") + e.what();
          row.target_qps = sizing_target_qps(base);
          row.target_concurrency = closed_loop_users(base.workload);
        }
        row.name = options[i].name;
        rows[i] = std::move(row);
      },
      progress ? Progress([&](std::size_t done, std::size_t total) {
        (void)total;
        visible_done = std::min(done, listed);
        progress(visible_done, listed);
      })
               : Progress{});

  // Scaling: the guides' efficiency at one load (the users one GPU carries at its SLO capacity), two short runs per
  // multi-GPU option; and the ratio of capacities per GPU, each option at its own capacity.
  std::vector<std::size_t> multi;
  for (std::size_t i = 0; i < listed; ++i)
    if (options[i].single != SIZE_MAX) multi.push_back(i);
  parallel_for(multi.size(), opt.jobs, [&](std::size_t k) {
    const std::size_t i = multi[k];
    const Row& one = rows[options[i].single];
    Row& r = rows[i];
    if (!(r.summary && r.capacity && r.capacity->found && one.summary && one.capacity && one.capacity->found))
      return;
    if (one.summary->goodput_output_tps > 0)
      r.capacity_ratio_per_gpu = r.summary->goodput_output_tps / (options[i].count * one.summary->goodput_output_tps);
    const auto users = scaling_concurrency(*one.capacity);
    if (!users || !resolved[i] || !resolved[options[i].single]) return;
    r.scaling_concurrency = users;
    r.scaling_efficiency =
        scaling_efficiency(goodput_at_concurrency(*resolved[i], *users, opt.capacity), options[i].count,
                           goodput_at_concurrency(*resolved[options[i].single], *users, opt.capacity));
  });

  CompareResult out;
  out.rank_by = opt.rank_by;
  rows.resize(listed);
  out.rows = std::move(rows);
  out.target_qps = sizing_target_qps(base);
  out.sized_at = spec::sizing_window(base.workload);
  for (const auto& row : out.rows)
    if (!row.sized_at.empty()) {  // the rows' own (the autoscaler's note included)
      out.sized_at = row.sized_at;
      break;
    }
  out.target_concurrency = closed_loop_users(base.workload);
  std::vector<std::pair<double, double>> points;
  std::vector<RankCandidate> candidates;
  for (std::size_t i = 0; i < out.rows.size(); ++i) {
    const Row& r = out.rows[i];
    const auto v = rank_value(r, opt.rank_by);
    RankCandidate c;
    c.value = v;
    const auto key = rank_key(r, opt.rank_by);
    c.tie_keys.assign(key.begin() + 1, key.end());
    // At capacity the value is as uncertain as the capacity (its CI over the seeds); bills and costs at the target
    // come from a fleet verified at the target, with the floor's sampling noise.
    if (opt.rank_by == RankBy::cost_per_mtok_at_capacity && r.capacity && r.capacity->found && r.capacity->max_qps > 0)
      c.rel_uncertainty = std::max(r.capacity->ci95_hi - r.capacity->max_qps, r.capacity->max_qps - r.capacity->ci95_lo) /
                          r.capacity->max_qps;
    c.lossless = lossless_format(r.quant, r.kv_cache);
    c.card_price = r.price_per_gpu_hour;
    c.name = r.name;
    candidates.push_back(std::move(c));
    const double latency = r.at_target && r.at_target->e2e_ms.count > 0 ? r.at_target->e2e_ms.p95
                           : r.summary && r.summary->e2e_ms.count > 0 ? r.summary->e2e_ms.p95
                                                                      : std::numeric_limits<double>::quiet_NaN();
    points.emplace_back(v.value_or(std::numeric_limits<double>::quiet_NaN()), latency);
  }
  // The note names the key that decided inside a tie (never "the plain order"): the criterion itself when the tied
  // values differ, else the first secondary key — e.g. equal bills went to a token $0.001/Mtok cheaper, said so.
  const auto words = [](RankBy by) {
    return by == RankBy::monthly_cost ? std::string("bill")
           : by == RankBy::cost_per_mtok ? std::string("cost per token at the target load")
                                        : std::string("cost per token at capacity");
  };
  bool equal_values = true;
  {
    const RankPick probe = pick_winner(candidates);
    for (std::size_t i : probe.tied) equal_values = equal_values && *candidates[i].value == *candidates[probe.tied.front()].value;
  }
  const RankBy second = opt.rank_by == RankBy::cost_per_mtok ? RankBy::cost_per_mtok_at_capacity : RankBy::cost_per_mtok;
  const RankPick pick = pick_winner(candidates, equal_values ? "on the lower " + words(second) + ", the " +
                                                                   words(opt.rank_by) + " being equal"
                                                             : "on the lower " + words(opt.rank_by));
  out.winner = pick.winner;
  if (pick.tied.size() > 1) out.tied = pick.tied;
  out.tie_note = pick.note;
  // The model's own error (issue 27): the simulation's noise decides ties above; the validation's residuals say
  // whether llmsim could tell the winner from an option at all. Both are compared on the throughput band: every
  // ranking criterion is a cost or a capacity, which scale with the throughput.
  if (pick.winner) {
    const auto band_of = [](const Row& r) {
      ErrorBand b;
      const metrics::Summary* s = r.at_target ? &*r.at_target : r.summary ? &*r.summary : nullptr;
      if (s == nullptr || !s->error_band.known) return b;
      b.typical = s->error_band.throughput.typical;
      b.n = s->error_band.throughput.n;
      return b;
    };
    const std::size_t w = *pick.winner;
    const ErrorBand bw = band_of(out.rows[w]);
    std::string names;
    for (std::size_t i = 0; i < out.rows.size(); ++i) {
      if (i == w || !candidates[i].value || !candidates[w].value) continue;
      if (!within_error(*candidates[w].value, bw, *candidates[i].value, band_of(out.rows[i]))) continue;
      out.within_model_error.push_back(i);
      names += (names.empty() ? "" : ", ") + out.rows[i].name;
    }
    if (!names.empty()) {
      out.model_error_note = "within the model's typical error of the winner (±" +
                             std::to_string(static_cast<int>(std::lround(100 * bw.typical))) +
                             "% in its regime, docs/trust.md): " + names +
                             "; llmsim cannot rank these against the winner without a measurement or a calibrated "
                             "profile of each card";
    }
  }
  out.pareto = pareto_frontier(points);
  return out;
}

Json to_json(const CompareResult& r) {
  Json j = Json::object();
  j["target_qps"] = r.target_qps > 0 ? Json(r.target_qps) : Json(nullptr);
  j["target_concurrency"] = r.target_concurrency ? Json(*r.target_concurrency) : Json(nullptr);
  j["sized_at"] = r.sized_at;
  j["rank_by"] = to_string(r.rank_by);
  j["winner"] = r.winner ? Json(*r.winner) : Json(nullptr);
  j["winner_name"] = r.winner ? Json(r.rows[*r.winner].name) : Json(nullptr);
  j["tied"] = r.tied;
  j["tie_note"] = r.tie_note;
  j["within_model_error"] = r.within_model_error;
  j["model_error_note"] = r.model_error_note;
  j["pareto"] = r.pareto;
  Json rows = Json::array();
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    Json row = to_json(r.rows[i]);
    row["winner"] = r.winner && *r.winner == i;
    row["tied"] = std::find(r.tied.begin(), r.tied.end(), i) != r.tied.end();
    row["pareto"] = std::find(r.pareto.begin(), r.pareto.end(), i) != r.pareto.end();
    rows.push_back(std::move(row));
  }
  j["rows"] = std::move(rows);
  return j;
}

}  // namespace llmsim::analysis
