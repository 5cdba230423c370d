// The engine's queueing core against closed-form queueing theory. engine.synthetic_service replaces the cost
// model by one request per server with a drawn service time S (mean E[S], squared coefficient of variation
// cv²), and Poisson arrivals at rate λ make the M/G/c queue. With ρ = λ E[S] / c:
//   M/M/1  Wq = ρ E[S] / (1 − ρ),               P(wait) = ρ
//   M/D/1  Wq = ρ E[S] / (2 (1 − ρ))
//   M/G/1  Wq = λ E[S²] / (2 (1 − ρ)) = ρ E[S] (1 + cv²) / (2 (1 − ρ))   (Pollaczek–Khinchine)
//   M/M/c  P(wait) = C(c, a) (Erlang C, a = λ E[S]),  Wq = C(c, a) E[S] / (c − a)
//
// Tolerance. Waits of consecutive customers are strongly correlated (at ρ = 0.7 the M/M/1 relaxation time is
// ~ E[S]/(1−√ρ)² ≈ 37 services), so the error of the sample mean comes from batch means: 20 batches of 10,000
// customers, each batch hundreds of relaxation times long, are close to independent and normal, and
// se = sd(batch means)/√20. We assert |measured − theory| < 4 se (a 4-sigma band: a correct engine fails with
// probability ~6e-5 per check, and the seeds are fixed, so the outcome is reproducible) and that se itself is
// below 4% of the theory value, so the band is narrow enough to catch a wrong formula (e.g. a factor
// (1 + cv²)/2 dropped, or LIFO instead of FIFO changing P(wait)). The run is 200,000 customers per case.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "trust_util.hpp"

using namespace llmsim;
using trust::batch_means;

