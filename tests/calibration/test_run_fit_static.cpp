// The independent check of issue 28 in miniature: static batches (vLLM 0.5.4 benchmark_latency files) of two cards,
// fitted on batch 1 and 16 and predicting batch 32 and 64, which the fit never saw. No public set of such files outside
// the validation corpus has been found (data/calibration_runs/README.md; the corpus's static-batch sources are blind and
// are not fitted to), so the "cards" are llmsim's own priors changed where a real card differs from them (a sustained
// tensor-core clock 12 % lower at every M, weight streaming and decode attention 5-10 % slower, the host's per-step and
// per-sequence costs 1.5x and 2x), with a benchmark's +-2 % scatter on every file. At batch 1-16 the decode GEMMs'
// compute is below that scatter (it moves them by < 1 % per e-fold), so only a fit that prices batch 32-64's compute
// with what the 512-token prefill chunks measured can carry the clock over; one that keeps the prior for M <= 128
// cannot.
//
// Then the same card departing from the profile where batch 1 and 16 see least (docs/calibration.md, "What batch 1
// and 16 leave unseen"): the decode GEMMs' efficiency alone 30 % lower, the roofline's overlap of compute and memory,
// decode attention's per-CTA and per-call costs, the per-sequence host cost. The last three are no fit field; the
// first is fitted with the other M ranges.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "fit/run_fit.hpp"
#include "llmsim/analysis/bench_runs.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/spec/catalog.hpp"
#include "synthetic_runs.hpp"

using namespace llmsim;

namespace {

/// The scatter of every file (uniform in +-2 %, 1.15 % RMS): the error a profile keeps whatever it is.
constexpr double kStaticNoise = 0.02;

struct StaticUnseenError {
  double median = 0, p90 = 0, signed_median = 0;
};

/// |relative error| of every run's avg_latency predicted with `profile`: median and 90th percentile (numpy's
/// linear interpolation), and the signed median.
StaticUnseenError static_unseen_error(const std::vector<analysis::BenchRun>& runs, const perf::HardwareProfile& profile) {
  std::vector<double> a, s;
  for (const auto& r : runs) {
    const double e = analysis::BenchPredictor(r).predict(profile).at(0) / r.measured.at(0).value - 1;
    a.push_back(std::abs(e));
    s.push_back(e);
  }
  auto pct = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    const double i = q * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(i);
    return lo + 1 < v.size() ? v[lo] + (i - static_cast<double>(lo)) * (v[lo + 1] - v[lo]) : v[lo];
  };
  return {pct(a, 0.5), pct(a, 0.9), pct(s, 0.5)};
}

/// One card's files: 10 lengths x batch 1, 16 (fitted) and x batch 32, 64 (unseen), written from `card` with seeds
/// `seed` and `seed` + 1.
struct StaticCardRuns {
  std::vector<analysis::BenchRun> fit, unseen;
};

/// The card of the check: the prior changed where real cards differ from it.
perf::HardwareProfile static_check_card(const perf::HardwareProfile& base) {
  perf::HardwareProfile card = base;
  for (auto& [dt, c] : card.gemm_eff_vs_m)
    for (auto& y : c.y) y *= 0.88;
  for (auto& y : card.gemm_bw_eff_vs_m.y) y *= 0.95;
  card.attn_decode_cta_bandwidth *= 0.9;
  card.attn_decode_bw_efficiency *= 0.95;
  card.attn_prefill_efficiency *= 0.9;
  card.v0_cpu_overhead_per_iter_s *= 1.5;
  card.v0_cpu_overhead_per_seq_s *= 2.0;
  return card;
}

