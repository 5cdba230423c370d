// SGLang's overlap scheduler (perf/sglang_overlap.hpp; on by default from 0.3.6, sglang#2067): the host's per-step
// time runs while the GPU works (a step costs max(GPU, host)), a request arriving while a step runs joins the batch
// after the next, and the switches of the release table and of SGLang's command line.
#include <catch2/catch.hpp>

#include "engine_test_util.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/perf/async_scheduling.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/sglang_overlap.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "llmsim/spec/sglang_args.hpp"

using namespace llmsim;
using llmsim::test::make;

namespace {

/// `n` requests of 512 prompt and `output` tokens `gap_s` apart (0: all at once) on llama-3.1-8b / A100 80GB.
engine::SimulationResult sgo_run(const Json& engine, int n, double gap_s, int output) {
  Json w = {{"input_tokens", {{"dist", "fixed"}, {"value", 512}}},
            {"output_tokens", {{"dist", "fixed"}, {"value", output}}},
            {"num_requests", n}, {"warmup_requests", 0}};
  w["arrival"] = gap_s > 0 ? Json{{"process", "constant"}, {"rate", 1.0 / gap_s}} : Json{{"process", "offline"}};
  engine::SimulationOptions opt;
  opt.record_requests = true;
  opt.record_iterations = true;
  return engine::simulate(make(test::scenario(w, engine)), opt);
}

double sgo_end(const engine::SimulationResult& r, std::size_t k) {
  return r.iterations.at(k).start_s + r.iterations.at(k).duration_s;
}

}  // namespace

TEST_CASE("SGLang's overlap scheduler by release, flag and server command line", "[sglang][async_scheduling]") {
  CHECK(spec::sglang_overlap_by_default(std::nullopt));  // runtime "sglang" without a release: today's SGLang
  CHECK_FALSE(spec::sglang_overlap_by_default(std::string("sglang==0.3.5.post2")));
  CHECK(spec::sglang_overlap_by_default(std::string("sglang==0.3.6")));
  CHECK(spec::sglang_overlap_by_default(std::string("sglang==0.4.7.post1")));
  CHECK_FALSE(spec::sglang_overlap_by_default(std::string("vllm==0.15.1")));

  const Json none = Json::object();
  const auto on = make(test::scenario(none, {{"runtime", "sglang==0.4.7.post1"}}));
  CHECK(perf::async_scheduling(on.scenario.engine, 1, std::nullopt));
  CHECK(perf::make_cost_model(on).async_scheduling());
  CHECK(perf::make_cost_model(make(test::scenario(none, {{"runtime", "sglang"}}))).async_scheduling());
  CHECK_FALSE(perf::make_cost_model(make(test::scenario(none, {{"runtime", "sglang==0.3.5"}}))).async_scheduling());
  // Another scheduler under SGLang's runtime is not SGLang's event loop.
  CHECK_FALSE(perf::make_cost_model(make(test::scenario(none, {{"runtime", "sglang==0.4.7"}, {"policy", "vllm"}})))
                  .async_scheduling());
  CHECK_FALSE(perf::async_scheduling(on.scenario.engine, 2, std::nullopt));  // server_args.py: off with pp > 1
  spec::SpeculativeConfig sp;
  sp.method = spec::SpeculativeMethod::eagle;
  CHECK_FALSE(perf::async_scheduling(on.scenario.engine, 1, sp));  // off with EAGLE
  const auto off = make(test::scenario(none, {{"runtime", "sglang==0.4.7"}, {"async_scheduling", false}}));
  CHECK_FALSE(perf::make_cost_model(off).async_scheduling());
  const auto asked = make(test::scenario(none, {{"runtime", "sglang==0.3.5"}, {"async_scheduling", true}}));
  CHECK(perf::make_cost_model(asked).async_scheduling());  // 0.3.x's --enable-overlap-schedule
  CHECK_THROWS_WITH(perf::sglang_overlap(asked.scenario.engine, 2, std::nullopt),
                    Catch::Contains("engine.async_scheduling") && Catch::Contains("pipeline"));
  CHECK_THROWS_WITH(perf::sglang_overlap(asked.scenario.engine, 1, sp),
                    Catch::Contains("engine.async_scheduling") && Catch::Contains("speculative"));

  // launch_server's switches set engine.async_scheduling instead of being reported as not modelled.
  const auto dis = spec::parse_sglang_server_args("python -m sglang.launch_server --model-path m --disable-overlap-schedule");
  CHECK(dis.engine_args["async_scheduling"] == false);
  CHECK(dis.not_modelled.empty());
  const auto en = spec::parse_sglang_server_args("python -m sglang.launch_server --model-path m --enable-overlap-schedule");
  CHECK(en.engine_args["async_scheduling"] == true);
  CHECK_FALSE(spec::parse_sglang_server_args("python -m sglang.launch_server --model-path m").engine_args.contains(
      "async_scheduling"));
  CHECK_THROWS_WITH(
      spec::parse_sglang_server_args("python -m sglang.launch_server --model-path m --disable-overlap-schedule 1"),
      Catch::Contains("bare flag"));
}

