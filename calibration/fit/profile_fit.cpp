#include "profile_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "least_squares.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/perf/decode_attention.hpp"
#include "llmsim/perf/gemm_tiles.hpp"

namespace llmsim::calibration {
namespace {

constexpr double kCurveMax = 1.5;   // Curve's documented upper bound
constexpr double kCurveMin = 1e-4;  // and a floor well above 0 (it must stay positive)

std::string fmt(double v, int digits = 4) {
  std::ostringstream s;
  s.precision(digits);
  s << v;
  return s.str();
}

double clamp_eff(double v, const std::string& field, std::vector<std::string>& notes) {
  if (v > kCurveMax) {
    notes.push_back(field + ": measured " + fmt(v) + " of the datasheet peak, clamped to " + fmt(kCurveMax) +
                    " (is the GpuSpec peak right?)");
    return kCurveMax;
  }
  return std::max(v, kCurveMin);
}

FitTerm term(std::string field, std::string model, const std::vector<double>& rel, std::string value) {
  const auto s = summarize_residuals(rel);
  return {std::move(field), std::move(model), s.n, s.rms, s.max_abs, std::move(value)};
}

/// Geometric mean: the least-squares constant in log space.
double geomean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / static_cast<double>(v.size()));
}

// ---- DRAM bandwidth: T(V) = a + V_L2/b_L2 + V_DRAM/b_DRAM per kernel, relative least squares. ----
void fit_memory(const RawResults& raw, const spec::GpuSpec& gpu, FitReport& r, std::vector<std::string>& kept) {
  if (raw.mem_bw.empty()) {
    kept.push_back("mem_bw_efficiency");
    kept.push_back("mem_bw_vs_bytes");
    return;
  }
  const double l2 = static_cast<double>(gpu.l2_bytes);
  struct KernelFit {
    double a = 0, b = 0;
    bool intercept = false;
  };
  std::map<std::string, KernelFit> fits;
  std::map<std::string, std::vector<const MemBwPoint*>> by_kernel;
  for (const auto& p : raw.mem_bw) by_kernel[p.kernel].push_back(&p);
  for (const auto& [kernel, pts] : by_kernel) {
    // L2-resident (footprint ≤ L2/2) and DRAM-resident (footprint ≥ 2·L2) sizes; the transition is
    // left out of the fit but still reported through the residuals of the curve below.
    std::vector<const MemBwPoint*> small, large;
    for (const auto* p : pts) {
      if (l2 > 0 && p->footprint_bytes <= l2 / 2) small.push_back(p);
      else if (l2 <= 0 || p->footprint_bytes >= 2 * l2) large.push_back(p);
    }
    if (large.empty()) {
      r.notes.push_back("mem_bw." + kernel + ": no DRAM-sized measurement (footprint ≥ 2×L2), not fitted");
      continue;
    }
    std::vector<std::vector<double>> rows;
    std::vector<double> t;
    const bool with_l2 = !small.empty();
    for (const auto* p : large) rows.push_back(with_l2 ? std::vector<double>{1, 0, p->bytes} : std::vector<double>{1, p->bytes}), t.push_back(p->time_s);
    for (const auto* p : small) rows.push_back({1, p->bytes, 0}), t.push_back(p->time_s);
    KernelFit kf;
    std::vector<double> rel;
    std::string l2_text;
    bool solved = false;
    if (rows.size() >= rows.front().size()) {
      const auto f = relative_least_squares(rows, t);
      const double inv_b = f.coef.back();
      if (f.coef[0] >= 0 && inv_b > 0 && (!with_l2 || f.coef[1] > 0)) {
        kf = {f.coef[0], 1.0 / inv_b, true};
        rel = f.rel_residuals;
        if (with_l2) l2_text = ", L2 plateau " + fmt(1e-9 / f.coef[1]) + " GB/s";
        solved = true;
      }
    }
    if (!solved) {  // too few sizes for a fixed cost: rate only, DRAM points only
      std::vector<double> x, tt;
      for (const auto* p : large) x.push_back(p->bytes), tt.push_back(p->time_s);
      const auto f = fit_affine_rate(x, tt);
      kf = {f.a, f.b, f.intercept_fitted};
      rel = f.rel_residuals;
    }
    fits[kernel] = kf;
    r.terms.push_back(term("mem_bw." + kernel,
                           kf.intercept ? "T = a + V/b (V: bytes moved; DRAM sizes" + std::string(with_l2 ? ", L2 sizes with their own b" : "") + ")"
                                        : "T = V/b (fixed cost not resolvable from these sizes)",
                           rel,
                           "b = " + fmt(kf.b * 1e-9) + " GB/s (" + fmt(kf.b / gpu.memory_bandwidth) +
                               " of peak), a = " + fmt(kf.a * 1e6) + " us" + l2_text));
  }
  // Copy moves what elementwise ops move (read + write); prefer it, then triad, read, write.
  const KernelFit* chosen = nullptr;
  std::string chosen_name;
  for (const char* k : {"copy", "triad", "read", "write"})
    if (!chosen && fits.count(k)) chosen = &fits[k], chosen_name = k;
  if (!chosen && !fits.empty()) chosen = &fits.begin()->second, chosen_name = fits.begin()->first;
  if (!chosen) {
    kept.push_back("mem_bw_efficiency");
    kept.push_back("mem_bw_vs_bytes");
    return;
  }
  r.profile.mem_bw_efficiency = clamp_eff(chosen->b / gpu.memory_bandwidth, "mem_bw_efficiency", r.notes);
  r.notes.push_back("mem_bw_efficiency from the '" + chosen_name + "' kernel");
  if (!chosen->intercept || chosen->a <= 0) {
    kept.push_back("mem_bw_vs_bytes");
    return;
  }
  // Fraction of sustained bandwidth one kernel reaches when moving V bytes: V / (a·b + V).
  perf::Curve c;
  for (double v = 4096; v <= 64e9; v *= 4) {
    c.x.push_back(v);
    c.y.push_back(std::clamp(v / (chosen->a * chosen->b + v), kCurveMin, 1.0));
  }
  r.profile.mem_bw_vs_bytes = c;
}