StaticCardRuns static_card_runs(const std::string& id, const perf::HardwareProfile& card, unsigned seed,
                                const test::TempDir& fit_dir, const test::TempDir& unseen_dir) {
  const std::vector<std::pair<int, int>> lengths{{128, 128}, {512, 128},  {1024, 256}, {2048, 128}, {256, 512},
                                                 {1024, 32}, {32, 1024},  {4096, 64},  {512, 512},  {128, 2048}};
  std::vector<test::Shape> small, large;
  for (auto [in, out] : lengths) {
    for (int b : {1, 16}) small.push_back({b, in, out});
    for (int b : {32, 64}) large.push_back({b, in, out});
  }
  test::Synth synth;
  synth.version = "0.5.4";
  synth.noise = kStaticNoise;
  synth.seed = seed;
  StaticCardRuns out;
  out.fit = analysis::read_bench_runs(test::synthetic_runs(fit_dir, id, small, card, synth)).runs;
  synth.seed = seed + 1;
  out.unseen = analysis::read_bench_runs(test::synthetic_runs(unseen_dir, id, large, card, synth)).runs;
  return out;
}

/// One card of the check: `id`'s files written with seeds `seed` (fit) and `seed` + 1 (unseen). With `figures`, also
/// the same fit without the prior (docs/calibration.md's figures; asserted nowhere).
void static_card(const std::string& id, unsigned seed, bool figures) {
  const auto gpu = spec::Catalog::builtin().gpu(id);
  const perf::HardwareProfile base = perf::default_profile(gpu);
  const perf::HardwareProfile card = static_check_card(base);
  test::TempDir fit_dir("runfit-static-fit-" + id), unseen_dir("runfit-static-unseen-" + id);
  const StaticCardRuns runs = static_card_runs(id, card, seed, fit_dir, unseen_dir);
  const auto& fit = runs.fit;
  const auto& unseen = runs.unseen;
  REQUIRE(fit.front().runtime == spec::Runtime::vllm_v0_sync);  // vLLM 0.4.3-0.5: V0, flash-attn decode

  const auto rep = calibration::fit_runs(fit, gpu, base);
  const StaticUnseenError before = static_unseen_error(unseen, base), after = static_unseen_error(unseen, rep.profile);
  REQUIRE(rep.profile.cross_validated_error);
  const auto& cv = *rep.profile.cross_validated_error;
  std::cout << id << ": fitted on " << fit.size() << " runs (batch 1, 16), leave-one-out median " << cv.median_abs
            << ", p90 " << cv.p90_abs << "; unseen " << unseen.size() << " runs (batch 32, 64): median "
            << before.median << " -> " << after.median << ", p90 " << before.p90 << " -> " << after.p90
            << ", signed median " << before.signed_median << " -> " << after.signed_median << "; iterations "
            << rep.iterations << " (" << rep.stopped_by << "), prior's plain fit " << rep.prior_fit_iterations << " ("
            << rep.prior_fit_stopped_by << "), leave-one-out refits at most " << rep.cv_iterations_max << "\n";
  for (const auto& f : rep.fields) std::cout << "  " << f.field << ": " << f.base << " -> " << f.fitted << "\n";
  for (const auto& n : rep.notes) std::cout << "  " << n << "\n";
  if (figures) {
    calibration::RunFitOptions plain;
    plain.prior_scale = 0;
    const auto raw = calibration::fit_runs(fit, gpu, base, plain);
    const StaticUnseenError u = static_unseen_error(unseen, raw.profile);
    std::cout << "  without the prior: leave-one-out median " << raw.profile.cross_validated_error->median_abs
              << ", p90 " << raw.profile.cross_validated_error->p90_abs << "; unseen median " << u.median << ", p90 "
              << u.p90 << "\n";
  }
  // The independent check's bar (unseen median <= 6 %, p90 <= 12 %, better than uncalibrated) is far above what
  // files that differ from the model only by their scatter allow: the bar here is that scatter. A profile that
  // carries the card over leaves the unseen runs with the files' own error: median within the scatter's bound, p90
  // within twice it (the unseen files' scatter plus the fitted fields' error, which the same scatter sets).
  CHECK(after.median < before.median);
  CHECK(after.p90 < before.p90);
  CHECK(after.median <= kStaticNoise);
  CHECK(after.p90 <= 2 * kStaticNoise);
  // The fit and every leave-one-out refit converged (run_fit_solver.hpp's rule) well before the iteration limit. So
  // does the prior's plain fit, whose minimum lies at the end of a long curved valley (weight streaming x the per-step
  // host cost, the host cost at its lower bound): without geodesic acceleration it crawled along it and stopped at
  // the limit on the H100 (docs/calibration.md, "when a solve stops").
  CHECK(rep.stopped_by == "converged");
  CHECK(rep.iterations < calibration::RunFitOptions{}.max_iterations / 4);
  CHECK(rep.cv_at_limit == 0);
  CHECK(rep.cv_iterations_max < calibration::RunFitOptions{}.max_iterations / 4);
  // Since V0's eager prefills wait on the host's Python forward (perf/eager_host.hpp, issue 27), a batch-1 run of a
  // short prompt costs max(the host's enqueue time, the GPU's work) in its prefill: the cost has a kink where the two
  // cross, and the plain fit may stop there because no step lowers the cost (no_step) rather than by the rule. Either
  // is a stop at a minimum; the iteration limit is not.
  CHECK((rep.prior_fit_stopped_by == "converged" || rep.prior_fit_stopped_by == "no_step"));
  CHECK(rep.prior_fit_iterations < calibration::RunFitOptions{}.max_iterations);
  // What prices batch 64's decode GEMMs (M = 64) is what the runs measured of the tensor cores elsewhere: within
  // 10 % of the card (the prior is 13.6 % off). Fitting M <= 128 apart, on runs that move it by < 1 % per e-fold,
  // kept the prior on the H100 (unconstrained) and drove it to its bound, 1.0 of peak, on the A100 (14 % and 57 %).
  const auto fitted = rep.profile.gemm_eff_vs_m.find(spec::DType::bf16);
  REQUIRE(fitted != rep.profile.gemm_eff_vs_m.end());
  CHECK(std::abs(fitted->second.at(64) / card.gemm_eff_vs_m.at(spec::DType::bf16).at(64) - 1) < 0.10);
  // The leave-one-run-out error of the small runs is the band the profile carries: it should not promise much
  // less than the large runs then show.
  CHECK(after.median < 3 * cv.median_abs + 0.01);
}

