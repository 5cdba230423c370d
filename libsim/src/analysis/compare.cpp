#include "llmsim/analysis/compare.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>

#include "llmsim/analysis/cost.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"

namespace llmsim::analysis {

GpuOption parse_gpu_option(const std::string& text, const std::string& path) {
  GpuOption o;
  o.label = text;
  std::string rest = text;
  const auto at = rest.rfind('@');
  if (at != std::string::npos) {
    const std::string suffix = rest.substr(at + 1);
    if (suffix == "pp") o.pipeline = true;
    else if (suffix != "tp") throw ConfigError(path, "unknown suffix '@" + suffix + "' in '" + text + "' (valid: @tp, @pp)");
    rest = rest.substr(0, at);
  }
  // "<N>x<id>": a count prefix only when digits are followed by 'x' (ids themselves may start with digits).
  std::size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  if (digits > 0 && digits < rest.size() && rest[digits] == 'x') {
    if (digits > 3) throw ConfigError(path, "GPU count in '" + text + "' must be 1..64");
    o.count = std::stoi(rest.substr(0, digits));
    rest = rest.substr(digits + 1);
  }
  if (o.count < 1 || o.count > 64) throw ConfigError(path, "GPU count in '" + text + "' must be 1..64");
  if (rest.empty()) throw ConfigError(path, "missing GPU id in '" + text + "'");
  o.gpu = rest;
  return o;
}

std::string to_string(RankBy r) { return r == RankBy::monthly_cost ? "monthly_cost" : "cost_per_mtok"; }

RankBy parse_rank_by(const std::string& s, const std::string& path) {
  if (s == "monthly_cost" || s == "monthly") return RankBy::monthly_cost;
  if (s == "cost_per_mtok" || s == "mtok") return RankBy::cost_per_mtok;
  throw ConfigError(path, unknown_name_message("ranking", s, {"monthly_cost", "cost_per_mtok"}));
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
  std::size_t single = SIZE_MAX;  ///< index of the 1-GPU counterpart (multi-GPU options)
  bool listed = true;             ///< false: run only as a scaling baseline
  int count = 1;
};

std::optional<double> rank_value(const Row& r, RankBy by) {
  if (!r.meets_slo()) return std::nullopt;
  if (r.at_target && !run_meets_slo(*r.at_target)) return std::nullopt;  // its fleet misses the SLO at the target
  if (by == RankBy::monthly_cost) return r.monthly_cost;
  if (!r.summary) return std::nullopt;
  const double tps = r.summary->goodput_output_tps;
  if (!(tps > 0)) return std::nullopt;
  return r.summary->cost.per_hour / (tps * 3600.0) * 1e6;
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

  // Everything named is checked before anything runs: a typo is an error, not a "cannot run" row.
  std::vector<GpuOption> gpus;
  if (opt.gpus.empty()) {
    GpuOption g;
    g.gpu = base.hardware.gpu;
    g.count = base.hardware.parallel.gpus();
    g.pipeline = base.hardware.parallel.pp > 1 && base.hardware.parallel.tp == 1;
    g.label = (g.count > 1 ? std::to_string(g.count) + "x" : "") + g.gpu;
    gpus.push_back(g);
  }
  for (const auto& t : opt.gpus) {
    gpus.push_back(parse_gpu_option(t));
    catalog.gpu(gpus.back().gpu, "--gpus");
  }
  for (const auto& [id, price] : opt.prices) {
    catalog.gpu(id, "--prices");
    if (!(price >= 0) || !std::isfinite(price))
      throw ConfigError("--prices", id + " must cost >= 0 per hour, got " + format_value(price));
  }
  std::vector<std::string> quants = opt.quants.empty() ? std::vector<std::string>{base.weights} : opt.quants;
  for (const auto& q : quants) spec::weight_format(q, "--quants");
  std::vector<spec::SchedulerPolicy> policies;
  for (const auto& p : opt.policies) policies.push_back(spec::parse_policy(p, "--policies"));
  if (policies.empty()) policies.push_back(base.engine.policy);
  std::vector<int> seqs = opt.max_num_seqs.empty() ? std::vector<int>{base.engine.max_num_seqs} : opt.max_num_seqs;
  std::vector<int> toks = opt.max_num_batched_tokens.empty() ? std::vector<int>{base.engine.max_num_batched_tokens}
                                                             : opt.max_num_batched_tokens;

  std::vector<Option> options;
  auto make = [&](const GpuOption& g, const std::string& q, spec::SchedulerPolicy pol, int s, int t, bool listed) {
    Option o;
    o.scenario = base;
    auto& hw = o.scenario.hardware;
    set_gpu(o.scenario, g.gpu, price_for(opt.prices, g.gpu));
    hw.parallel.tp = g.pipeline ? 1 : g.count;
    hw.parallel.pp = g.pipeline ? g.count : 1;
    hw.replicas = 1;
    o.scenario.weights = q;
    o.scenario.engine.policy = pol;
    o.scenario.engine.max_num_seqs = s;
    o.scenario.engine.max_num_batched_tokens = t;
    o.name = g.label + " " + q;
    if (policies.size() > 1) o.name += " " + spec::to_string(pol);
    if (seqs.size() > 1) o.name += " seqs=" + std::to_string(s);
    if (toks.size() > 1) o.name += " tokens=" + std::to_string(t);
    o.scenario.name = o.name;
    o.listed = listed;
    o.count = g.count;
    return o;
  };
  for (const auto& g : gpus)
    for (const auto& q : quants)
      for (auto pol : policies)
        for (int s : seqs)
          for (int t : toks) options.push_back(make(g, q, pol, s, t, true));
  // Multi-GPU options need their 1-GPU counterpart for scaling efficiency.
  const std::size_t listed = options.size();
  for (std::size_t i = 0; i < listed; ++i) {
    if (options[i].count == 1) continue;
    const auto& sc = options[i].scenario;
    for (std::size_t j = 0; j < options.size(); ++j) {
      const auto& c = options[j].scenario;
      if (options[j].count == 1 && c.hardware.gpu == sc.hardware.gpu && c.weights == sc.weights &&
          c.engine.policy == sc.engine.policy && c.engine.max_num_seqs == sc.engine.max_num_seqs &&
          c.engine.max_num_batched_tokens == sc.engine.max_num_batched_tokens) {
        options[i].single = j;
        break;
      }
    }
    if (options[i].single == SIZE_MAX) {
      GpuOption one;
      one.gpu = sc.hardware.gpu;
      one.label = one.gpu;
      options.push_back(make(one, sc.weights, sc.engine.policy, sc.engine.max_num_seqs,
                             sc.engine.max_num_batched_tokens, false));
      options[i].single = options.size() - 1;
    }
  }

  RowOptions row_options;
  row_options.capacity = true;
  row_options.capacity_options = opt.capacity;
  std::vector<Row> rows(options.size());
  std::size_t visible_done = 0;
  parallel_for(
      options.size(), opt.jobs,
      [&](std::size_t i) {
        Row row;
        try {
          const auto resolved = spec::resolve(options[i].scenario, catalog);
          row = evaluate_row(resolved, row_options);
        } catch (const ConfigError& e) {
          // The model cannot be run this way (a split that does not divide it, a format the card lacks).
          row = Row{};
          row.name = options[i].name;
          row.model = base.model;
          row.gpu = options[i].scenario.hardware.gpu;
          row.quant = options[i].scenario.weights;
          row.policy = spec::to_string(options[i].scenario.engine.policy);
          row.tp = options[i].scenario.hardware.parallel.tp;
          row.pp = options[i].scenario.hardware.parallel.pp;
          row.num_gpus = options[i].count;
          row.max_num_seqs = options[i].scenario.engine.max_num_seqs;
          row.max_num_batched_tokens = options[i].scenario.engine.max_num_batched_tokens;
          row.fits = false;
          row.reason = std::string("cannot run: ") + e.what();
          row.target_qps = base.cost.target_qps > 0 ? base.cost.target_qps
                                                    : spec::offered_rate(base.workload).value_or(0.0);
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

  for (std::size_t i = 0; i < listed; ++i) {
    if (options[i].single == SIZE_MAX) continue;
    const Row& one = rows[options[i].single];
    Row& r = rows[i];
    if (r.summary && r.capacity && r.capacity->found && one.summary && one.capacity && one.capacity->found &&
        one.summary->goodput_output_tps > 0)
      r.scaling_efficiency = r.summary->goodput_output_tps / (options[i].count * one.summary->goodput_output_tps);
  }

  CompareResult out;
  out.rank_by = opt.rank_by;
  rows.resize(listed);
  out.rows = std::move(rows);
  out.target_qps = base.cost.target_qps > 0 ? base.cost.target_qps : spec::offered_rate(base.workload).value_or(0.0);
  out.target_concurrency = closed_loop_users(base.workload);
  // Ties on the criterion (equal bills) go to the cheaper token, then to the earlier option.
  const RankBy other = opt.rank_by == RankBy::monthly_cost ? RankBy::cost_per_mtok : RankBy::monthly_cost;
  std::pair<double, double> best{std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  std::vector<std::pair<double, double>> points;
  for (std::size_t i = 0; i < out.rows.size(); ++i) {
    const Row& r = out.rows[i];
    const auto v = rank_value(r, opt.rank_by);
    const std::pair<double, double> key{v.value_or(0), rank_value(r, other).value_or(std::numeric_limits<double>::infinity())};
    if (v && key < best) {
      best = key;
      out.winner = i;
    }
    const double latency = r.at_target && r.at_target->e2e_ms.count > 0 ? r.at_target->e2e_ms.p95
                           : r.summary && r.summary->e2e_ms.count > 0 ? r.summary->e2e_ms.p95
                                                                      : std::numeric_limits<double>::quiet_NaN();
    points.emplace_back(v.value_or(std::numeric_limits<double>::quiet_NaN()), latency);
  }
  out.pareto = pareto_frontier(points);
  return out;
}

Json to_json(const CompareResult& r) {
  Json j = Json::object();
  j["target_qps"] = r.target_qps > 0 ? Json(r.target_qps) : Json(nullptr);
  j["target_concurrency"] = r.target_concurrency ? Json(*r.target_concurrency) : Json(nullptr);
  j["rank_by"] = to_string(r.rank_by);
  j["winner"] = r.winner ? Json(*r.winner) : Json(nullptr);
  j["winner_name"] = r.winner ? Json(r.rows[*r.winner].name) : Json(nullptr);
  j["pareto"] = r.pareto;
  Json rows = Json::array();
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    Json row = to_json(r.rows[i]);
    row["winner"] = r.winner && *r.winner == i;
    row["pareto"] = std::find(r.pareto.begin(), r.pareto.end(), i) != r.pareto.end();
    rows.push_back(std::move(row));
  }
  j["rows"] = std::move(rows);
  return j;
}

}  // namespace llmsim::analysis
