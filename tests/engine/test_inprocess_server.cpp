// vLLM before 0.6.0 served from the engine's own process (perf/inprocess_server.hpp, issues 27/28): the OpenAI
// server's streaming coroutines ran on the engine's event loop between two steps, so a served pre-0.6 step is longer
// by inprocess_server::kPerOutputS per streaming request, derived from vllm#6883's measured TPOT (70.74 ms in-process
// vs 57.35 ms split out). An offline or in-process caller, a static batch, and 0.6+ releases do not pay it.
#include <catch2/catch.hpp>

#include "engine_test_util.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/inprocess_server.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/perf/served_step_host.hpp"

using namespace llmsim;
using llmsim::test::make;

namespace {

spec::ResolvedScenario ips_scenario(const Json& engine, const Json& arrival, const char* gpu = "h100-80gb-sxm",
                                    int input = 128, int output = 64, int requests = 200) {
  const Json w = {{"arrival", arrival},
                  {"input_tokens", {{"dist", "fixed"}, {"value", input}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", output}}},
                  {"num_requests", requests}, {"warmup_requests", 0}};
  return make(test::scenario(w, engine, gpu));
}

double ips_decode_step_s(const spec::ResolvedScenario& rs, std::int64_t seqs) {
  perf::BatchShape b;
  b.decode_seqs = seqs;
  b.decode_context = seqs * 700;
  return perf::make_cost_model(rs).iteration_time(b);
}

const Json kIpsRate = {{"process", "constant"}, {"rate", 4.0}};

}  // namespace

TEST_CASE("the in-process server's per-output cost is vllm#6883's derivation, rounded", "[inprocess_server]") {
  namespace ips = perf::inprocess_server;
  // Little's law on the PR's two runs: 112.3 streaming requests in-process, 88.4 split out.
  CHECK(ips::kQps * (ips::kMainTtftS + 149 * ips::kMainTpotS) == Approx(112.3).epsilon(1e-3));
  CHECK(ips::kQps * (ips::kSplitTtftS + 149 * ips::kSplitTpotS) == Approx(88.4).epsilon(1e-3));
  CHECK(ips::derived_per_output_s() == Approx(101.3e-6).epsilon(1e-2));
  CHECK(ips::kPerOutputS == Approx(ips::derived_per_output_s()).epsilon(0.05));
  // Only the two pre-0.6 runtimes carry it, as their served per-step host time.
  for (auto r : {perf::Runtime::vllm_v0_sync, perf::Runtime::vllm_v0_paged}) {
    CHECK(perf::inprocess_server_per_output_s(r) == ips::kPerOutputS);
    CHECK(perf::runtime_traits(r).served_step_per_seq_s == ips::kPerOutputS);
  }
  for (auto r : {perf::Runtime::vllm_v1, perf::Runtime::vllm_v0, perf::Runtime::sglang, perf::Runtime::llama_cpp})
    CHECK(perf::inprocess_server_per_output_s(r) == 0);
}

TEST_CASE("a served pre-0.6 step grows by 100 us per streaming request; offline, in-process and static do not",
          "[inprocess_server]") {
  const double per_output = perf::inprocess_server::kPerOutputS;
  for (const char* release : {"vllm==0.5.4", "vllm==0.4.1", "vllm==0.2.7"}) {
    INFO(release);
    const Json engine = {{"runtime", release}, {"policy", "vllm-v0"}};
    Json served_engine = engine, in_process_engine = engine;
    served_engine["api_server"] = true;
    const auto served = ips_scenario(served_engine, kIpsRate);
    const auto in_process = ips_scenario(in_process_engine, kIpsRate);
    const auto offline = ips_scenario(served_engine, {{"process", "offline"}});
    for (std::int64_t seqs : {1, 32, 64, 256}) {
      INFO(seqs << " sequences");
      CHECK(ips_decode_step_s(served, seqs) - ips_decode_step_s(in_process, seqs) ==
            Approx(per_output * seqs).epsilon(1e-9));
      CHECK(ips_decode_step_s(offline, seqs) == ips_decode_step_s(in_process, seqs));
    }
    // Batch 64: 6.4 ms more per step.
    CHECK(ips_decode_step_s(served, 64) - ips_decode_step_s(in_process, 64) == Approx(6.4e-3).epsilon(1e-6));
    auto st = served.scenario.engine;
    st.policy = spec::SchedulerPolicy::static_batching;
    CHECK(perf::served_step_host_per_seq_s(st, false) == 0);
  }
  // 0.6+ V0 pays MQLLMEngine's 15 us instead, V1 and SGLang nothing per step.
  const auto v06 = ips_scenario({{"runtime", "vllm==0.6.3"}, {"api_server", true}}, kIpsRate);
  const auto v06_in = ips_scenario({{"runtime", "vllm==0.6.3"}}, kIpsRate);
  CHECK(ips_decode_step_s(v06, 64) - ips_decode_step_s(v06_in, 64) ==
        Approx(64 * perf::runtime_traits(perf::Runtime::vllm_v0).served_step_per_seq_s).epsilon(1e-9));
  for (const char* release : {"vllm==0.9.1", "sglang==0.4.7"}) {
    INFO(release);
    const auto served = ips_scenario({{"runtime", release}, {"api_server", true}}, kIpsRate);
    const auto in_process = ips_scenario({{"runtime", release}}, kIpsRate);
    CHECK(ips_decode_step_s(served, 64) == ips_decode_step_s(in_process, 64));
  }
}

TEST_CASE("vllm#6883's run: serving 0.5.x from the engine's process lengthens TPOT by about the measured share",
          "[inprocess_server]") {
  // Llama-3-8B (llama-3.1-8b: the same layers) on one H100, 550 prompt / 150 output tokens, Poisson 10 QPS for
  // 60 s, chunked prefill (0.5.x's 512-token budget). Measured: mean TPOT 70.74 ms in-process vs 57.35 ms with the
  // server in a process of its own (×1.23); llmsim's in-process run stands for the split one (its engine process
  // still pickled each output: 15 us, inside the derivation).
  const Json engine = {{"runtime", "vllm==0.5.3"}, {"policy", "chunked"}};
  Json served_engine = engine;
  served_engine["api_server"] = true;
  const Json poisson = {{"process", "poisson"}, {"rate", 10.0}};
  engine::SimulationOptions opt;
  const auto served = engine::simulate(ips_scenario(served_engine, poisson, "h100-80gb-sxm", 550, 150, 600), opt);
  const auto in_process = engine::simulate(ips_scenario(engine, poisson, "h100-80gb-sxm", 550, 150, 600), opt);
  const double ratio = served.summary.tpot_ms.mean / in_process.summary.tpot_ms.mean;
  INFO("TPOT served " << served.summary.tpot_ms.mean << " ms, in-process " << in_process.summary.tpot_ms.mean
                      << " ms, ratio " << ratio);
  CHECK(ratio > 1.10);
  CHECK(ratio < 1.40);
}
