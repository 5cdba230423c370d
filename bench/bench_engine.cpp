// Simulator throughput: how many simulated requests per wall-clock second the engine handles.
// llama-3.1-8b fp16 on a100-80gb-sxm, vllm policy (vLLM V1's scheduler; one line for SGLang's), Poisson arrivals at ~80% of the measured capacity,
// lognormal lengths (input mean 512, output mean 256). Prints what it measured; no pass/fail.
//   bench_engine [num_requests]   (default 1,000,000)
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "llmsim/engine/simulator.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

using namespace llmsim;

namespace {

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux reports KiB
}

spec::ResolvedScenario scenario(int max_num_seqs, const Json& arrival, long long n, const char* policy = "vllm") {
  const Json j = {{"model", "llama-3.1-8b"},
                  {"quant", {{"weights", "fp16"}, {"kv_cache", "fp16"}}},
                  {"hardware", {{"gpu", "a100-80gb-sxm"}}},
                  {"engine", {{"policy", policy}, {"max_num_seqs", max_num_seqs}, {"max_num_batched_tokens", 8192}}},
                  {"workload",
                   {{"arrival", arrival},
                    {"input_tokens", {{"dist", "lognormal"}, {"mean", 512}, {"sigma", 0.8}}},
                    {"output_tokens", {{"dist", "lognormal"}, {"mean", 256}, {"sigma", 0.8}}},
                    {"num_requests", n},
                    {"warmup_requests", std::min<long long>(1000, n / 10)},
                    {"seed", 1}}}};
  return spec::resolve(spec::scenario_from_json(JsonView(j, "")), spec::Catalog::builtin());
}

double cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Run {
  engine::SimulationResult result;
  double wall_s, cpu_s;
};

// Wall time and this process's CPU time: on a shared machine the CPU time is the one-core cost.
Run timed(const spec::ResolvedScenario& rs, const engine::SimulationOptions& opt = {}) {
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_s();
  auto r = engine::simulate(rs, opt);
  const double cpu = cpu_s() - c0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {std::move(r), wall, cpu};
}

/// Saturated throughput (requests/s of simulated time): a closed loop with more users than batch slots.
double capacity(int max_num_seqs, const char* policy = "vllm") {
  const auto r = timed(scenario(max_num_seqs, {{"process", "closed"}, {"concurrency", 2 * max_num_seqs}}, 20000, policy));
  return r.result.summary.throughput.requests_per_s;
}

void report(const char* label, const Run& r, long long n) {
  const auto& s = r.result.summary;
  const double iters = static_cast<double>(s.iterations);
  std::printf("%-26s %8lld req: wall %6.3f s = %9.0f req/s | cpu %6.3f s = %9.0f req/s, %6.1f ns/iteration | "
              "%.2f iterations/request, mean in system %.1f, unstable=%d\n",
              label, n, r.wall_s, static_cast<double>(n) / r.wall_s, r.cpu_s, static_cast<double>(n) / r.cpu_s,
              r.cpu_s * 1e9 / iters, iters / static_cast<double>(n), s.mean_in_system, s.unstable ? 1 : 0);
}

}  // namespace

int main(int argc, char** argv) {
  const long long n = argc > 1 ? std::atoll(argv[1]) : 1000000;
  if (n < 1000) {
    std::fprintf(stderr, "bench_engine: num_requests must be >= 1000\n");
    return 2;
  }
  const double cap = capacity(256);
  const double rate = 0.8 * cap;
  std::printf("capacity (closed loop, 512 users): %.2f req/s; benchmark rate %.2f req/s\n", cap, rate);

  const auto main_run = timed(scenario(256, {{"process", "poisson"}, {"rate", rate}}, n));
  report("vllm, max_num_seqs 256", main_run, n);
  std::printf("peak RSS after records-off run: %.1f MB\n", peak_rss_mb());

  const double cap16 = capacity(16);
  const auto small = timed(scenario(16, {{"process", "poisson"}, {"rate", 0.8 * cap16}}, std::min(n, 200000LL)));
  report("vllm, max_num_seqs 16", small, std::min(n, 200000LL));
  const auto big = timed(scenario(256, {{"process", "poisson"}, {"rate", rate}}, std::min(n, 200000LL)));
  report("vllm, max_num_seqs 256", big, std::min(n, 200000LL));
  // SGLang's scheduler (prefill-only steps, output reservation) at 80 % of its own capacity.
  const auto sg = timed(scenario(256, {{"process", "poisson"}, {"rate", 0.8 * capacity(256, "sglang")}},
                                 std::min(n, 200000LL), "sglang"));
  report("sglang, max_num_seqs 256", sg, std::min(n, 200000LL));

  engine::SimulationOptions rec;
  rec.record_requests = true;
  const double before = peak_rss_mb();
  const auto recorded = timed(scenario(256, {{"process", "poisson"}, {"rate", rate}}, n), rec);
  const double after = peak_rss_mb();
  report("records on (requests)", recorded, n);
  std::printf("request records: %zu x %zu B = %.1f MB; peak RSS %.1f MB (+%.1f MB, %.1f B/request)\n",
              recorded.result.requests.size(), sizeof(engine::RequestRecord),
              static_cast<double>(recorded.result.requests.capacity() * sizeof(engine::RequestRecord)) / 1e6, after,
              after - before, (after - before) * 1024 * 1024 / static_cast<double>(n));
  return 0;
}
