// Finite runs to the end (issue 13): offered, achieved and saturation throughput, offline arrivals, load spikes
// with the time series, and the measurement window (steady state to the last arrival, drain tail apart).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include "llmsim/core/error.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"
#include "engine_test_util.hpp"

using namespace llmsim;
using engine::SimulationOptions;
using engine::simulate;
using test::make;
using test::scenario;

namespace {

/// Achieved throughput = measured completions / (first measured arrival .. last completion), from the records.
void check_achieved(const engine::SimulationResult& r) {
  double first = 1e300, last = 0, out = 0;
  std::int64_t n = 0;
  for (const auto& q : r.requests) {
    if (q.warmup) continue;
    first = std::min(first, q.arrival_s);
    last = std::max(last, q.finish_s);
    out += q.output_tokens;
    ++n;
  }
  REQUIRE(n == r.summary.completed_requests);
  REQUIRE(r.summary.duration_s == Approx(last - first).epsilon(1e-12));
  CHECK(r.summary.throughput.requests_per_s == Approx(static_cast<double>(n) / (last - first)).epsilon(1e-9));
  CHECK(r.summary.throughput.output_tokens_per_s == Approx(out / (last - first)).epsilon(1e-9));
}

}  // namespace

TEST_CASE("the issue's offline example runs all 5,000 requests to the end at a realistic rate") {
  // 5,000 ShareGPT-like requests arriving within 5 s on one A100: an offline run in all but name.
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 1000.0}}},
                  {"input_tokens", {{"dist", "lognormal"}, {"mean", 220}}},
                  {"output_tokens", {{"dist", "lognormal"}, {"mean", 195}}},
                  {"num_requests", 5000}, {"warmup_requests", 0}};
  SimulationOptions opt;
  opt.record_requests = true;
  const auto r = simulate(make(scenario(w)), opt);
  const auto& s = r.summary;
  INFO("achieved " << s.throughput.requests_per_s << " req/s, saturation " << s.saturation.throughput.requests_per_s
                   << " req/s, offered " << s.offered.requests_per_s << " req/s; " << s.reason);
  REQUIRE(s.completed_requests == 5000);
  REQUIRE(s.complete);
  // What is true: 1000 req/s offered against ~20 served is overload, and it says so with both rates.
  REQUIRE(s.unstable);
  CHECK_THAT(s.reason, Catch::Contains("saturation throughput"));
  CHECK(s.offered.requests_per_s == Approx(1000).epsilon(0.05));
  // Tens of requests per second, as vLLM serves on this card — not the 0.47 req/s of a run cut after 2 requests.
  CHECK(s.saturation.throughput.requests_per_s > 10);
  CHECK(s.saturation.throughput.requests_per_s < 50);
  CHECK(s.throughput.requests_per_s <= s.saturation.throughput.requests_per_s);
  CHECK(s.throughput.requests_per_s > 0.7 * s.saturation.throughput.requests_per_s);
  CHECK(s.batch.max_seqs == 256);  // vLLM V1's max_num_seqs on an A100
  check_achieved(r);
}

TEST_CASE("achieved throughput is completions over the run's span for every kind of finite run") {
  const Json lengths = {{"input_tokens", {{"dist", "lognormal"}, {"mean", 600}, {"sigma", 0.7}}},
                        {"output_tokens", {{"dist", "uniform"}, {"min", 10}, {"max", 300}}}};
  std::vector<Json> arrivals = {{{"process", "poisson"}, {"rate", 4.0}},
                                {{"process", "poisson"}, {"rate", 60.0}},
                                {{"process", "offline"}},
                                {{"process", "closed"}, {"concurrency", 16}}};
  for (const auto& a : arrivals) {
    for (int replicas : {1, 2}) {
      INFO(a.dump() << " on " << replicas << " replicas");
      Json w = lengths;
      w["arrival"] = a;
      w["num_requests"] = 600;
      w["warmup_requests"] = 50;
      Json j = scenario(w);
      j["hardware"]["replicas"] = replicas;
      SimulationOptions opt;
      opt.record_requests = true;
      const auto r = simulate(make(j), opt);
      REQUIRE(r.summary.complete);
      REQUIRE(r.summary.completed_requests == 550);
      check_achieved(r);
    }
  }
}