TEST_CASE("SGLang's overlap scheduler: a decode step loses the host's time, a serving run its share", "[sglang]") {
  const auto rs = make(test::scenario(Json::object(), {{"runtime", "sglang==0.4.7"}, {"async_scheduling", false}}));
  const perf::CostModel sync = perf::make_cost_model(rs);
  const perf::CostModel overlap = perf::make_cost_model(make(test::scenario(Json::object(), {{"runtime", "sglang==0.4.7"}})));
  REQUIRE(overlap.async_scheduling());
  perf::BatchShape b;
  b.decode_seqs = 8;
  b.decode_context = 8 * 600;
  const double host = sync.profile().cpu_overhead_per_iter_s + sync.profile().cpu_overhead_per_seq_s * 8;
  REQUIRE(host > 0);
  // An 8B decode step of 8 sequences on an A100: ~1 ms of Python step loop out of ~10 ms.
  CHECK(overlap.iteration_time(b) == Approx(sync.iteration_time(b) - host).epsilon(1e-12));
  CHECK(host / sync.iteration_time(b) > 0.05);
  CHECK(host / sync.iteration_time(b) < 0.15);

  // All at once (bench_serving's request rate inf): the overlap lifts output throughput by the host's share of a
  // large-batch step. sglang#1738 measured +10 % from the overlap alone (Llama-3.1-8B, 3000 ShareGPT prompts, radix
  // cache off); llmsim's host here is the profile's ~1 ms + 4 us per sequence against a step of tens of ms.
  const auto s = sgo_run({{"runtime", "sglang==0.4.7"}, {"async_scheduling", false}}, 400, 0, 256);
  const auto o = sgo_run({{"runtime", "sglang==0.4.7"}}, 400, 0, 256);
  const double gain = s.summary.duration_s / o.summary.duration_s;
  CHECK(gain > 1.01);
  CHECK(gain < 1.12);
  CHECK(o.summary.tpot_ms.mean < s.summary.tpot_ms.mean);
}

TEST_CASE("SGLang's overlap scheduler: a request arriving during a decode step is prefilled a step later", "[sglang]") {
  const double gap = 0.1;
  const auto sync = sgo_run({{"runtime", "sglang==0.4.7"}, {"async_scheduling", false}}, 2, gap, 64);
  const auto over = sgo_run({{"runtime", "sglang==0.4.7"}}, 2, gap, 64);
  // An idle engine forms its batch at once; that step has no step before it to hide its host time behind.
  CHECK(over.iterations.at(0).duration_s == Approx(sync.iterations.at(0).duration_s).epsilon(1e-12));
  CHECK(over.requests.at(0).first_token_s - over.requests.at(0).arrival_s ==
        Approx(over.iterations.at(0).duration_s).epsilon(1e-9));
  auto step_at = [](const engine::SimulationResult& r, double t) {
    for (std::size_t k = 0; k < r.iterations.size(); ++k)
      if (r.iterations[k].start_s <= t && t < sgo_end(r, k)) return k;
    FAIL("no iteration runs at t = " << t);
    return std::size_t{0};
  };
  const std::size_t ks = step_at(sync, sync.requests.at(1).arrival_s), ko = step_at(over, over.requests.at(1).arrival_s);
  REQUIRE(sync.iterations.at(ks).prefill_tokens == 0);
  REQUIRE(over.iterations.at(ko).prefill_tokens == 0);
  // Synchronous loop: the next step is the second request's prefill batch (decodes stall for it). Overlap: that step
  // was formed before it arrived and decodes the first request alone; the one after prefills it.
  CHECK(sync.iterations.at(ks + 1).prefill_tokens == 512);
  CHECK(over.iterations.at(ko + 1).prefill_tokens == 0);
  CHECK(over.iterations.at(ko + 1).decode_seqs == 1);
  CHECK(over.iterations.at(ko + 2).prefill_tokens == 512);
  CHECK(over.requests.at(1).first_token_s == Approx(sgo_end(over, ko + 2)).epsilon(1e-12));
  // Decode steps lose the host's time.
  CHECK(over.iterations.at(ko).duration_s < sync.iterations.at(ks).duration_s);
}

TEST_CASE("SGLang with speculative decoding at its defaults runs 48 requests, as server_args sets them", "[sglang]") {
  // Attack (issue 29): every SGLang scenario with speculative decoding and default knobs was refused — 2048 running
  // requests x (k + 1) verified tokens overflowed the chunk budget — though SGLang itself starts (server_args.py
  // _handle_speculative_decoding: max_running_requests 48 when unset). Every release, every proposer llmsim models.
  const Json w = {{"input_tokens", {{"dist", "fixed"}, {"value", 256}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", 32}}},
                  {"num_requests", 20}, {"warmup_requests", 0}, {"speculative_acceptance_rate", 0.5},
                  {"arrival", {{"process", "poisson"}, {"rate", 4}}}};
  for (const char* release : {"sglang", "sglang==0.3.6", "sglang==0.4.3", "sglang==0.5.2"}) {
    for (const Json& sp : {Json{{"method", "ngram"}, {"num_speculative_tokens", 3}},
                           Json{{"method", "draft"}, {"draft_model", "llama-3.2-1b"}, {"num_speculative_tokens", 4}}}) {
      INFO(release << " " << sp.dump());
      const auto rs = make(test::scenario(w, {{"runtime", release}, {"speculative", sp}}));
      CHECK(rs.scenario.engine.max_num_seqs == spec::sglang::kSpeculativeMaxRunningRequests);
      const auto r = engine::simulate(rs);
      CHECK(r.summary.completed_requests == 20);
      // A value the scenario sets is kept (and still checked against the budget).
      const auto set = make(test::scenario(w, {{"runtime", release}, {"speculative", sp}, {"max_num_seqs", 64}}));
      CHECK(set.scenario.engine.max_num_seqs == 64);
    }
  }
  // Without speculation the defaults are unchanged.
  CHECK(make(test::scenario(w, {{"runtime", "sglang"}})).scenario.engine.max_num_seqs == 2048);
}
