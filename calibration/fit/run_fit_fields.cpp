// The candidate fields of a run fit (run_fit_fields.hpp).
#include "run_fit_fields.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "llmsim/core/number.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/inprocess_server.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/perf/served_step_host.hpp"
#include "llmsim/perf/serving_path.hpp"

namespace llmsim::calibration::detail {

namespace {

/// Multiplies the curve points whose x lies in (lo_m, hi_m] (efficiency curves), keeping them positive.
void scale_points(perf::Curve& c, const perf::Curve& base, double lo_m, double hi_m, double s) {
  for (std::size_t i = 0; i < c.x.size(); ++i)
    if (base.x[i] > lo_m && base.x[i] <= hi_m) c.y[i] = base.y[i] * s;
}

double max_in(const perf::Curve& c, double lo_m, double hi_m) {
  double m = 0;
  for (std::size_t i = 0; i < c.x.size(); ++i)
    if (c.x[i] > lo_m && c.x[i] <= hi_m) m = std::max(m, c.y[i]);
  return m;
}

/// The M ranges fitted apart, and the points a curve gets at them (kGrid) so that each range has its own.
constexpr double kRanges[][2] = {{0, 128}, {128, 1024}, {1024, INFINITY}};
constexpr double kGrid[] = {1, 16, 128, 512, 1024, 4096, 16384};

/// The same curve with points added at kGrid: a point on a piecewise-linear (in log M) curve changes no value, so
/// the base profile predicts exactly as before, and a one-point (constant) prior gets points in every M range.
perf::Curve with_range_points(const perf::Curve& c) {
  std::map<double, double> pts;
  for (std::size_t i = 0; i < c.x.size(); ++i) pts[c.x[i]] = c.y[i];
  for (double x : kGrid)
    if (!pts.count(x)) pts[x] = c.at(x);
  perf::Curve out;
  for (const auto& [x, y] : pts) {
    out.x.push_back(x);
    out.y.push_back(y);
  }
  return out;
}

std::string m_range(double lo, double hi) {
  auto n = [](double v) { return std::to_string(static_cast<long long>(v)); };
  if (lo <= 0 && std::isinf(hi)) return "[all M]";
  if (lo <= 0) return "[M<=" + n(hi) + "]";
  if (std::isinf(hi)) return "[M>" + n(lo) + "]";
  return "[" + n(lo) + "<M<=" + n(hi) + "]";
}

/// The fit's parameter for the GEMM efficiency of dtype `d` over tokens [lo, hi]: a scale of curve `c`'s points
/// there (the rest of the curve unchanged), bounded so that no point exceeds 1 (`top`: the range's highest point).
Param gemm_range_param(const perf::Curve& c, spec::DType d, double lo, double hi, double top) {
  Param q{"gemm_eff_vs_m." + std::string(spec::to_string(d)) + m_range(lo, hi), "scale", 1, 0.05, 1.0 / top, {}};
  q.apply = [c, d, lo, hi](perf::HardwareProfile& p, double s) { scale_points(p.gemm_eff_vs_m[d], c, lo, hi, s); };
  q.curve_dtype = d;
  q.lo_m = lo;
  q.hi_m = hi;
  q.prior_sigma = kPriorSigmaKernel;
  return q;
}

}  // namespace

std::vector<Param> candidates(perf::HardwareProfile& base, const std::vector<analysis::BenchPredictor>& preds) {
  std::vector<Param> out;
  std::set<spec::DType> dtypes;
  bool v1 = false, v0 = false, tp = false;
  double path_s = 0;  // the serving path's fixed part of the serving runs (one runtime: one value), 0 if none
  double inproc_s = 0;  // the in-process server's cost per streamed output per step (vLLM < 0.6 served), 0 if none
  double front_s = 0;   // its front part per request on the engine's loop (vLLM < 0.6 served), 0 if none
  // The per-sequence host cost V0 runtimes add to the profile's (before 0.6: the synchronous output processing,
  // perf/runtime.cpp; one runtime per fit, so one value), 0 if none.
  double v0_sync_per_seq = 0;
  for (const auto& p : preds) {
    const auto& rs = p.resolved();
    if (p.run().serve) {
      const bool offline = spec::offline_workload(rs.scenario.workload);
      path_s = std::max(path_s, perf::serving_path(rs.scenario.engine, offline, base).fixed_s);
      if (perf::inprocess_server_per_output_s(perf::runtime_of(rs.scenario.engine)) > 0)
        inproc_s = std::max(inproc_s, perf::served_step_host_per_seq_s(rs.scenario.engine, offline, base));
      front_s = std::max(front_s, perf::inprocess_front(rs.scenario.engine, offline, base).fixed_s);
    }
    const perf::CostModel cm(rs.model, rs.quant, rs.gpu, base, rs.scenario.hardware.parallel, true, 0,
                             perf::runtime_of(rs.scenario.engine));
    dtypes.insert(cm.gemm_dtype());
    const auto traits = perf::runtime_traits(perf::runtime_of(rs.scenario.engine));
    const auto cpu = traits.cpu;
    v1 = v1 || cpu == perf::CpuCost::profile_v1;
    v0 = v0 || cpu == perf::CpuCost::profile_v0;
    if (cpu == perf::CpuCost::profile_v0) v0_sync_per_seq = std::max(v0_sync_per_seq, traits.sync_output_per_seq_s);
    tp = tp || rs.scenario.hardware.parallel.tp > 1;
  }
  const perf::HardwareProfile b = base;
  auto eff = [&](const std::string& field, double value, double perf::HardwareProfile::*member) {
    Param q{field, "value", value, 0.05, 1.0 / value, {}};
    q.apply = [member, value](perf::HardwareProfile& p, double s) { p.*member = value * s; };
    q.prior_sigma = kPriorSigmaKernel;
    out.push_back(q);
  };
  auto time = [&](const std::string& field, double value, double perf::HardwareProfile::*member,
                  double sigma = kPriorSigmaHost) {
    if (!(value > 0)) return;
    Param q{field, "value", value, 0.01, 100, {}};
    q.apply = [member, value](perf::HardwareProfile& p, double s) { p.*member = value * s; };
    q.prior_sigma = sigma;
    out.push_back(q);
  };
  if (!b.gemm_bw_eff_vs_m.empty()) {
    const perf::Curve c = b.gemm_bw_eff_vs_m;
    Param q{"gemm_bw_eff_vs_m", "scale", 1, 0.05, 1.0 / max_in(c, 0, INFINITY), {}};
    q.apply = [c](perf::HardwareProfile& p, double s) { scale_points(p.gemm_bw_eff_vs_m, c, 0, INFINITY, s); };
    q.prior_sigma = kPriorSigmaKernel;
    out.push_back(q);
  }
  for (spec::DType d : dtypes) {
    if (!base.gemm_eff_vs_m.count(d)) {
      // The cost model reads fp16's curve for a dtype without one: the fit gives this dtype its own.
      if (!base.gemm_eff_vs_m.count(spec::DType::fp16)) continue;
      base.gemm_eff_vs_m[d] = base.gemm_eff_vs_m.at(spec::DType::fp16);
    }
    base.gemm_eff_vs_m[d] = with_range_points(base.gemm_eff_vs_m.at(d));
    const perf::Curve c = base.gemm_eff_vs_m.at(d);
    for (const auto& r : kRanges) {
      const double lo = r[0], hi = r[1], top = max_in(c, lo, hi);
      if (!(top > 0)) continue;
      Param q = gemm_range_param(c, d, lo, hi, top);
      out.push_back(q);
    }
  }
  eff("attn_decode_bw_efficiency", b.attn_decode_bw_efficiency, &perf::HardwareProfile::attn_decode_bw_efficiency);
  // Decode attention streams K/V at min(e·BW, running CTAs · r_cta): which of the two binds depends on the batch, so
  // both are candidates and the runs say which they constrain.
  time("attn_decode_cta_bandwidth", b.attn_decode_cta_bandwidth, &perf::HardwareProfile::attn_decode_cta_bandwidth,
       kPriorSigmaKernel);  // a kernel's rate: priced as an efficiency
  eff("attn_prefill_efficiency", b.attn_prefill_efficiency, &perf::HardwareProfile::attn_prefill_efficiency);
  if (v1) {
    time("cpu_overhead_per_iter_s", b.cpu_overhead_per_iter_s, &perf::HardwareProfile::cpu_overhead_per_iter_s);
    time("cpu_overhead_per_seq_s", b.cpu_overhead_per_seq_s, &perf::HardwareProfile::cpu_overhead_per_seq_s);
  }
  if (v0) {
    time("v0_cpu_overhead_per_iter_s", b.v0_cpu_overhead_per_iter_s, &perf::HardwareProfile::v0_cpu_overhead_per_iter_s);
    // The per-sequence host cost a step pays is the profile's field plus the runtime's synchronous output processing
    // (vLLM before 0.6: 100 us per sequence, RFC #6913, against the field's 10 us). The multiplier scales the two
    // together, so that the prior's factor 2 (σ = ln 2) is a factor 2 of the cost the runs see, not of a tenth of it
    // (a card whose whole cost is twice the runtime's then asked a 12-fold move of the field, 3.6 σ: the prior held
    // it). The field goes from 1 % of itself (the runtime's part left) to 100 times itself, as before.
    const double v = b.v0_cpu_overhead_per_seq_s, off = v0_sync_per_seq;
    if (v > 0) {
      Param q{"v0_cpu_overhead_per_seq_s", "value", v, (off + 0.01 * v) / (v + off), (off + 100 * v) / (v + off), {}};
      q.apply = [v, off](perf::HardwareProfile& p, double s) { p.v0_cpu_overhead_per_seq_s = (v + off) * s - off; };
      q.prior_sigma = kPriorSigmaHost;
      q.offset = off;
      out.push_back(q);
    }
  }
  if (path_s > 0) {
    // The serving path's fixed part per request (HTTP, IPC, detokenising: perf/serving_path.hpp), which TTFT and E2E
    // of served requests carry and their TPOT and ITL do not: a host cost, from 1 % of the runtime's value (nothing,
    // in effect) to kServingPathMaxS. A runtime that prices none (0: vLLM before 0.6, llama.cpp) has no multiplier to
    // fit, and gets no candidate.
    Param q{"api_server_s", "value", path_s, 0.01, std::max(1.0, kServingPathMaxS / path_s), {}};
    q.apply = [path_s](perf::HardwareProfile& p, double s) { p.api_server_s = path_s * s; };
    q.prior_sigma = kPriorSigmaHost;
    out.push_back(q);
  }
  if (inproc_s > 0) {
    // vLLM before 0.6 streamed each step's outputs from coroutines on the engine's own event loop, between two steps
    // (perf/inprocess_server.hpp): host time per streaming request per step, which the served runs' TPOT and, with the
    // steps, their throughput and queued TTFT carry. A host cost, from 1 % of vllm#6883's 100 us (nothing, in effect)
    // to kInprocessServerMaxS. Only served runs of such a release have it (an offline or static-batch run streams
    // nothing; vLLM 0.6+'s engine process keeps MQLLMEngine's sourced value): no candidate otherwise.
    Param q{"inprocess_server_per_output_s", "value", inproc_s, 0.01, std::max(1.0, kInprocessServerMaxS / inproc_s), {}};
    q.apply = [inproc_s](perf::HardwareProfile& p, double s) { p.inprocess_server_per_output_s = inproc_s * s; };
    q.prior_sigma = kPriorSigmaHost;
    out.push_back(q);
  }
  if (front_s > 0) {
    // ... and each request's handler ran its front part on that loop before the engine saw the request
    // (perf/inprocess_server.hpp inprocess_front): a queue under a burst, which the served runs' TTFT carries in
    // proportion to the requests sent together. A host cost, from 1 % of the runtime's own value to 4x it
    // (kInprocessRequestMaxS over the carried-over 0.5 ms: 2 ms where that is all, 10.8 ms on 0.6.0-0.6.1, whose
    // front part carries the RPC frontend's 2.2 ms as well, perf/rpc_frontend.hpp); only served runs of such a
    // release have it.
    Param q{"inprocess_server_per_request_s", "value", front_s, 0.01,
            kInprocessRequestMaxS / perf::inprocess_server::kPerRequestS, {}};
    q.apply = [front_s](perf::HardwareProfile& p, double s) { p.inprocess_server_per_request_s = front_s * s; };
    q.prior_sigma = kPriorSigmaHost;
    out.push_back(q);
  }
  if (tp) {
    time("custom_allreduce_latency_s", b.custom_allreduce_latency_s, &perf::HardwareProfile::custom_allreduce_latency_s);
    time("link_latency_s", b.link_latency_s, &perf::HardwareProfile::link_latency_s);
  }
  return out;
}

std::vector<Param> merge_ranges(const std::vector<Param>& params, const std::vector<int>& strong, int min_runs,
                                double separable_sensitivity, const perf::HardwareProfile& base,
                                std::vector<std::string>& notes) {
  std::vector<Param> out;
  std::set<spec::DType> done;
  for (std::size_t j = 0; j < params.size(); ++j) {
    const Param& q = params[j];
    if (!q.curve_dtype) {
      out.push_back(q);
      continue;
    }
    const spec::DType d = *q.curve_dtype;
    if (!done.insert(d).second) continue;
    // This dtype's ranges, in M order (candidates() emits them so), and which the runs pin apart.
    std::vector<std::size_t> idx;
    for (std::size_t k = j; k < params.size(); ++k)
      if (params[k].curve_dtype == d) idx.push_back(k);
    std::vector<int> owner(idx.size(), -1);  // the pinned range each range is fitted with
    std::vector<std::size_t> pinned;
    for (std::size_t i = 0; i < idx.size(); ++i)
      if (strong[idx[i]] >= min_runs) pinned.push_back(i);
    for (std::size_t i = 0; i < idx.size(); ++i) {
      if (pinned.empty()) {
        owner[i] = 0;
        continue;
      }
      std::size_t best = pinned.front();
      for (std::size_t p : pinned)  // nearest pinned range; a tie goes to the lower M
        if ((p > i ? p - i : i - p) < (best > i ? best - i : i - best)) best = p;
      owner[i] = static_cast<int>(best);
    }
    const perf::Curve c = base.gemm_eff_vs_m.at(d);
    for (std::size_t g = 0; g < idx.size(); ++g) {
      double lo = INFINITY, hi = 0;
      std::vector<std::string> members;
      for (std::size_t i = 0; i < idx.size(); ++i) {
        if (owner[i] != static_cast<int>(g)) continue;
        lo = std::min(lo, params[idx[i]].lo_m);
        hi = std::max(hi, params[idx[i]].hi_m);
        members.push_back(params[idx[i]].field.substr(params[idx[i]].field.find('[')));
      }
      if (members.empty()) continue;
      if (members.size() == 1) {
        out.push_back(params[idx[g]]);
        continue;
      }
      const double top = max_in(c, lo, hi);
      Param m = gemm_range_param(c, d, lo, hi, top);
      std::string list;
      for (const auto& s : members) list += (list.empty() ? "" : ", ") + s;
      notes.push_back(m.field + ": the ranges " + list + " fitted as one multiplier (the same tensor cores at every "
                      "M; fewer than " + std::to_string(min_runs) + " runs move each of them apart by " +
                      format_fixed(100 * separable_sensitivity, 1) + " % per e-fold)");
      out.push_back(m);
    }
  }
  return out;
}

}  // namespace llmsim::calibration::detail