TEST_CASE("saturation throughput equals the step-time model's batch throughput at the batch size reached") {
  // Offline, one-token prompts and 256-token outputs, at most 64 running: every iteration decodes 64 sequences
  // whose contexts average 128 tokens over a cycle. The iteration cost is linear in the summed context, so
  // the saturated rate is 64 tokens per iteration_time(64 decodes at that mean context).
  const Json w = {{"arrival", {{"process", "offline"}}},
                  {"input_tokens", {{"dist", "fixed"}, {"value", 1}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", 256}}},
                  {"num_requests", 1280}};
  for (const char* policy : {"vllm", "vllm-v0", "static"}) {
    INFO(policy);
    // V0-era policies need a budget that holds a whole prompt of max_model_len (8192) without chunking.
    const int budget = std::string(policy) == "vllm" ? 2048 : 8192;
    const auto rs = make(scenario(w, {{"policy", policy}, {"max_num_seqs", 64}, {"max_num_batched_tokens", budget}}));
    const auto s = simulate(rs).summary;
    REQUIRE(s.complete);
    REQUIRE_FALSE(s.unstable);  // nothing arrives faster than it is served: everything was there at t = 0
    perf::BatchShape full;
    full.decode_seqs = 64;
    full.decode_context = 64 * 128;
    const double model_tps = 64 / perf::make_cost_model(rs).iteration_time(full);
    INFO("saturation " << s.saturation.throughput.output_tokens_per_s << " tok/s, model " << model_tps << " tok/s");
    CHECK(s.batch.max_seqs == 64);
    CHECK(s.saturation.mean_batch == Approx(64).epsilon(0.01));
    CHECK(s.saturation.throughput.output_tokens_per_s == Approx(model_tps).epsilon(0.02));
    CHECK(s.saturation.throughput.requests_per_s == Approx(s.saturation.throughput.output_tokens_per_s / 256).epsilon(0.02));
    CHECK(s.saturation.busy_fraction > 0.9);  // 1280 requests = 20 full batches; only the last is not saturated
    // The run's achieved rate includes the last batch, which ran with nobody waiting: never faster than saturated
    // (equal when every batch runs in lockstep, as V0's and static batching's do with equal lengths).
    CHECK(s.throughput.output_tokens_per_s <= s.saturation.throughput.output_tokens_per_s * (1 + 1e-9));
  }
}

TEST_CASE("offline arrivals: every request at t = 0, the LLM class's defaults, no warm-up, nothing flagged") {
  const Json w = {{"arrival", {{"process", "offline"}}},
                  {"input_tokens", {{"dist", "lognormal"}, {"mean", 220}}},
                  {"output_tokens", {{"dist", "lognormal"}, {"mean", 195}}},
                  {"num_requests", 1000}};
  const auto rs = make(scenario(w));
  CHECK(rs.scenario.workload.warmup_requests == 0);       // vllm bench throughput measures every request
  CHECK(rs.scenario.engine.max_num_batched_tokens == 8192);  // the LLM class's default on an A100 (vs 2048 served)
  SimulationOptions opt;
  opt.record_requests = true;
  const auto r = simulate(rs, opt);
  const auto& s = r.summary;
  REQUIRE(s.complete);
  REQUIRE(s.completed_requests == 1000);
  CHECK_FALSE(s.unstable);
  CHECK(s.offered.window_s == 0);
  CHECK(metrics::to_json(s)["offered"]["requests_per_s"].is_null());
  for (const auto& q : r.requests) REQUIRE(q.arrival_s == 0.0);
  check_achieved(r);
  CHECK(s.throughput.requests_per_s == Approx(1000 / s.duration_s));
  // Several offline classes interleave by weight.
  Json mix = {{"classes", {{{"name", "a"}, {"arrival", {{"process", "offline"}, {"weight", 3}}}},
                           {{"name", "b"}, {"arrival", {{"process", "offline"}, {"weight", 1}}}}}},
              {"num_requests", 400}};
  const auto m = simulate(make(scenario(mix))).summary;
  REQUIRE(m.classes.size() == 2);
  CHECK(m.classes[0].completed_requests == 300);
  CHECK(m.classes[1].completed_requests == 100);
  // Offline cannot be mixed with arrivals over time, and is bounded by the memory bound.
  mix["classes"][1]["arrival"] = {{"process", "poisson"}, {"rate", 1}};
  CHECK_THROWS_WITH(make(scenario(mix)), Catch::Contains("workload.classes"));
  Json huge = w;
  huge["num_requests"] = 1000;
  SimulationOptions tight;
  tight.max_in_system = 500;
  CHECK_THROWS_WITH(simulate(make(scenario(huge)), tight), Catch::Contains("workload.num_requests"));
}

TEST_CASE("a 3x one-minute load spike builds a queue that drains after it, visible in the time series") {
  const Json w = {{"arrival", {{"process", "piecewise"}, {"rates", {{0, 4}, {60, 12}, {120, 4}}}}},
                  {"input_tokens", {{"dist", "lognormal"}, {"mean", 1150}, {"sigma", 1.0}}},
                  {"output_tokens", {{"dist", "lognormal"}, {"mean", 210}, {"sigma", 0.86}}},
                  {"num_requests", 1500}, {"warmup_requests", 0}};
  SimulationOptions opt;
  opt.time_series_window_s = 10;
  const auto r = simulate(make(scenario(w)), opt);
  const auto& s = r.summary;
  REQUIRE(s.complete);
  REQUIRE(s.completed_requests == 1500);
  CHECK_FALSE(s.unstable);  // the run as a whole drains: a spike, not a lasting overload
  const auto& ts = r.time_series;
  REQUIRE(ts.size() > 20);
  auto window_at = [&](double t) {
    for (const auto& x : ts)
      if (x.start_s <= t && t < x.end_s) return x;
    FAIL("no window at " << t);
    return ts.front();
  };
  std::int64_t arrivals = 0, completions = 0;
  for (const auto& x : ts) {
    arrivals += x.arrivals;
    completions += x.completions;
    CHECK(x.end_s - x.start_s <= 10 + 1e-9);
  }
  CHECK(arrivals == 1500);
  CHECK(completions == 1500);
  // Before: 4 req/s is served without a queue; during: arrivals triple and the queue builds; after: it drains.
  const auto before = window_at(45), late_spike = window_at(115), after = window_at(245);
  INFO("waiting: before " << before.mean_waiting << ", end of spike " << late_spike.mean_waiting << ", after "
                          << after.mean_waiting << "; ttft p95 " << before.ttft_p95_ms << " / " << late_spike.ttft_p95_ms);
  CHECK(window_at(75).arrivals == Approx(120).epsilon(0.3));
  CHECK(before.arrivals == Approx(40).epsilon(0.4));
  CHECK(before.mean_waiting < 5);
  CHECK(late_spike.mean_waiting > 50);
  CHECK(late_spike.max_waiting > before.max_waiting);
  CHECK(after.mean_waiting < 5);
  CHECK(late_spike.ttft_p95_ms > 5 * before.ttft_p95_ms);
  CHECK(late_spike.mean_kv_used > before.mean_kv_used);
}

TEST_CASE("the time series has bounded memory: automatic windows stay few, fixed ones double when needed") {
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 2.0}}},
                  {"input_tokens", {{"dist", "fixed"}, {"value", 100}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", 20}}},
                  {"num_requests", 4000}, {"warmup_requests", 0}};
  SimulationOptions automatic;
  automatic.time_series_window_s = 0;
  const auto a = simulate(make(scenario(w)), automatic);
  CHECK(a.time_series.size() <= 512);
  CHECK(a.time_series.size() >= 200);
  SimulationOptions tiny;
  tiny.time_series_window_s = 0.01;  // 2000 s / 0.01 s would be 200,000 windows
  const auto t = simulate(make(scenario(w)), tiny);
  CHECK(t.time_series.size() <= 4096);
  CHECK(t.time_series.front().end_s - t.time_series.front().start_s > 0.01);
  std::int64_t n = 0;
  for (const auto& x : t.time_series) n += x.completions;
  CHECK(n == 4000);
  SimulationOptions off;
  CHECK(simulate(make(scenario(w)), off).time_series.empty());
  SimulationOptions bad;
  bad.time_series_window_s = std::nan("");
  CHECK_THROWS_AS(simulate(make(scenario(w)), bad), ConfigError);
}

