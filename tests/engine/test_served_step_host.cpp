// The host work vLLM V0's OpenAI server adds to every engine step (perf/served_step_host.hpp, issue 27): MQLLMEngine
// pickles each step's RequestOutputs and sends them to the API server over ZMQ, so a served V0 step takes
// served_step_per_seq_s longer per sequence in the batch than the same step run offline or in-process. V1 and SGLang
// are not changed by it; the pre-0.6 engines pay their in-process server's value instead (test_inprocess_server.cpp).
#include <catch2/catch.hpp>

#include "engine_test_util.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/perf/served_step_host.hpp"

using namespace llmsim;
using llmsim::test::make;

namespace {

const Json kServedRate = {{"process", "constant"}, {"rate", 4.0}};

spec::ResolvedScenario served_step_scenario(const Json& engine, const Json& arrival = kServedRate) {
  const Json w = {{"arrival", arrival},
                  {"input_tokens", {{"dist", "fixed"}, {"value", 128}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", 64}}},
                  {"num_requests", 200}, {"warmup_requests", 0}};
  return make(test::scenario(w, engine));
}

double decode_step_s(const spec::ResolvedScenario& rs, std::int64_t seqs) {
  perf::BatchShape b;
  b.decode_seqs = seqs;
  b.decode_context = seqs * 512;
  return perf::make_cost_model(rs).iteration_time(b);
}

}  // namespace

TEST_CASE("a served V0 step grows by MQLLMEngine's per-sequence host time; offline and in-process ones do not",
          "[served_step_host]") {
  const double per_seq = perf::runtime_traits(perf::Runtime::vllm_v0).served_step_per_seq_s;
  REQUIRE(per_seq == Approx(15e-6));  // vllm#8157: 2.91 ms per request over 197.5 tokens (perf/provenance.cpp)
  for (const char* release : {"vllm==0.6.3", "vllm==0.7.3"}) {
    INFO(release);
    const auto served = served_step_scenario({{"runtime", release}, {"api_server", true}});
    const auto in_process = served_step_scenario({{"runtime", release}, {"api_server", false}});
    const auto offline = served_step_scenario({{"runtime", release}, {"api_server", true}}, {{"process", "offline"}});
    for (std::int64_t seqs : {1, 32, 128, 256}) {
      INFO(seqs << " sequences");
      CHECK(decode_step_s(served, seqs) - decode_step_s(in_process, seqs) == Approx(per_seq * seqs).epsilon(1e-9));
      CHECK(decode_step_s(offline, seqs) == decode_step_s(in_process, seqs));
    }
    // It grows with the batch: 256 sequences pay 255 × 15 us = 3.8 ms more than one, against V0's own 2.55 ms.
    const double growth = (decode_step_s(served, 256) - decode_step_s(served, 1)) -
                          (decode_step_s(in_process, 256) - decode_step_s(in_process, 1));
    CHECK(growth == Approx(255 * per_seq).epsilon(1e-9));
  }
}

TEST_CASE("V1 and SGLang pay no per-step serving host time", "[served_step_host]") {
  // vllm==0.9.1 without policy vllm-v0 is V1. (0.5.4 and 0.4.2 ran AsyncLLMEngine inside the server's process, whose
  // streaming coroutines shared its event loop: test_inprocess_server.cpp.)
  for (const char* release : {"vllm==0.9.1", "vllm==0.15.1", "sglang==0.4.7"}) {
    INFO(release);
    const auto served = served_step_scenario({{"runtime", release}, {"api_server", true}});
    const auto in_process = served_step_scenario({{"runtime", release}, {"api_server", false}});
    CHECK(perf::served_step_host_per_seq_s(served.scenario.engine, false) == 0);
    for (std::int64_t seqs : {1, 64, 256}) CHECK(decode_step_s(served, seqs) == decode_step_s(in_process, seqs));
  }
  // V0 behind VLLM_USE_V1=0 on a 0.8-0.10 release is MQLLMEngine again.
  const auto v0 = served_step_scenario({{"runtime", "vllm==0.9.1"}, {"policy", "vllm-v0"}, {"api_server", true}});
  CHECK(perf::served_step_host_per_seq_s(v0.scenario.engine, false) ==
        perf::runtime_traits(perf::Runtime::vllm_v0).served_step_per_seq_s);
  // A static batch (one generate call) and the offline flag pay nothing.
  CHECK(perf::served_step_host_per_seq_s(v0.scenario.engine, true) == 0);
  auto st = v0.scenario.engine;
  st.policy = spec::SchedulerPolicy::static_batching;
  CHECK(perf::served_step_host_per_seq_s(st, false) == 0);
}

TEST_CASE("served V0 runs: each iteration is longer by the per-sequence host time of its batch, so TPOT grows",
          "[served_step_host]") {
  const double per_seq = perf::runtime_traits(perf::Runtime::vllm_v0).served_step_per_seq_s;
  const Json sixteen_users = {{"process", "closed"}, {"concurrency", 16}};
  engine::SimulationOptions opt;
  opt.record_iterations = true;
  const auto served =
      engine::simulate(served_step_scenario({{"runtime", "vllm==0.7.3"}, {"api_server", true}}, sixteen_users), opt);
  const auto in_process =
      engine::simulate(served_step_scenario({{"runtime", "vllm==0.7.3"}, {"api_server", false}}, sixteen_users), opt);
  // Decode steps of 16 at different contexts differ; the shortest of each run is the same batch priced both ways.
  auto shortest_full_decode = [](const engine::SimulationResult& r) {
    double t = 0;
    for (const auto& it : r.iterations)
      if (it.decode_seqs == 16 && it.prefill_seqs == 0 && (t == 0 || it.duration_s < t)) t = it.duration_s;
    return t;
  };
  const double served_s = shortest_full_decode(served), in_process_s = shortest_full_decode(in_process);
  REQUIRE(served_s > 0);
  REQUIRE(in_process_s > 0);
  CHECK(served_s - in_process_s == Approx(16 * per_seq).epsilon(0.05));
  CHECK(served.summary.tpot_ms.mean > in_process.summary.tpot_ms.mean + 0.5 * 16 * per_seq * 1e3);
}