// ---- GEMM: the cost model's t = f + ((F/(P·e_c(M)))^p + (B/(BW·e_bw(M)))^p)^(1/p) (perf/cost_model.cpp).
// f and p stay at the base profile's values; per dtype and M one scale k multiplies the base profile's
// e_c(M) and e_bw(M) so the model meets the measurements: least squares in log space over the K×N shapes
// (i.e. the geometric mean of the per-shape k). The base curves keep the balance between the two terms,
// the measurements set the level. gemm_bw_eff_vs_m is scaled from the 16-bit dtypes (fp16, bf16).
double pnorm(double a, double b, double p) {
  if (p >= 32.0) return std::max(a, b);
  const double m = std::max(a, b);
  return m <= 0 ? 0 : m * std::pow(std::pow(a / m, p) + std::pow(b / m, p), 1.0 / p);
}

void fit_gemm(const RawResults& raw, const spec::GpuSpec& gpu, FitReport& r, std::vector<std::string>& kept) {
  if (raw.gemm.empty()) {
    kept.push_back("gemm_eff_vs_m");
    kept.push_back("gemm_bw_eff_vs_m");
    return;
  }
  const perf::HardwareProfile base = r.profile;
  const double f = base.gemm_fixed_s, p = base.roofline_exponent;
  const auto base_c = [&](spec::DType dt) -> const perf::Curve& {
    auto it = base.gemm_eff_vs_m.find(dt);
    return it != base.gemm_eff_vs_m.end() ? it->second : base.gemm_eff_vs_m.at(spec::DType::fp16);
  };
  // Time the kernel spends on its roofline part (the fixed cost f is the base profile's).
  const auto body = [&](const GemmPoint& g) { return std::max(g.time_s - f, 0.2 * g.time_s); };
  // The cost model divides the compute rate by the wave factor of each GEMM's tile grid (perf/gemm_tiles.hpp): the
  // curve is fitted de-quantized, so a shape with a partly empty last wave does not pull the level down twice.
  const auto waves = [&](const GemmPoint& g) { return 1.0 / perf::gemm_wave_factor(g.m, g.n, gpu.sm_count); };

  std::map<std::string, std::map<double, std::vector<const GemmPoint*>>> by;
  for (const auto& g : raw.gemm) by[g.dtype][g.m].push_back(&g);
  // Pass 1: the 16-bit dtypes set both curves' level per M.
  std::map<double, std::vector<double>> k16;
  std::vector<std::pair<spec::DType, std::string>> dtypes;
  for (const auto& [dname, by_m] : by) {
    spec::DType dt;
    try {
      dt = spec::parse_dtype(dname, "measurements.gemm.dtype");
    } catch (const ConfigError& e) {
      r.notes.push_back(std::string("gemm: ") + e.what() + " — records skipped");
      continue;
    }
    if (!(gpu.tensor_peak(dt) > 0)) {
      r.notes.push_back("gemm." + dname + ": " + gpu.id + " has no datasheet peak for this dtype, records skipped");
      continue;
    }
    dtypes.emplace_back(dt, dname);
    if (dt != spec::DType::fp16 && dt != spec::DType::bf16) continue;
    const double peak = gpu.tensor_peak(dt);
    for (const auto& [m, pts] : by_m)
      for (const auto* g : pts) {
        const double tc = g->flops / (peak * base_c(dt).at(m)) * waves(*g), tm = g->bytes / (gpu.memory_bandwidth * base.gemm_bw_eff_vs_m.at(m));
        k16[m].push_back(pnorm(tc, tm, p) / body(*g));
      }
  }
  if (!k16.empty()) {
    perf::Curve cb;
    for (const auto& [m, ks] : k16) {
      cb.x.push_back(m);
      cb.y.push_back(std::clamp(geomean(ks) * base.gemm_bw_eff_vs_m.at(m), kCurveMin, kCurveMax));
    }
    r.profile.gemm_bw_eff_vs_m = cb;
  } else {
    kept.push_back("gemm_bw_eff_vs_m");
  }
  const perf::Curve& bw = r.profile.gemm_bw_eff_vs_m;
  // Pass 2: per dtype, e_c(M). 16-bit: the same k as the bandwidth curve (pooled over fp16 and bf16 is
  // not assumed: each dtype gets its own geometric mean). Others: solve for e_c with e_bw fixed.
  for (const auto& [dt, dname] : dtypes) {
    const double peak = gpu.tensor_peak(dt);
    const bool sixteen = dt == spec::DType::fp16 || dt == spec::DType::bf16;
    perf::Curve ce;
    for (const auto& [m, pts] : by.at(dname)) {
      std::vector<double> ks;
      for (const auto* g : pts) {
        const double tc = g->flops / (peak * base_c(dt).at(m)) * waves(*g);
        const double tm = g->bytes / (gpu.memory_bandwidth * bw.at(m));
        double k;
        if (sixteen) {
          k = pnorm(tc, g->bytes / (gpu.memory_bandwidth * base.gemm_bw_eff_vs_m.at(m)), p) / body(*g);
        } else {
          // (tc/k)^p + tm^p = T^p  →  k = tc / (T^p − tm^p)^(1/p); a point faster than its memory term alone
          // says nothing about compute, so it gets the largest k the curve allows.
          const double T = body(*g);
          k = T > tm ? tc / std::pow(std::pow(T, p) - std::pow(tm, p), 1.0 / p) : kCurveMax / base_c(dt).at(m);
        }
        ks.push_back(k);
      }
      ce.x.push_back(m);
      ce.y.push_back(clamp_eff(geomean(ks) * base_c(dt).at(m), "gemm_eff_vs_m." + dname + " at M=" + fmt(m), r.notes));
    }
    std::vector<double> rel;
    for (std::size_t i = 0; i < ce.x.size(); ++i)
      for (const auto* g : by.at(dname).at(ce.x[i])) {
        const double t = f + pnorm(g->flops / (peak * ce.y[i]) * waves(*g), g->bytes / (gpu.memory_bandwidth * bw.at(ce.x[i])), p);
        rel.push_back((t - g->time_s) / g->time_s);
      }
    r.profile.gemm_eff_vs_m[dt] = ce;
    r.terms.push_back(term("gemm_eff_vs_m." + dname,
                           "T = f + ((F/(P·e_c(M)))^p + (B/(BW·e_bw(M)))^p)^(1/p); per M one scale on the base "
                           "curves, least squares in log space over K×N shapes",
                           rel,
                           fmt(ce.x.size()) + " M values; e_c = " + fmt(ce.y.front()) + " at M=" + fmt(ce.x.front()) +
                               ", " + fmt(ce.y.back()) + " at M=" + fmt(ce.x.back()) + "; e_bw = " + fmt(bw.at(ce.x.front())) +
                               " at M=" + fmt(ce.x.front())));
  }
  kept.push_back("gemm_fixed_s");
  kept.push_back("roofline_exponent");
}