TEST_CASE("the measurement window: steady state ends at the last measured arrival, the drain tail apart") {
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 4.0}}},
                  {"input_tokens", {{"dist", "lognormal"}, {"mean", 1150}, {"sigma", 1.0}}},
                  {"output_tokens", {{"dist", "lognormal"}, {"mean", 210}, {"sigma", 0.86}}},
                  {"num_requests", 600}, {"warmup_requests", 60}};
  SimulationOptions opt;
  opt.record_requests = true;
  const auto r = simulate(make(scenario(w)), opt);
  const auto& s = r.summary;
  double first = 1e300, last = 0, end = 0;
  for (const auto& q : r.requests) {
    end = std::max(end, q.finish_s);
    if (q.warmup) continue;
    first = std::min(first, q.arrival_s);
    last = std::max(last, q.arrival_s);
  }
  std::int64_t departures = 0, drained = 0;
  for (const auto& q : r.requests) {
    if (q.finish_s >= first && q.finish_s <= last) ++departures;  // warm-up ones too: stationarity
    if (!q.warmup && q.finish_s > last) ++drained;
  }
  const auto& ss = s.steady_state;
  CHECK(ss.start_s == first);
  CHECK(ss.end_s == last);
  CHECK(ss.departures == departures);
  CHECK(ss.throughput.requests_per_s == Approx(departures / (last - first)));
  CHECK(s.drain.duration_s == Approx(end - last));
  CHECK(s.drain.completed_requests == drained);
  // The steady state tracks the offered load; the whole run, diluted by the drain tail, falls below it.
  INFO("offered " << s.offered.requests_per_s << ", steady " << ss.throughput.requests_per_s << ", run "
                  << s.throughput.requests_per_s);
  CHECK(ss.throughput.requests_per_s == Approx(s.offered.requests_per_s).epsilon(0.08));
  CHECK(s.throughput.requests_per_s < s.offered.requests_per_s);
  CHECK(ss.slo_attainment == Approx(1.0));  // no SLO: every departure counts as good
}

TEST_CASE("a run still stops on SimulationOptions::cancel (Python's Ctrl-C, CLI signals)") {
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 8.0}}},
                  {"input_tokens", {{"dist", "fixed"}, {"value", 100}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", 50}}},
                  {"num_requests", 20000000}, {"warmup_requests", 0}};
  std::atomic<bool> flag{true};
  SimulationOptions opt;
  opt.cancel = &flag;
  CHECK_THROWS_AS(simulate(make(scenario(w)), opt), Cancelled);
  // Raised from another thread while the run is under way: twenty million requests would take many seconds.
  flag = false;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    flag = true;
  });
  CHECK_THROWS_AS(simulate(make(scenario(w)), opt), Cancelled);
  stopper.join();
}