namespace {

constexpr std::int64_t kRequests = 202000, kWarmup = 2000;
constexpr int kBatches = 20;

Json synthetic(const std::string& kind, double lambda, double mean_s, double cv, int servers, std::uint64_t seed,
               const std::string& router = "least_outstanding") {
  Json service = {{"kind", kind}, {"mean_s", mean_s}};
  if (kind == "lognormal") service["cv"] = cv;
  return Json{{"model", "llama-3.1-8b"},
              {"hardware", {{"gpu", "a100-80gb-sxm"}, {"replicas", servers}, {"router", router}}},
              {"engine", {{"synthetic_service", service}}},
              {"workload",
               {{"arrival", {{"process", "poisson"}, {"rate", lambda}}},
                {"input_tokens", {{"dist", "fixed"}, {"value", 16}}},
                {"output_tokens", {{"dist", "fixed"}, {"value", 16}}},
                {"num_requests", kRequests},
                {"warmup_requests", kWarmup},
                {"seed", seed}}}};
}

struct Measured {
  metrics::Summary summary;
  std::vector<double> waits_s;  ///< measured customers in arrival order
  std::vector<double> waited;   ///< 1 when the customer queued, else 0
};

Measured run(const Json& j) {
  engine::SimulationOptions opt;
  opt.record_requests = true;
  auto r = engine::simulate(trust::resolve_json(j), opt);
  REQUIRE_FALSE(r.summary.unstable);
  auto& recs = r.requests;
  std::sort(recs.begin(), recs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  Measured m;
  for (const auto& rec : recs) {
    if (rec.warmup) continue;
    const double w = rec.admitted_s - rec.arrival_s;
    m.waits_s.push_back(w);
    m.waited.push_back(w > 0 ? 1.0 : 0.0);
  }
  REQUIRE(static_cast<std::int64_t>(m.waits_s.size()) == kRequests - kWarmup);
  m.summary = r.summary;
  return m;
}

/// Erlang C: probability an arrival waits in M/M/c with offered load a = λ E[S] (a < c).
double erlang_c(int c, double a) {
  double term = 1, sum = 1;  // Σ_{k<c} a^k/k!
  for (int k = 1; k < c; ++k) {
    term *= a / k;
    sum += term;
  }
  const double top = term * a / c / (1 - a / c);  // a^c/c! · 1/(1−ρ)
  return top / (sum + top);
}

void check_against(const char* what, const std::vector<double>& x, double theory) {
  const auto bm = batch_means(x, kBatches);
  std::printf("%-34s theory %9.5f  measured %9.5f ± %.5f (se)  z = %+5.2f\n", what, theory, bm.mean, bm.stderr_mean,
              (bm.mean - theory) / bm.stderr_mean);
  INFO(what << ": theory " << theory << " measured " << bm.mean << " se " << bm.stderr_mean);
  CHECK(bm.stderr_mean < 0.04 * theory);
  CHECK(std::abs(bm.mean - theory) < 4 * bm.stderr_mean);
}

}  // namespace

TEST_CASE("M/M/1 mean wait and waiting probability", "[queueing]") {
  const double lambda = 7, es = 0.1, rho = lambda * es;
  const auto m = run(synthetic("exponential", lambda, es, 1, 1, 11));
  check_against("M/M/1 rho=0.7 Wq (s)", m.waits_s, rho * es / (1 - rho));
  check_against("M/M/1 rho=0.7 P(wait)", m.waited, rho);
  // The summary's queueing delay is the same quantity the records give (exact mean, not a histogram bin).
  double sum = 0;
  for (double w : m.waits_s) sum += w;
  CHECK(m.summary.queue_ms.mean == Approx(1e3 * sum / static_cast<double>(m.waits_s.size())).epsilon(1e-9));
}

TEST_CASE("M/D/1 mean wait", "[queueing]") {
  const double lambda = 7, es = 0.1, rho = lambda * es;
  const auto m = run(synthetic("fixed", lambda, es, 1, 1, 12));
  check_against("M/D/1 rho=0.7 Wq (s)", m.waits_s, rho * es / (2 * (1 - rho)));
}

TEST_CASE("M/G/1 mean wait follows Pollaczek-Khinchine", "[queueing]") {
  // Lognormal service with cv = 0.5 and cv = 1.5 bracket the exponential (cv = 1).
  for (const double cv : {0.5, 1.5}) {
    const double lambda = 6, es = 0.1, rho = lambda * es;
    const auto m = run(synthetic("lognormal", lambda, es, cv, 1, 13));
    const std::string what = "M/G/1 rho=0.6 cv=" + std::to_string(cv).substr(0, 3) + " Wq (s)";
    check_against(what.c_str(), m.waits_s, rho * es * (1 + cv * cv) / (2 * (1 - rho)));
  }
}

TEST_CASE("M/M/c waiting probability and mean wait follow Erlang C", "[queueing]") {
  // Synthetic service keeps one central FIFO queue and hands its head to any idle server: a true M/M/c.
  for (const int c : {2, 4}) {
    const double es = 0.1, rho = 0.75, lambda = rho * c / es, a = lambda * es;
    const double pw = erlang_c(c, a);
    const auto m = run(synthetic("exponential", lambda, es, 1, c, 14 + static_cast<std::uint64_t>(c)));
    const std::string tag = "M/M/" + std::to_string(c) + " rho=0.75";
    check_against((tag + " P(wait)").c_str(), m.waited, pw);
    check_against((tag + " Wq (s)").c_str(), m.waits_s, pw * es / (c - a));
  }
}

TEST_CASE("M/M/c ignores the router: the central queue makes every router the same system", "[queueing]") {
  // The engine's routers (round robin, least outstanding, least KV) pick a replica at arrival and each replica
  // has its own queue, which is not M/M/c (a request can wait while another replica idles). In synthetic
  // mode the engine bypasses them for one shared queue, so the runs must be identical for every router.
  auto summary = [](const std::string& router) {
    auto j = synthetic("exponential", 30, 0.1, 1, 4, 21, router);
    j["workload"]["num_requests"] = 20000;
    return metrics::to_json(engine::simulate(trust::resolve_json(j)).summary).dump();
  };
  const auto ref = summary("least_outstanding");
  CHECK(summary("round_robin") == ref);
  CHECK(summary("least_kv") == ref);
}

TEST_CASE("Little's law holds on the synthetic queue", "[queueing]") {
  const auto m = run(synthetic("exponential", 8, 0.1, 1, 1, 31));
  const auto& s = m.summary;
  // L = λ W on the measured window; the engine integrates L over time and counts W per request, so they agree
  // to rounding when every measured request finishes inside the window.
  CHECK(s.mean_in_system == Approx(s.throughput.requests_per_s * s.e2e_ms.mean / 1e3).epsilon(1e-6));
  // And the theory: L = ρ/(1−ρ) = 4 for M/M/1 at ρ = 0.8, within the batch-means band of W (L = λW).
  const double es = 0.1;
  // W = Wq + S; E[S] is known, so check Wq against ρ E[S]/(1−ρ) = 0.4 s.
  check_against("M/M/1 rho=0.8 Wq (s)", m.waits_s, 0.8 * es / 0.2);
}