// ---- Attention. ----
// Decode: the cost model's kernel model (perf/decode_attention.hpp) per point,
//   T = t_fixed·(1 + [split]) + waves·t_cta + bytes / min(e·BW, running CTAs·r_cta),
// with (e, r_cta) searched on a grid and (t_fixed, t_cta), which enter linearly, solved by weighted least
// squares in relative error for each grid point; the best grid point wins.
void fit_decode_attention(const RawResults& raw, const spec::GpuSpec& gpu, FitReport& r,
                          std::vector<std::string>& kept) {
  const std::vector<std::string> fields = {"attn_decode_bw_efficiency", "attn_decode_cta_bandwidth", "attn_decode_cta_s",
                                           "attn_decode_fixed_s"};
  if (raw.attn_decode.size() < 4) {
    if (!raw.attn_decode.empty())
      r.notes.push_back("attn_decode: " + std::to_string(raw.attn_decode.size()) + " points are too few to fit 4 terms");
    kept.insert(kept.end(), fields.begin(), fields.end());
    return;
  }
  struct Best {
    double e = 0, rcta = 0, t0 = 0, tc = 0, rms = 1e300;
    std::vector<double> rel;
  } best;
  std::vector<double> a(raw.attn_decode.size()), w(a.size()), st(a.size());
  for (int ie = 0; ie <= 90; ++ie) {
    const double e = 0.30 + 0.01 * ie;
    for (int ir = 0; ir <= 48; ++ir) {
      const double rcta = 2e9 * std::pow(2.0, ir / 8.0);  // 2 … 128 GB/s in 2^(1/8) steps
      perf::HardwareProfile trial = r.profile;
      trial.attn_decode_bw_efficiency = e;
      trial.attn_decode_cta_bandwidth = rcta;
      trial.attn_decode_cta_s = 0;
      trial.attn_decode_fixed_s = 0;
      // Normal equations of Σ ((a t0 + w tc + s − T)/T)² in (t0, tc), clamped at zero.
      double saa = 0, saw = 0, sww = 0, say = 0, swy = 0;
      for (std::size_t i = 0; i < raw.attn_decode.size(); ++i) {
        const auto& p = raw.attn_decode[i];
        const perf::DecodeAttentionModel m(gpu, trial, perf::AttentionShape{p.heads, p.kv_heads, p.head_dim, 2.0},
                                           spec::DType::fp16, perf::DecodeAttentionBackend::flash_attn, r.profile.roofline_exponent);
        const auto c = m.per_layer(p.batch, p.batch * (p.context - 1));
        a[i] = c.splits > 1 ? 2.0 : 1.0;
        w[i] = c.waves;
        st[i] = c.stream_s;
        const double inv = 1.0 / p.time_s, ai = a[i] * inv, wi = w[i] * inv, yi = (p.time_s - st[i]) * inv;
        saa += ai * ai, saw += ai * wi, sww += wi * wi, say += ai * yi, swy += wi * yi;
      }
      double t0 = 0, tc = 0;
      const double det = saa * sww - saw * saw;
      if (det > 0) t0 = (say * sww - swy * saw) / det, tc = (swy * saa - say * saw) / det;
      if (t0 < 0 || tc < 0 || !(det > 0)) {
        const double t0_only = saa > 0 ? std::max(0.0, say / saa) : 0, tc_only = sww > 0 ? std::max(0.0, swy / sww) : 0;
        // Keep whichever single term explains more.
        double e0 = 0, e1 = 0;
        for (std::size_t i = 0; i < a.size(); ++i) {
          const double T = raw.attn_decode[i].time_s;
          e0 += std::pow((a[i] * t0_only + st[i] - T) / T, 2);
          e1 += std::pow((w[i] * tc_only + st[i] - T) / T, 2);
        }
        t0 = e0 <= e1 ? t0_only : 0;
        tc = e0 <= e1 ? 0 : tc_only;
      }
      std::vector<double> rel(a.size());
      double ss = 0;
      for (std::size_t i = 0; i < a.size(); ++i) {
        const double T = raw.attn_decode[i].time_s;
        rel[i] = (a[i] * t0 + w[i] * tc + st[i] - T) / T;
        ss += rel[i] * rel[i];
      }
      const double rms = std::sqrt(ss / static_cast<double>(a.size()));
      if (rms < best.rms) best = {e, rcta, t0, tc, rms, rel};
    }
  }
  r.profile.attn_decode_bw_efficiency = best.e;
  r.profile.attn_decode_cta_bandwidth = best.rcta;
  r.profile.attn_decode_cta_s = std::min(best.tc, 1e-2);
  r.profile.attn_decode_fixed_s = std::min(best.t0, 1e-2);
  r.terms.push_back(term("attn_decode_*",
                         "T = t_fixed·(1+split) + waves·t_cta + bytes/min(e·BW, CTAs·r_cta) (perf/decode_attention.hpp)",
                         best.rel,
                         "e = " + fmt(best.e) + ", r_cta = " + fmt(best.rcta * 1e-9) + " GB/s, t_cta = " +
                             fmt(best.tc * 1e6) + " us, t_fixed = " + fmt(best.t0 * 1e6) + " us"));
}