/// The card departing from the profile's shape where batch 1 and 16 see least, one departure at a time (no
/// cross-validation: only the unseen runs are judged). Each is a mechanism the small batches barely exercise or no
/// field prices; the fit must still carry the card to batch 32 and 64.
void static_departures(const std::string& id, unsigned seed) {
  const auto gpu = spec::Catalog::builtin().gpu(id);
  const perf::HardwareProfile base = perf::default_profile(gpu);
  using Departure = std::function<void(perf::HardwareProfile&)>;
  const std::vector<std::pair<std::string, Departure>> departures{
      // The decode GEMMs (M <= 128) alone 30 % below the rest of the curve: batch 1-16 move them by < 1 % per e-fold,
      // batch 64 by 2-8 %.
      {"decode GEMMs' compute x0.7",
       [](perf::HardwareProfile& p) {
         for (auto& [dt, c] : p.gemm_eff_vs_m) {
           perf::Curve t;
           for (double m : {1.0, 16.0, 128.0, 512.0, 1024.0, 4096.0, 16384.0}) {
             t.x.push_back(m);
             t.y.push_back(c.at(m) * (m <= 128 ? 0.7 : 1.0));
           }
           c = t;
         }
       }},
      // How compute and memory overlap (no fit field): 3 % per e-fold at batch 1, 12-15 % at 16-64.
      {"roofline exponent 1.5", [](perf::HardwareProfile& p) { p.roofline_exponent = 1.5; }},
      // Decode attention's fixed costs per wave of CTAs and per call (no fit field).
      {"decode attention's fixed costs x2",
       [](perf::HardwareProfile& p) {
         p.attn_decode_cta_s *= 2;
         p.attn_decode_fixed_s *= 2;
       }},
      // The per-sequence host cost (batch 1 does not see it, batch 16 by 1-1.5 % per e-fold, batch 64 by 3-4 %).
      {"per-sequence host cost x4",  // the card's x2, twice
       [](perf::HardwareProfile& p) { p.v0_cpu_overhead_per_seq_s *= 2; }},
      // The whole per-sequence host cost of a step twice the runtime's: the profile's 10 us and vLLM 0.5's synchronous
      // output processing, 100 us (perf/runtime.cpp, RFC #6913), both paid again (the card's x2 of the field kept).
      // Batch 16 moves the step by ~10 % per e-fold of that whole cost; the field alone is a tenth of it, so a prior
      // centred on the field asked a 12-fold move of it (3.6 sigma) for a factor 2 of the cost.
      {"whole per-sequence host cost x2",
       [](perf::HardwareProfile& p) {
         p.v0_cpu_overhead_per_seq_s += perf::runtime_traits(spec::Runtime::vllm_v0_sync).sync_output_per_seq_s +
                                        p.v0_cpu_overhead_per_seq_s / 2;
       }},
  };
  for (const auto& [name, depart] : departures) {
    perf::HardwareProfile card = static_check_card(base);
    depart(card);
    test::TempDir fit_dir("runfit-depart-fit-" + id), unseen_dir("runfit-depart-unseen-" + id);
    const StaticCardRuns runs = static_card_runs(id, card, seed, fit_dir, unseen_dir);
    calibration::RunFitOptions o;
    o.cross_validate = false;
    const auto rep = calibration::fit_runs(runs.fit, gpu, base, o);
    const StaticUnseenError before = static_unseen_error(runs.unseen, base),
                            after = static_unseen_error(runs.unseen, rep.profile);
    std::cout << id << ", " << name << ": unseen median " << before.median << " -> " << after.median << ", p90 "
              << before.p90 << " -> " << after.p90 << ", signed median " << before.signed_median << " -> "
              << after.signed_median << " (" << rep.iterations << " iterations)\n";
    INFO(id << ", " << name);
    CHECK(after.median < before.median);
    CHECK(after.p90 < before.p90);
    // The card now differs from what the fields can express, so the unseen error holds a part of that shape on top of
    // the scatter: half the scatter again (still a quarter of the independent check's bar).
    CHECK(after.median <= 1.5 * kStaticNoise);
    CHECK(after.p90 <= 3 * kStaticNoise);
    CHECK(rep.stopped_by == "converged");
  }
}

}  // namespace

