// vLLM V1's async scheduling (on by default from 0.14.0, vllm#27614; perf/async_scheduling.hpp): (a) the host's
// per-step time overlaps the GPU's (step = max(GPU, host)), (b) a request that arrives while a step runs is first
// planned into the step after the next one, (c) a step's tokens still leave when it ends.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "engine_test_util.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/perf/async_scheduling.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "llmsim/spec/vllm_args.hpp"

using namespace llmsim;
using llmsim::test::make;

namespace {

/// Requests of 512 prompt tokens and `output` tokens arriving `gap_s` apart on llama-3.1-8b / A100 under `engine`.
engine::SimulationResult async_run(const Json& engine, int n, double gap_s, int output = 64) {
  const Json w = {{"arrival", {{"process", "constant"}, {"rate", 1.0 / gap_s}}},
                  {"input_tokens", {{"dist", "fixed"}, {"value", 512}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", output}}},
                  {"num_requests", n}, {"warmup_requests", 0}};
  engine::SimulationOptions opt;
  opt.record_requests = true;
  opt.record_iterations = true;
  return engine::simulate(make(test::scenario(w, engine)), opt);
}

/// The index of the recorded iteration running at `t` (start <= t < end).
std::size_t async_step_at(const engine::SimulationResult& r, double t) {
  for (std::size_t k = 0; k < r.iterations.size(); ++k)
    if (r.iterations[k].start_s <= t && t < r.iterations[k].start_s + r.iterations[k].duration_s) return k;
  FAIL("no iteration runs at t = " << t);
  return 0;
}

}  // namespace

TEST_CASE("async scheduling by release and by flag", "[async_scheduling]") {
  CHECK_FALSE(spec::async_scheduling_by_default(std::nullopt));  // vllm-v1 without a release: the 0.11 line
  CHECK_FALSE(spec::async_scheduling_by_default(std::string("vllm==0.11.0")));
  CHECK_FALSE(spec::async_scheduling_by_default(std::string("vllm==0.13.0")));
  CHECK(spec::async_scheduling_by_default(std::string("vllm==0.14.0")));
  CHECK(spec::async_scheduling_by_default(std::string("vllm==0.15.1")));
  CHECK_FALSE(spec::async_scheduling_by_default(std::string("sglang==0.5.2")));

  const auto on = make(test::scenario(Json::object(), {{"runtime", "vllm==0.15.1"}}));
  CHECK(perf::async_scheduling(on.scenario.engine, 1, std::nullopt));
  CHECK(perf::make_cost_model(on).async_scheduling());
  CHECK_FALSE(perf::async_scheduling(on.scenario.engine, 2, std::nullopt));  // pipeline parallel: off by default
  spec::SpeculativeConfig sp;
  sp.method = spec::SpeculativeMethod::ngram;
  CHECK_FALSE(perf::async_scheduling(on.scenario.engine, 1, sp));  // only EAGLE/MTP keep it (vllm#31998)
  sp.method = spec::SpeculativeMethod::eagle;
  CHECK(perf::async_scheduling(on.scenario.engine, 1, sp));
  const auto off = make(test::scenario(Json::object(), {{"runtime", "vllm==0.15.1"}, {"async_scheduling", false}}));
  CHECK_FALSE(perf::make_cost_model(off).async_scheduling());
  const auto asked = make(test::scenario(Json::object(), {{"runtime", "vllm==0.12.0"}, {"async_scheduling", true}}));
  CHECK(perf::make_cost_model(asked).async_scheduling());
  CHECK_FALSE(perf::make_cost_model(make(test::scenario(Json::object(), {{"runtime", "vllm==0.13.0"}}))).async_scheduling());

  // Asked for where vLLM rejects it: a clear error naming the field.
  auto e = asked.scenario.engine;
  CHECK_THROWS_WITH(perf::async_scheduling(e, 2, std::nullopt), Catch::Contains("engine.async_scheduling") && Catch::Contains("pipeline"));
  sp.method = spec::SpeculativeMethod::draft;
  CHECK_THROWS_WITH(perf::async_scheduling(e, 1, sp), Catch::Contains("engine.async_scheduling") && Catch::Contains("draft"));
  e.runtime = spec::Runtime::vllm_v0;
  e.policy = spec::SchedulerPolicy::vllm_v0;
  CHECK_THROWS_WITH(perf::async_scheduling(e, 1, std::nullopt), Catch::Contains("engine.async_scheduling"));

  // vllm serve's flags (BooleanOptionalAction).
  CHECK(spec::parse_vllm_serve_args("vllm serve m --async-scheduling").engine_args["async_scheduling"] == true);
  const auto no = spec::parse_vllm_serve_args("vllm serve m --no-async-scheduling");
  CHECK(no.engine_args["async_scheduling"] == false);
  CHECK(no.not_modelled.empty());
}

TEST_CASE("async scheduling: the step is max(GPU, host), not their sum", "[async_scheduling]") {
  const auto rs = make(test::scenario(Json::object(), {{"runtime", "vllm==0.15.1"}, {"async_scheduling", false}}));
  const perf::CostModel sync = perf::make_cost_model(rs);
  const perf::CostModel async = sync.with_async_scheduling();
  const double c0 = sync.profile().cpu_overhead_per_iter_s, c1 = sync.profile().cpu_overhead_per_seq_s;
  perf::BatchShape b;
  b.decode_seqs = 8;
  b.decode_context = 8 * 600;
  const double host = c0 + c1 * 8;
  // An 8B decode step on an A100 (~10 ms of GPU work) outlasts the host's ~1 ms: the host time disappears.
  REQUIRE(sync.iteration_time(b) > 3 * host);
  CHECK(async.iteration_time(b) == Approx(sync.iteration_time(b) - host).epsilon(1e-12));
  CHECK(async.decode_steps(8).time(8 * 600) == Approx(async.iteration_time(b)).epsilon(1e-12));
  const auto br = async.breakdown(b);
  CHECK(br.time_s == Approx(async.iteration_time(b)).epsilon(1e-12));
  // A host slower than the GPU (100 ms per step): the step is the host's time, whatever the GPU does.
  perf::HardwareProfile slow = sync.profile();
  slow.cpu_overhead_per_iter_s = 0.1;
  const perf::CostModel slow_host =
      perf::CostModel(rs.model, rs.quant, rs.gpu, slow, rs.scenario.hardware.parallel).with_async_scheduling();
  CHECK(slow_host.iteration_time(b) == Approx(0.1 + c1 * 8).epsilon(1e-12));
  CHECK(slow_host.decode_steps(8).time(8 * 600) == Approx(0.1 + c1 * 8).epsilon(1e-12));
  CHECK(slow_host.breakdown(b).time_s == Approx(0.1 + c1 * 8).epsilon(1e-12));
}

TEST_CASE("async scheduling: a request arriving during a step is prefilled a step later", "[async_scheduling]") {
  // Two requests 100 ms apart: the second arrives while the first is decoding (its 512-token prefill takes ~40 ms,
  // a decode step ~10 ms, 63 of them).
  const double gap = 0.1;
  const auto sync = async_run({{"runtime", "vllm==0.15.1"}, {"async_scheduling", false}}, 2, gap);
  const auto async = async_run({{"runtime", "vllm==0.15.1"}}, 2, gap);
  // The caller's stamps are the engine's plus V1's in-process hop to its EngineCore (perf/serving_path.hpp).
  const double hop = test::in_process_hop_s(make(test::scenario(Json::object(), {{"runtime", "vllm==0.15.1"}})));
  for (const auto* r : {&sync, &async}) {
    const auto& first = r->requests.at(0);
    // An idle engine plans the arrival's step at once: TTFT is the prefill step, and no step of output delay.
    CHECK(first.first_token_s - first.arrival_s == Approx(r->iterations.at(0).duration_s + hop).epsilon(1e-9));
    CHECK(r->iterations.at(0).prefill_tokens == 512);
  }
  // That step has no step before it to hide its host time behind: it costs what the synchronous loop's does.
  CHECK(async.iterations.at(0).duration_s == Approx(sync.iterations.at(0).duration_s).epsilon(1e-12));
  auto prefill_step = [](const engine::SimulationResult& r, std::size_t from) {
    for (std::size_t k = from; k < r.iterations.size(); ++k)
      if (r.iterations[k].prefill_tokens > 0) return k;
    FAIL("no second prefill");
    return std::size_t{0};
  };
  const auto& s2 = sync.requests.at(1);
  const auto& a2 = async.requests.at(1);
  const std::size_t ks = async_step_at(sync, s2.arrival_s), ka = async_step_at(async, a2.arrival_s);
  REQUIRE(sync.iterations.at(ks).prefill_tokens == 0);  // it arrives during a decode step
  REQUIRE(async.iterations.at(ka).prefill_tokens == 0);
  // Synchronous: the step after the one it arrived in prefills it. Async: that step was planned before it arrived,
  // so it decodes the first request alone and the one after prefills the second.
  CHECK(prefill_step(sync, 1) == ks + 1);
  CHECK(prefill_step(async, 1) == ka + 2);
  CHECK(async.iterations.at(ka + 1).decode_seqs == 1);
  // Its first token leaves when that prefill step ends (no output delay).
  const auto& p = async.iterations.at(ka + 2);
  CHECK(a2.first_token_s == Approx(p.start_s + p.duration_s + hop).epsilon(1e-12));
  // TTFT: the rest of the step it arrived in, plus (async) the step planned before it came, plus its prefill step.
  auto end_of = [](const engine::SimulationResult& r, std::size_t k) {
    return r.iterations.at(k).start_s + r.iterations.at(k).duration_s;
  };
  CHECK(s2.first_token_s - s2.arrival_s == Approx(end_of(sync, ks + 1) - s2.arrival_s + hop).epsilon(1e-9));
  CHECK(a2.first_token_s - a2.arrival_s ==
        Approx(end_of(async, ka) - a2.arrival_s + async.iterations.at(ka + 1).duration_s + p.duration_s + hop)
            .epsilon(1e-9));
  // The prefill step (1 decode + 512 prompt tokens) is planned ahead too: it is shorter than the synchronous one by
  // the host's time for its 2 sequences, so TTFT grows by one decode step less that.
  const auto prof = perf::make_cost_model(make(test::scenario(Json::object(), {{"runtime", "vllm==0.15.1"}}))).profile();
  const double host2 = prof.cpu_overhead_per_iter_s + 2 * prof.cpu_overhead_per_seq_s;
  CHECK(p.duration_s == Approx(sync.iterations.at(ks + 1).duration_s - host2).epsilon(1e-3));
  // So the wait is at least a whole decode step plus the prefill (synchronous: less than one step plus the prefill);
  // over arrivals spread across a step's phase it is one decode step longer on average.
  const double step = async.iterations.at(ka + 1).duration_s;
  CHECK(a2.first_token_s - a2.arrival_s > step + p.duration_s);
  CHECK(s2.first_token_s - s2.arrival_s <
        sync.iterations.at(ks).duration_s + sync.iterations.at(ks + 1).duration_s + hop);
  // Decode steps are shorter by the host's time: TPOT of the first request falls.
  CHECK(async.summary.tpot_ms.mean < sync.summary.tpot_ms.mean);
  CHECK(async.summary.itl_ms.count == sync.summary.itl_ms.count);
}

TEST_CASE("async scheduling: one cost model prices a step from idle, bit for bit as the synchronous model",
          "[async_scheduling]") {
  // serial_time stands for a whole synchronous copy of the cost model that with_async_scheduling used to keep: it must
  // give that model's bits on every path of iteration_time — the token table (dense models), the direct ops (sliding
  // windows, MoE, linear attention, prompts past the table, a runtime whose launches wait for the GPU) and speculative
  // verification with its proposer — while iteration_time keeps the overlap.
  std::vector<Json> scenarios;
  auto with = [](const char* model, const char* gpu, const Json& engine) {
    Json e = engine;
    e["runtime"] = "vllm==0.15.1";
    e["async_scheduling"] = false;
    Json j = test::scenario(Json::object(), e, gpu);
    j["model"] = model;
    return j;
  };
  scenarios.push_back(with("llama-3.1-8b", "a100-80gb-sxm", Json::object()));
  scenarios.push_back(with("llama-3.1-8b", "h100-80gb-sxm", {{"speculative", {{"method", "eagle"}, {"num_speculative_tokens", 3}}}}));
  scenarios.push_back(with("gemma-2-9b", "h100-80gb-sxm", Json::object()));
  scenarios.push_back(with("gpt-oss-20b", "h100-80gb-sxm", Json::object()));
  scenarios.push_back(with("qwen3-next-80b-a3b", "2xh100-80gb-sxm", {{"max_model_len", 16384}}));
  std::vector<perf::CostModel> sync_models;
  for (const auto& j : scenarios) sync_models.push_back(perf::make_cost_model(make(j)));
  {  // TurboMind: its launches wait for the GPU's work (host_runs_ahead), so iteration_time never takes the table
    const auto rs = make(scenarios.front());
    sync_models.emplace_back(rs.model, rs.quant, rs.gpu, perf::default_profile(rs.gpu), rs.scenario.hardware.parallel,
                             true, 0.0, perf::Runtime::lmdeploy_turbomind);
  }
  std::vector<perf::BatchShape> batches;
  {
    perf::BatchShape b;
    b.add_decode(600);
    batches.push_back(b);  // one sequence
    for (int i = 0; i < 63; ++i) b.add_decode(600 + 37 * i);
    batches.push_back(b);  // 64 decodes
    b.add_prefill(512, 0, true);
    batches.push_back(b);  // mixed: a whole prompt beside them
    b.add_prefill(2048, 4096, false);
    batches.push_back(b);  // and a chunk in the middle of a long prompt
    perf::BatchShape big;
    big.add_prefill(12000, 0, true);
    batches.push_back(big);  // past the token table (8,192)
    perf::BatchShape spec;
    for (int i = 0; i < 8; ++i) spec.add_decode(1000 + 10 * i);
    spec.spec_tokens = 3;
    batches.push_back(spec);  // speculative verification
    spec.add_prefill(256, 0, true);
    batches.push_back(spec);
  }
  int compared = 0;
  for (const auto& sync : sync_models) {
    REQUIRE_FALSE(sync.async_scheduling());
    const perf::CostModel async = sync.with_async_scheduling();
    REQUIRE(async.async_scheduling());
    for (std::size_t k = 0; k < batches.size(); ++k) {
      INFO(sync.model().id << " on " << sync.gpu().id << ", batch " << k);
      const auto& b = batches[k];
      double p_sync = -1, p_serial = -1, p_async = -1;
      const double t_sync = sync.iteration_time(b, &p_sync);
      const double t_serial = async.serial_time(b, &p_serial);
      CHECK(t_serial == t_sync);  // the same bits, not approximately
      CHECK(p_serial == p_sync);
      // The overlapped step is shorter by the host's time unless the host outlasts the GPU (never longer).
      const double t_async = async.iteration_time(b, &p_async);
      CHECK(t_async < t_sync);
      CHECK(p_async == p_sync);
      // The synchronous model's serial_time is its iteration_time; every entry point takes the one path rule
      // (CostModel::step_time), so the overload without the proposer's share gives the same bits.
      double p = 0;
      CHECK(sync.serial_time(b, &p) == t_sync);
      CHECK(sync.iteration_time(b) == t_sync);
      CHECK(async.iteration_time(b) == t_async);
      ++compared;
    }
  }
  CHECK(compared == 6 * 7);
  // An empty batch costs nothing, and a bad one is refused naming the field, as by iteration_time.
  const perf::CostModel async = sync_models.front().with_async_scheduling();
  double p = 1;
  CHECK(async.serial_time(perf::BatchShape{}, &p) == 0);
  CHECK(p == 0);
  perf::BatchShape bad;
  bad.decode_seqs = -1;
  CHECK_THROWS_WITH(async.serial_time(bad, &p), Catch::Contains("batch."));
}