void fit_attention(const RawResults& raw, const spec::GpuSpec& gpu, FitReport& r, std::vector<std::string>& kept) {
  fit_decode_attention(raw, gpu, r, kept);
  if (raw.attn_prefill.empty()) {
    kept.push_back("attn_prefill_efficiency");
    return;
  }
  // Per implementation; the best one stands for what a serving engine runs (FlashAttention-class).
  std::map<std::string, std::vector<const AttnPrefillPoint*>> by_impl;
  for (const auto& p : raw.attn_prefill) by_impl[p.impl].push_back(&p);
  double best = 0;
  std::string best_impl;
  std::vector<double> best_rel;
  int best_n = 0;
  for (const auto& [impl, pts] : by_impl) {
    std::vector<double> e;
    double longest = 0;
    for (const auto* p : pts) longest = std::max(longest, p->seq);
    for (const auto* p : pts) {
      // Long prompts carry the time; sequences under 1024 only when nothing longer was measured.
      if (p->seq < 1024 && longest >= 1024) continue;
      spec::DType dt = spec::DType::fp16;
      try {
        dt = spec::parse_dtype(p->dtype, "measurements.attn_prefill.dtype");
      } catch (const ConfigError&) {
      }
      const double peak = gpu.tensor_peak(dt) > 0 ? gpu.tensor_peak(dt) : gpu.fp16_flops;
      e.push_back(p->flops / (p->time_s * peak));
    }
    const double g = geomean(e);
    r.notes.push_back("attn_prefill." + impl + ": " + fmt(g) + " of peak over " + fmt(e.size()) + " lengths");
    if (g > best) {
      best = g, best_impl = impl, best_n = static_cast<int>(e.size());
      best_rel.clear();
      for (double x : e) best_rel.push_back(x / g - 1.0);
    }
  }
  r.profile.attn_prefill_efficiency = clamp_eff(best, "attn_prefill_efficiency", r.notes);
  r.terms.push_back(term("attn_prefill_efficiency",
                         "geometric mean of causal flops/(T·peak) over prompt lengths ≥ 1024, best implementation",
                         best_rel, fmt(best) + " (" + best_impl + ", " + std::to_string(best_n) + " lengths)"));
}

