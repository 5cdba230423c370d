// A day of serving (issue 14's benchmark): 24 hours at a mean of 100 requests/s (≈ 8.64 M requests) under a daily
// load curve, llama-3.1-8b fp16 on an autoscaled A100-80GB SXM fleet (2..24 replicas, 48 requests in the system per replica, 5-minute cold starts),
// records off. Prints the wall and CPU time and the peak RSS; the issue asks < 10 s on one core and < 256 MB.
//   bench_day [mean_qps] [max_requests] [--no-decode-runs]
//   (default 100, the whole day; a cap ends the day early, for profiling; --no-decode-runs times the engine with an
//   event per step, SimulationOptions::decode_runs off, which gives the same results)
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "llmsim/engine/simulator.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

using namespace llmsim;

namespace {

double cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  engine::SimulationOptions opt;
  if (argc > 1 && std::string(argv[argc - 1]) == "--no-decode-runs") {
    opt.decode_runs = false;
    --argc;
  }
  const double qps = argc > 1 ? std::atof(argv[1]) : 100.0;
  const long long cap = argc > 2 ? std::atoll(argv[2]) : 0;
  if (!(qps > 0) || cap < 0) {
    std::fprintf(stderr, "bench_day: mean_qps must be > 0 and max_requests >= 0\n");
    return 2;
  }
  // A business-hours shape (mean 1.0): quiet at night, a plateau in the afternoon.
  const std::vector<double> shape{0.3, 0.2, 0.2, 0.2, 0.2, 0.3, 0.5, 0.8, 1.2, 1.5, 1.6, 1.7,
                                  1.7, 1.7, 1.8, 1.9, 1.8, 1.5, 1.2, 1.0, 0.9, 0.7, 0.5, 0.4};
  double mean = 0;
  for (double m : shape) mean += m / 24;
  Json j = {{"model", "llama-3.1-8b"},
                  {"hardware", {{"gpu", "a100-80gb-sxm"}}},
                  {"engine", {{"max_model_len", 8192}}},
                  {"workload",
                   {{"arrival", {{"process", "poisson"}, {"rate", qps / mean}}},
                    {"input_tokens", {{"dist", "lognormal"}, {"mean", 512}, {"sigma", 0.8}}},
                    {"output_tokens", {{"dist", "lognormal"}, {"mean", 256}, {"sigma", 0.8}}},
                    {"daily_profile", shape},
                    {"warmup_requests", 0},
                    {"seed", 1}}},
                  {"slo", {{"ttft_ms", {{"p95", 2000}}}, {"tpot_ms", {{"p95", 100}}}}},
                  {"autoscaler",
                   {{"min_replicas", 2}, {"max_replicas", 24}, {"queue_per_replica", 48}, {"interval_s", 15},
                    {"scale_up_delay_s", 300}, {"scale_down_delay_s", 300}}}};
  if (cap > 0) j["workload"]["num_requests"] = cap;
  const auto rs = spec::resolve(spec::scenario_from_json(JsonView(j, "")), spec::Catalog::builtin());
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_s();
  const auto r = engine::simulate(rs, opt);
  const double cpu = cpu_s() - c0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const auto& s = r.summary;
  std::printf("a day at %.0f req/s mean: %lld requests, %lld iterations; wall %.2f s, cpu %.2f s (%.0f req/s of cpu); "
              "peak RSS %.1f MB\n",
              qps, static_cast<long long>(s.completed_requests), static_cast<long long>(s.iterations), wall, cpu,
              static_cast<double>(s.completed_requests) / cpu, static_cast<double>(u.ru_maxrss) / 1024.0);
  std::printf("fleet: %.1f replica-hours (%.1f idle), peak %lld replicas, %lld scale-ups; SLO attainment %.4f\n",
              s.fleet.replica_hours, s.fleet.idle_replica_hours, static_cast<long long>(s.fleet.peak_replicas),
              static_cast<long long>(s.fleet.scale_ups), s.slo_attainment);
  if (cap > 0) std::printf("capped at %lld requests: not the day the target is about\n", cap);
  else std::printf("target: < 10 s on one core, < 256 MB: %s\n", cpu < 10 && u.ru_maxrss < 256 * 1024 ? "met" : "NOT met");
  if (!opt.decode_runs) std::printf("decode runs off: an event per engine step\n");
  return 0;
}