// About a second of fitting natively each, many under AddressSanitizer: hidden in the sanitizer tree
// (LLMSIM_DEEP_CHECKS), like the real cards' fits (test_run_fit.cpp); one test case per card, so that ctest runs the
// two side by side (tests/calibration/CMakeLists.txt); the seeds are those of the single case they were before (11,
// 12 for the H100; 13, 14 for the A100).
#ifdef LLMSIM_DEEP_CHECKS
#define LLMSIM_STATIC_FIT_TAGS(own) "[calibration][runs][real]" own "[.]"
#else
#define LLMSIM_STATIC_FIT_TAGS(own) "[calibration][runs][real]" own
#endif
TEST_CASE("run fit: static batches fitted at batch 1 and 16 predict batch 32 and 64, H100 SXM",
          LLMSIM_STATIC_FIT_TAGS("[static_batches_h100]")) {
  static_card("h100-80gb-sxm", 11, false);
  static_departures("h100-80gb-sxm", 11);
}

TEST_CASE("run fit: static batches fitted at batch 1 and 16 predict batch 32 and 64, A100 SXM",
          LLMSIM_STATIC_FIT_TAGS("[static_batches_a100]")) {
  static_card("a100-80gb-sxm", 13, false);
  static_departures("a100-80gb-sxm", 13);
}

// docs/calibration.md's static-batch figures without the prior (asserted nowhere): hidden, with the real cards' under
// the same tag in test_run_fit.cpp.
TEST_CASE("run fit: docs/calibration.md's static-batch figures, with and without the prior",
          "[.][calibration_figures]") {
  static_card("h100-80gb-sxm", 11, true);
  static_card("a100-80gb-sxm", 13, true);
}