// ---- Fixed costs: per-kernel launch slope and link α–β. ----
void fit_overheads(const RawResults& raw, FitReport& r, std::vector<std::string>& kept) {
  for (const auto& [mode, field] : {std::pair<std::string, std::string>{"stream", "kernel_launch_s"}, {"graph", "graph_launch_s"}}) {
    std::vector<double> n, t;
    for (const auto& p : raw.launch)
      if (p.mode == mode) n.push_back(p.kernels), t.push_back(p.time_s);
    if (n.empty()) {
      kept.push_back(field);
      continue;
    }
    const auto f = fit_affine_rate(n, t);
    const double per_kernel = 1.0 / f.b;
    (field == "kernel_launch_s" ? r.profile.kernel_launch_s : r.profile.graph_launch_s) = per_kernel;
    r.terms.push_back(term(field, f.intercept_fitted ? "T(N kernels) = a + N·g" : "T(N kernels) = N·g", f.rel_residuals,
                           "g = " + fmt(per_kernel * 1e6) + " us per kernel"));
  }
  auto alpha_beta = [&](const std::vector<std::string>& kinds, const std::string& label) -> std::pair<bool, AffineRateFit> {
    std::vector<double> s, t;
    for (const auto& p : raw.copy)
      if (std::find(kinds.begin(), kinds.end(), p.kind) != kinds.end()) s.push_back(p.bytes), t.push_back(p.time_s);
    if (s.empty()) return {false, {}};
    // Protocol switches make small transfers follow their own line; when there are enough transfers of
    // ≥ 1 MiB the link's α–β is fitted on those (the sizes whose time the simulator cares about).
    std::vector<double> sl, tl;
    for (std::size_t i = 0; i < s.size(); ++i)
      if (s[i] >= 1048576.0) sl.push_back(s[i]), tl.push_back(t[i]);
    if (sl.size() >= 3) s.swap(sl), t.swap(tl);
    auto f = fit_affine_rate(s, t);
    // The relative fit weighs every size alike, which lets β drift above what the largest transfer
    // sustains (NCCL's protocol steps); anchor β there: β = S_max / (T(S_max) − α).
    const auto imax = static_cast<std::size_t>(std::max_element(s.begin(), s.end()) - s.begin());
    if (s.size() >= 3 && t[imax] > f.a) {
      f.b = s[imax] / (t[imax] - f.a);
      for (std::size_t i = 0; i < s.size(); ++i) f.rel_residuals[i] = (f.a + s[i] / f.b - t[i]) / t[i];
    }
    r.terms.push_back(term(label, f.intercept_fitted ? "T(S) = α + S/β" : "T(S) = S/β", f.rel_residuals,
                           "β = " + fmt(f.b * 1e-9) + " GB/s, α = " + fmt(f.a * 1e6) + " us"));
    return {true, f};
  };
  const auto h2d = alpha_beta({"h2d"}, "copy.h2d");
  const auto d2h = alpha_beta({"d2h"}, "copy.d2h");
  if (h2d.first || d2h.first) {
    double sum = 0;
    int n = 0;
    for (const auto* f : {&h2d, &d2h})
      if (f->first) sum += f->second.b, ++n;
    r.profile.host_bandwidth = sum / n;
    r.notes.push_back("host_bandwidth = mean of the measured directions (" + std::to_string(n) + ")");
  } else {
    kept.push_back("host_bandwidth");
  }
  const auto peer = alpha_beta({"peer"}, "copy.peer");
  if (peer.first) {
    r.profile.link_bandwidth = peer.second.b;
    if (peer.second.intercept_fitted) r.profile.link_latency_s = peer.second.a;
    else kept.push_back("link_latency_s");
  } else {
    kept.push_back("link_bandwidth");
    kept.push_back("link_latency_s");
  }
}

}  // namespace

