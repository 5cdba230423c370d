// vLLM 0.6.0-0.6.1's OpenAI server drove AsyncLLMEngine through the RPC frontend (rpc/client.py, rpc/server.py) until
// vllm#8157's MQLLMEngine (0.6.2): vllm#8092's table prices it at 2.2 ms of engine time per request and 180 us per
// streamed output (perf/rpc_frontend.hpp). A burst to 0.6.0 meets the per-request part ahead of the engine's first
// step; a served 0.6.0 step pays the per-output part where 0.6.2+ pays MQLLMEngine's 15 us.
#include <catch2/catch.hpp>

#include "engine_test_util.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/inprocess_server.hpp"
#include "llmsim/perf/rpc_frontend.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/perf/served_step_host.hpp"
#include "llmsim/spec/runtime_version.hpp"

using namespace llmsim;
using llmsim::test::make;

namespace {

constexpr int kRpcPrompt = 128;

/// `n` requests of 128 prompt / 4 output tokens, all at t = 0, to vLLM `release`'s OpenAI server.
Json rpc_burst(int n, const char* release, bool api_server = true) {
  Json reqs = Json::array();
  for (int k = 0; k < n; ++k) reqs.push_back({0.0, kRpcPrompt, 4});
  Json w = {{"arrival", {{"process", "trace"}, {"requests", reqs}}}, {"num_requests", n}, {"warmup_requests", 0}};
  Json s = test::scenario(w, {{"api_server", api_server}, {"runtime", release}});
  s["model"] = "llama-3.1-8b";
  return s;
}

double rpc_decode_step_s(const char* release, std::int64_t seqs, bool api_server = true) {
  perf::BatchShape b;
  b.decode_seqs = seqs;
  b.decode_context = seqs * 512;
  return perf::make_cost_model(make(rpc_burst(1, release, api_server))).iteration_time(b);
}

}  // namespace

TEST_CASE("vllm#8092's two rows give the RPC frontend's per-request and per-output engine time", "[rpc_frontend]") {
  // 14.9 vs 34.8 req/s single-step, 33.3 vs 42.9 with 8 steps: 38.38 and 6.72 ms more per served request.
  CHECK(perf::rpc_frontend::served_extra_single_s() == Approx(38.38e-3).epsilon(1e-3));
  CHECK(perf::rpc_frontend::served_extra_multi_s() == Approx(6.72e-3).epsilon(1e-3));
  CHECK(perf::rpc_frontend::derived_per_output_s() == Approx(183.2e-6).epsilon(2e-3));
  CHECK(perf::rpc_frontend::derived_per_request_s() == Approx(2.197e-3).epsilon(2e-3));
  // Which releases: 0.6.0 and 0.6.1.x; MQLLMEngine from 0.6.2; none without a release or before 0.6.
  for (const char* r : {"vllm==0.6.0", "vllm==0.6.1", "vllm==0.6.1.post2"}) CHECK(spec::vllm_rpc_frontend(r));
  for (const char* r : {"vllm==0.6.2", "vllm==0.6.3", "vllm==0.5.4", "sglang==0.3.0"})
    CHECK_FALSE(spec::vllm_rpc_frontend(r));
  CHECK_FALSE(spec::vllm_rpc_frontend(std::nullopt));
  CHECK_FALSE(spec::vllm_rpc_frontend(std::string("vllm-v0")));
}

TEST_CASE("a served vLLM 0.6.0 step pays the RPC frontend's per-output time, 0.6.2 MQLLMEngine's", "[rpc_frontend]") {
  const double mq = perf::runtime_traits(perf::Runtime::vllm_v0).served_step_per_seq_s;
  REQUIRE(mq == Approx(15e-6));
  for (std::int64_t seqs : {1, 64, 256}) {
    INFO(seqs << " sequences");
    // Under the old rule every vllm-v0 release paid MQLLMEngine's 15 us: these two were equal.
    CHECK(rpc_decode_step_s("vllm==0.6.0", seqs) - rpc_decode_step_s("vllm==0.6.2", seqs) ==
          Approx((perf::rpc_frontend::kPerOutputS - mq) * static_cast<double>(seqs)).epsilon(1e-9));
    CHECK(rpc_decode_step_s("vllm==0.6.1", seqs) == rpc_decode_step_s("vllm==0.6.0", seqs));
    // An in-process AsyncLLMEngine (no server) pays neither.
    CHECK(rpc_decode_step_s("vllm==0.6.0", seqs, false) == rpc_decode_step_s("vllm==0.6.2", seqs, false));
  }
  const auto offline = make(rpc_burst(1, "vllm==0.6.0")).scenario.engine;
  CHECK_FALSE(perf::through_rpc_frontend(offline, true));
  CHECK(perf::served_step_host_per_seq_s(offline, true) == 0);
}

TEST_CASE("a burst to vLLM 0.6.0's server reaches the engine after N x (front part + RPC time per request)",
          "[rpc_frontend]") {
  const double tokenise = perf::runtime_traits(perf::Runtime::vllm_v0).tokenise_per_token_s;
  const auto front = perf::inprocess_front(make(rpc_burst(1, "vllm==0.6.0")).scenario.engine, false);
  CHECK(front.fixed_s == Approx(perf::inprocess_server::kPerRequestS + perf::rpc_frontend::kPerRequestS));
  // The path after the engine is 0.6.3's: the RPC time is not carved out of it.
  CHECK(front.from_path_s == perf::inprocess_server::kPerRequestS);
  const auto front063 = perf::inprocess_front(make(rpc_burst(1, "vllm==0.6.3")).scenario.engine, false);
  CHECK(front063.fixed_s == perf::inprocess_server::kPerRequestS);
  const int n = 100;
  const auto r060 = test::recorded_run(rpc_burst(n, "vllm==0.6.0"));
  const auto r063 = test::recorded_run(rpc_burst(n, "vllm==0.6.3"));
  REQUIRE(r060.summary.completed_requests == n);
  REQUIRE(r063.summary.completed_requests == n);
  // Under the old rule both bursts started their first step at n x (0.5 ms + 128 x 2 us).
  CHECK(test::first_step_s(r063) == Approx(n * (perf::inprocess_server::kPerRequestS + tokenise * kRpcPrompt)));
  CHECK(test::first_step_s(r060) - test::first_step_s(r063) == Approx(n * perf::rpc_frontend::kPerRequestS));
  CHECK(test::mean_ttft_s(r060) - test::mean_ttft_s(r063) > n * perf::rpc_frontend::kPerRequestS);
}
