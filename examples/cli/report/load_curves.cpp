#include "report/load_curves.hpp"

#include <algorithm>
#include <cmath>

#include "llmsim/analysis/capacity.hpp"
#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/sweep.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/gpu_option.hpp"

namespace llmsim::cli::report {

const std::vector<double>& load_fractions() {
  static const std::vector<double> f{0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 1.0, 1.15, 1.35, 1.7};
  return f;
}

spec::Scenario option_scenario(const spec::Scenario& base, const analysis::Row& row,
                               const analysis::CompareOptions& options) {
  spec::Scenario s = base;
  // compare names an option "<gpu option as written> <format> [knobs]"; the option text carries "+nvlink" / "@pp".
  const std::string option = row.name.substr(0, row.name.find(' '));
  analysis::set_gpu(s, option, analysis::price_for(options.prices, row.gpu),
                    analysis::price_for(options.purchase_prices, row.gpu));
  s.hardware.parallel = {row.tp, row.pp};
  s.hardware.replicas = 1;
  s.weights = row.quant;
  s.engine.policy = spec::parse_policy(row.policy);
  s.engine.max_num_seqs = row.max_num_seqs;
  s.engine.max_num_batched_tokens = row.max_num_batched_tokens;
  s.name = row.name;
  return s;
}

std::vector<LoadCurve> load_curves(const spec::Scenario& base, const analysis::CompareResult& result,
                                   const analysis::CompareOptions& options, const std::atomic<bool>* cancel,
                                   const analysis::Progress& progress) {
  const bool closed = result.target_concurrency.has_value();
  std::vector<LoadCurve> curves;
  std::vector<analysis::SweepPoint> points;
  std::vector<std::size_t> owner;  // point -> its curve
  for (std::size_t i = 0; i < result.rows.size(); ++i) {
    const analysis::Row& row = result.rows[i];
    LoadCurve curve;
    curve.row = i;
    if (!row.fits) {
      curve.note = "cannot run";
      curves.push_back(curve);
      continue;
    }
    double anchor = 0;
    if (row.capacity && row.capacity->found)
      anchor = closed && row.capacity->max_concurrency ? *row.capacity->max_concurrency : row.capacity->max_qps;
    else
      anchor = closed ? result.target_concurrency.value_or(0) : result.target_qps;
    if (!(anchor > 0)) {
      curve.note = "no load to anchor the curve";
      curves.push_back(curve);
      continue;
    }
    std::vector<analysis::SweepPoint> mine;
    try {
      spec::Scenario s = option_scenario(base, row, options);
      auto& w = s.workload;
      w.num_requests = std::min<std::int64_t>(w.num_requests, options.capacity.num_requests);
      w.warmup_requests = std::min<std::int64_t>(w.warmup_requests, options.capacity.warmup());
      if (w.warmup_requests >= w.num_requests) w.warmup_requests = w.num_requests / 10;
      double last = 0;
      for (double f : load_fractions()) {
        const double load = closed ? std::max(1.0, std::round(anchor * f)) : anchor * f;
        if (load <= last) continue;
        last = load;
        analysis::SweepPoint p;
        p.scenario = s;
        p.scenario.workload = spec::with_rate(s.workload, load);  // ConfigError for a trace replay
        mine.push_back(std::move(p));
      }
    } catch (const ConfigError& e) {
      curve.note = e.what();
      curves.push_back(curve);
      continue;
    }
    for (auto& p : mine) {
      owner.push_back(curves.size());
      points.push_back(std::move(p));
    }
    curves.push_back(curve);
  }
  if (points.empty()) return curves;
  analysis::SweepOptions sweep;
  sweep.row.cancel = cancel;
  const auto rows = analysis::run_sweep(points, std::max(1, options.jobs), progress, sweep);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const auto& r = rows[k];
    if (!r.fits || !r.summary) continue;
    LoadPoint p;
    p.load = closed ? static_cast<double>(analysis::closed_loop_users(points[k].scenario.workload).value_or(0))
                    : spec::offered_rate(points[k].scenario.workload).value_or(0.0);
    p.unstable = r.summary->unstable;
    p.ttft_p95_ms = r.summary->ttft_ms.p95;
    p.tpot_p95_ms = r.summary->tpot_ms.p95;
    curves[owner[k]].points.push_back(p);
  }
  return curves;
}

}  // namespace llmsim::cli::report