// The per-sequence host cost a vLLM V0 step pays before 0.6 is the profile's field (10 us) plus the runtime's
// synchronous output processing (100 us per sequence, perf/runtime.cpp, RFC #6913). Its fit field scales that whole
// cost, so that its prior (sigma ln 2, a factor 2) is a factor 2 of what the runs see; centred on the field alone it
// was a factor 2 of a tenth of it, and a card whose whole cost is twice the runtime's asked a 12-fold move of the field
// (3.6 sigma): with few batch-16 runs and a benchmark's scatter the prior then held it at the base and batch 64 came
// out 20-30 % fast (Splitwise's A100 and H100 static batches, test_run_fit_static_splitwise.cpp, the same way).
TEST_CASE("run fit: the V0 per-sequence host cost's prior is a factor 2 of the whole cost a step pays",
          "[calibration][runs][v0_per_seq_prior]") {
  const auto gpu = spec::Catalog::builtin().gpu("h100-80gb-sxm");
  const perf::HardwareProfile base = perf::default_profile(gpu);
  const double sync = perf::runtime_traits(spec::Runtime::vllm_v0_sync).sync_output_per_seq_s;
  REQUIRE(sync > 0);
  perf::HardwareProfile card = base;
  card.v0_cpu_overhead_per_seq_s = 2 * (base.v0_cpu_overhead_per_seq_s + sync) - sync;  // the whole cost x2
  const std::vector<test::Shape> small{{1, 128, 128}, {1, 512, 256}, {1, 2048, 128}, {1, 256, 512}, {1, 1024, 64},
                                       {1, 64, 1024}, {16, 512, 128}, {16, 128, 512}, {16, 1024, 256}};
  const std::vector<test::Shape> large{{64, 512, 128}, {64, 128, 512}, {64, 1024, 256}, {32, 256, 256}};
  test::Synth synth;
  synth.version = "0.5.4";
  synth.noise = 0.05;  // a benchmark's scatter at the prior's cap (run_fit.hpp kPriorResidualScale)
  synth.seed = 21;
  test::TempDir fit_dir("runfit-v0seq-fit"), unseen_dir("runfit-v0seq-unseen");
  const auto fit = analysis::read_bench_runs(test::synthetic_runs(fit_dir, gpu.id, small, card, synth)).runs;
  synth.seed = 22;
  synth.noise = 0;
  const auto unseen = analysis::read_bench_runs(test::synthetic_runs(unseen_dir, gpu.id, large, card, synth)).runs;
  calibration::RunFitOptions o;
  o.cross_validate = false;
  const auto rep = calibration::fit_runs(fit, gpu, base, o);
  const auto f = std::find_if(rep.fields.begin(), rep.fields.end(),
                              [](const calibration::RunFitField& x) { return x.field == "v0_cpu_overhead_per_seq_s"; });
  REQUIRE(f != rep.fields.end());
  const StaticUnseenError before = static_unseen_error(unseen, base), after = static_unseen_error(unseen, rep.profile);
  const double whole = rep.profile.v0_cpu_overhead_per_seq_s + sync, truth = card.v0_cpu_overhead_per_seq_s + sync;
  std::cout << "V0 per-sequence host cost: fitted whole " << whole << " s (truth " << truth << ", base "
            << base.v0_cpu_overhead_per_seq_s + sync << "; the runs' share " << f->data_share << "), prior s "
            << rep.prior_scale << "; unseen median " << before.median << " -> " << after.median << ", p90 "
            << before.p90 << " -> " << after.p90 << "\n";
  // The runs pin it (batch 16 moves their latency by ~10 % per e-fold of the whole cost): within 15 % of the truth,
  // and batch 32-64 within the files' scatter.
  CHECK(std::abs(whole / truth - 1) < 0.15);
  CHECK(after.median < 0.05);
  CHECK(after.p90 < 0.08);
}