FitReport fit_profile(const RawResults& raw, const spec::GpuSpec& gpu, perf::HardwareProfile base) {
  if (raw.gpu_id != gpu.id)
    throw CalibrationDataError("raw file was measured on '" + raw.gpu_id + "' (" + raw.device_name +
                               ") but the fit was asked for GPU '" + gpu.id + "'");
  if (!(gpu.memory_bandwidth > 0)) throw CalibrationDataError("gpu '" + gpu.id + "' has no peak memory bandwidth");
  FitReport r;
  r.profile = std::move(base);
  r.profile.gpu_id = gpu.id;
  r.profile.source = "calibrated " + raw.date + " on " + raw.device_name + " by llmsim calibrate-fit (raw: " +
                     raw.source + ")";
  std::vector<std::string> kept;
  fit_memory(raw, gpu, r, kept);
  fit_gemm(raw, gpu, r, kept);
  fit_attention(raw, gpu, r, kept);
  fit_overheads(raw, r, kept);
  // Engine properties and collective terms our programs do not measure (they time copies, not NCCL).
  for (const char* f : {"cpu_overhead_per_iter_s", "cpu_overhead_per_seq_s", "v0_cpu_overhead_per_iter_s",
                        "v0_cpu_overhead_per_seq_s", "custom_allreduce_latency_s", "custom_allreduce_bandwidth", "nccl_ll_step_s"})
    kept.push_back(f);
  r.kept_from_base = kept;
  if (raw.skipped > 0) r.notes.push_back(std::to_string(raw.skipped) + " records were marked skipped by the programs");
  for (const auto& t : raw.ignored_tests) r.notes.push_back("records of test '" + t + "' are not used by the fit");
  r.profile.validate("profile");
  return r;
}

Json to_json(const FitReport& r) {
  Json terms = Json::array();
  for (const auto& t : r.terms)
    terms.push_back({{"field", t.field}, {"model", t.model}, {"points", t.points},
                     {"rms_rel_residual", t.rms_rel_residual}, {"max_rel_residual", t.max_rel_residual},
                     {"value", t.value}});
  return {{"gpu_id", r.profile.gpu_id}, {"source", r.profile.source}, {"terms", terms},
          {"kept_from_base", r.kept_from_base}, {"notes", r.notes}};
}

}  // namespace llmsim::calibration
