// The serving path around the engine (perf/serving_path.hpp, issue 27): a request served through vLLM's or SGLang's
// OpenAI-compatible server (an engine process of its own behind the API server: vLLM 0.6+, SGLang) reaches the client
// that much after the engine produced its tokens, and every served request's prompt is tokenised in the server's
// process first. TTFT and E2E grow by it, the gaps between tokens and the engine's iterations do not; an in-process
// engine, a static batch, an offline run and the runtimes without that path pay nothing.
#include <catch2/catch.hpp>

#include <algorithm>

#include "engine_test_util.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/perf/inprocess_server.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/perf/serving_path.hpp"

using namespace llmsim;
using llmsim::test::make;

namespace {

engine::SimulationResult served_requests(const Json& engine, const Json& arrival, int n = 1, int prompt = 256) {
  const Json w = {{"arrival", arrival},
                  {"input_tokens", {{"dist", "fixed"}, {"value", prompt}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", 32}}},
                  {"num_requests", n}, {"warmup_requests", 0}};
  engine::SimulationOptions opt;
  opt.record_requests = true;
  opt.record_iterations = true;
  return engine::simulate(make(test::scenario(w, engine)), opt);
}

const Json kOnePerSecond = {{"process", "constant"}, {"rate", 1.0}};

/// The path a served 256-token prompt takes on `runtime`: the fixed part and its tokenisation.
double path_of(perf::Runtime runtime, std::int64_t prompt = 256) {
  const auto t = perf::runtime_traits(runtime);
  return t.api_server_s + t.tokenise_per_token_s * static_cast<double>(prompt);
}

}  // namespace

TEST_CASE("vLLM's API server adds its path to TTFT and E2E, not to the gaps or the engine's steps", "[serving_path]") {
  // Served less in-process: an in-process AsyncLLM still pays its hop to the EngineCore (engine_client_s).
  const double path = path_of(perf::Runtime::vllm_v1) - perf::runtime_traits(perf::Runtime::vllm_v1).engine_client_s;
  REQUIRE(perf::runtime_traits(perf::Runtime::vllm_v1).api_server_s > 0);
  REQUIRE(perf::runtime_traits(perf::Runtime::vllm_v1).tokenise_per_token_s > 0);
  CHECK(path_of(perf::Runtime::vllm_v0) == path_of(perf::Runtime::vllm_v1));
  // V1's EngineCore. V0's MQLLMEngine pays the same path, and its steps also grow by the host time of sending each
  // step's outputs to the server (test_served_step_host.cpp).
  for (const char* runtime : {"vllm==0.15.1"}) {
    INFO(runtime);
    const auto served = served_requests({{"runtime", runtime}, {"api_server", true}}, kOnePerSecond);
    const auto in_process = served_requests({{"runtime", runtime}, {"api_server", false}}, kOnePerSecond);
    // The engine does the same work at the same times.
    REQUIRE(served.iterations.size() == in_process.iterations.size());
    for (std::size_t k = 0; k < served.iterations.size(); ++k)
      CHECK(served.iterations[k].duration_s == in_process.iterations[k].duration_s);
    const auto& s = served.requests.at(0);
    const auto& p = in_process.requests.at(0);
    CHECK((s.first_token_s - s.arrival_s) - (p.first_token_s - p.arrival_s) == Approx(path).epsilon(1e-9));
    CHECK((s.finish_s - s.arrival_s) - (p.finish_s - p.arrival_s) == Approx(path).epsilon(1e-9));
    CHECK(served.summary.ttft_ms.mean - in_process.summary.ttft_ms.mean == Approx(path * 1e3).epsilon(1e-9));
    CHECK(served.summary.e2e_ms.mean - in_process.summary.e2e_ms.mean == Approx(path * 1e3).epsilon(1e-9));
    CHECK(served.summary.tpot_ms.mean == Approx(in_process.summary.tpot_ms.mean).epsilon(1e-12));
    CHECK(served.summary.itl_ms.mean == Approx(in_process.summary.itl_ms.mean).epsilon(1e-12));
    // The run, as the client times it (vLLM's benchmark duration), ends when the last token has come through.
    CHECK(served.summary.duration_s - in_process.summary.duration_s == Approx(path).epsilon(1e-9));
    // A request is in the system until the client has its last token: Little's law holds on the client's side.
    const auto& m = served.summary;
    CHECK(m.mean_in_system == Approx(m.throughput.requests_per_s * m.e2e_ms.mean / 1e3).epsilon(1e-9));
    // Large enough to matter at light load: a tenth or more of a 256-token 8B prefill on an A100.
    CHECK(path > 0.1 * in_process.iterations.at(0).duration_s);
  }
}

TEST_CASE("a closed-loop client sends its next request once the last token has come through the serving path",
          "[serving_path]") {
  const double path = path_of(perf::Runtime::vllm_v1) - perf::runtime_traits(perf::Runtime::vllm_v1).engine_client_s;
  const Json one_user = {{"process", "closed"}, {"concurrency", 1}};
  const auto served = served_requests({{"api_server", true}}, one_user, 3);
  const auto in_process = served_requests({{"api_server", false}}, one_user, 3);
  REQUIRE(served.requests.size() == 3);
  for (std::size_t k = 1; k < 3; ++k) {
    CHECK(served.requests[k].arrival_s == Approx(served.requests[k - 1].finish_s).epsilon(1e-12));
    CHECK(in_process.requests[k].arrival_s == Approx(in_process.requests[k - 1].finish_s).epsilon(1e-12));
  }
  // Each of the three turns takes the path once more.
  CHECK(served.requests[2].finish_s - in_process.requests[2].finish_s == Approx(3 * path).epsilon(1e-9));
}

TEST_CASE("no serving path where the request does not cross vLLM's multiprocess API server", "[serving_path]") {
  auto engine = [](Json j) {
    if (!j.contains("api_server")) j["api_server"] = true;
    return make(test::scenario(Json{{"arrival", kOnePerSecond}}, j)).scenario.engine;
  };
  const double path = path_of(perf::Runtime::vllm_v1, 1000);
  CHECK(perf::serving_path_latency_s(engine(Json::object()), false, 1000) == path);
  CHECK(perf::serving_path_latency_s(engine({{"runtime", "vllm==0.9.1"}, {"policy", "vllm-v0"}}), false, 1000) == path);
  CHECK(perf::serving_path_latency_s(engine({{"runtime", "sglang==0.4.9"}}), false, 1000) == path);
  CHECK(perf::serving_path_latency_s(engine(Json::object()), true, 1000) == 0);            // offline: LLM.generate
  // In-process (no HTTP): V1's AsyncLLM still sends the request to its EngineCore process and no more (next case).
  CHECK(perf::serving_path_latency_s(engine({{"api_server", false}}), false, 1000) ==
        perf::runtime_traits(perf::Runtime::vllm_v1).engine_client_s);
  CHECK(perf::serving_path_latency_s(engine({{"api_server", false}, {"runtime", "vllm==0.9.1"}, {"policy", "vllm-v0"}}),
                                     false, 1000) == 0);  // V0's AsyncLLMEngine runs in the caller's process
  CHECK(perf::serving_path_latency_s(engine({{"policy", "static"}}), false, 1000) == 0);   // one generate call
  // Before 0.6 the engine ran inside the API server's process (no ZMQ hop), which still tokenised the prompt: on the
  // engine's own event loop before the engine saw it (perf/inprocess_server.hpp inprocess_front, the one place that
  // prices it), so the path after the engine carries none of it.
  for (const char* r : {"vllm==0.5.4", "vllm==0.4.2"}) {
    INFO(r);
    const perf::ServingPath p = perf::serving_path(engine({{"runtime", r}}), false);
    CHECK(p.fixed_s == 0);
    CHECK(p.per_prompt_token_s == 0);
    CHECK(perf::inprocess_front(engine({{"runtime", r}}), false).per_prompt_token_s ==
          perf::runtime_traits(perf::Runtime::vllm_v1).tokenise_per_token_s);
  }
  // Engines whose serving paths are not measured pay nothing.
  for (const char* r : {"llama.cpp==b4000", "lmdeploy==0.1.0"}) {
    INFO(r);
    CHECK(perf::serving_path_latency_s(engine({{"runtime", r}}), false, 1000) == 0);
  }
  // A static batch simulated end to end pays nothing either.
  const auto st = served_requests({{"policy", "static"}, {"api_server", true}}, kOnePerSecond);
  const auto st_off = served_requests({{"policy", "static"}, {"api_server", false}}, kOnePerSecond);
  CHECK(st.summary.ttft_ms.mean == st_off.summary.ttft_ms.mean);
}

TEST_CASE("an in-process V1 AsyncLLM reaches its EngineCore process over ZMQ: TTFT grows by that hop, V0's does not",
          "[serving_path]") {
  // vllm/v1/engine/async_llm.py: AsyncLLM drives the EngineCore through an AsyncMPClient (a process of its own) with or
  // without the HTTP server; V0's AsyncLLMEngine ran the engine in the caller's own process.
  const double hop = perf::runtime_traits(perf::Runtime::vllm_v1).engine_client_s;
  REQUIRE(hop > 0);
  CHECK(hop < perf::runtime_traits(perf::Runtime::vllm_v1).api_server_s);  // the server's path includes the hop
  CHECK(perf::runtime_traits(perf::Runtime::vllm_v0).engine_client_s == 0);
  const Json one_user = {{"process", "closed"}, {"concurrency", 1}};
  const auto v1 = served_requests({{"runtime", "vllm==0.19.1"}, {"api_server", false}}, one_user, 2);
  REQUIRE(v1.requests.size() == 2);
  const auto& r = v1.requests.at(0);
  // The engine's own first token (its iterations' ends) plus the hop, and the next turn only after the last token
  // has come back.
  REQUIRE_FALSE(v1.iterations.empty());
  const double engine_first = v1.iterations.at(0).start_s + v1.iterations.at(0).duration_s;
  CHECK(r.first_token_s == Approx(engine_first + hop).epsilon(1e-9));
  CHECK(v1.requests.at(1).arrival_s == Approx(r.finish_s).epsilon(1e-12));
  // V0 (0.7.3's AsyncLLMEngine in-process) keeps the engine's own stamps.
  const auto v0 = served_requests({{"runtime", "vllm==0.7.3"}, {"api_server", false}}, kOnePerSecond, 1);
  const auto v0_served = served_requests({{"runtime", "vllm==0.7.3"}, {"api_server", true}}, kOnePerSecond, 1);
  // Served, V0 also pays its MQLLMEngine's 15 us per sequence per step (test_served_step_host.cpp): the prefill and
  // the step after it (0.7.3 streams the first token when the next step ends).
  const double v0_steps = 2 * perf::runtime_traits(perf::Runtime::vllm_v0).served_step_per_seq_s;
  CHECK(v0_served.summary.ttft_ms.mean - v0.summary.ttft_ms.mean ==
        Approx((path_of(perf::Runtime::vllm_v0) + v0_steps) * 1e3).epsilon(1e-6));
}

TEST_CASE("engine.api_server is read, written back only when off, and must be a boolean", "[serving_path]") {
  // Unset: the server (`vllm serve`), which is what a user deploys.
  const Json w = {{"arrival", kOnePerSecond}};
  const Json plain = {{"model", "llama-3.1-8b"}, {"hardware", {{"gpu", "a100-80gb-sxm"}}}, {"workload", w}};
  const auto on = make(plain).scenario;
  CHECK(on.engine.api_server);
  CHECK_FALSE(spec::to_json(on).at("engine").contains("api_server"));
  const auto off = make(test::scenario(w, {{"api_server", false}})).scenario;
  CHECK_FALSE(off.engine.api_server);
  CHECK(spec::to_json(off).at("engine").at("api_server") == false);
  CHECK_FALSE(make(spec::to_json(off)).scenario.engine.api_server);  // round-trips
  CHECK_THROWS_WITH(make(test::scenario(w, {{"api_server", "yes"}})), Catch::Contains("api_server"));
}

TEST_CASE("the prompt's tokenisation in the server grows TTFT and E2E with the prompt, not the gaps",
          "[serving_path]") {
  const double per_token = perf::runtime_traits(perf::Runtime::vllm_v1).tokenise_per_token_s;
  auto extra_ttft_s = [](int prompt) {
    const auto served = served_requests({{"api_server", true}}, kOnePerSecond, 1, prompt);
    const auto in_process = served_requests({{"api_server", false}}, kOnePerSecond, 1, prompt);
    CHECK(served.summary.itl_ms.mean == Approx(in_process.summary.itl_ms.mean).epsilon(1e-12));
    const auto& s = served.requests.at(0);
    const auto& p = in_process.requests.at(0);
    CHECK((s.finish_s - s.first_token_s) == Approx(p.finish_s - p.first_token_s).epsilon(1e-9));
    return (s.first_token_s - s.arrival_s) - (p.first_token_s - p.arrival_s);
  };
  const double short_prompt = extra_ttft_s(256), long_prompt = extra_ttft_s(7936);
  CHECK(short_prompt == Approx(path_of(perf::Runtime::vllm_v1, 256) -
                               perf::runtime_traits(perf::Runtime::vllm_v1).engine_client_s).epsilon(1e-9));
  CHECK(long_prompt - short_prompt == Approx(per_token * (7936 - 256)).epsilon(1e-6));
  // An 8k-token prompt spends ~16 ms in the tokenizer: more than the fixed HTTP + ZMQ part.
  CHECK(long_prompt - short_prompt > perf::runtime_traits(perf::Runtime::vllm_v1).api_server_s);
}

TEST_CASE("SGLang's server (TokenizerManager -> Scheduler -> DetokenizerManager) adds its path to a served request",
          "[serving_path]") {
  const Json sg = {{"runtime", "sglang==0.4.7"}};
  Json served_engine = sg, in_process_engine = sg;
  served_engine["api_server"] = true;
  in_process_engine["api_server"] = false;
  const auto served = served_requests(served_engine, kOnePerSecond);
  const auto in_process = served_requests(in_process_engine, kOnePerSecond);
  const double path = path_of(perf::Runtime::sglang);
  REQUIRE(path > 0);
  REQUIRE(served.iterations.size() == in_process.iterations.size());
  CHECK(served.summary.ttft_ms.mean - in_process.summary.ttft_ms.mean == Approx(path * 1e3).epsilon(1e-9));
  CHECK(served.summary.e2e_ms.mean - in_process.summary.e2e_ms.mean == Approx(path * 1e3).epsilon(1e-9));
  CHECK(served.summary.tpot_ms.mean == Approx(in_process.summary.tpot_ms.mean).epsilon(1e-12));
}

TEST_CASE("a client timeout is on the client's clock: no request completes after its client gave up", "[serving_path]") {
  // Loaded so that many requests end near their deadline, on one replica and on several.
  for (const Json& hardware : {Json{{"gpu", "a100-80gb-sxm"}}, Json{{"gpu", "a100-80gb-sxm"}, {"replicas", 2}}}) {
    const double timeout_s = 1.0;
    const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 12.0 * hardware.value("replicas", 1)}}},
                    {"input_tokens", {{"dist", "lognormal"}, {"mean", 1000}, {"sigma", 0.8}}},
                    {"output_tokens", {{"dist", "lognormal"}, {"mean", 100}, {"sigma", 0.6}}},
                    {"num_requests", 1500}, {"warmup_requests", 0}, {"seed", 3}, {"timeout_s", timeout_s}};
    Json sc = test::scenario(w, {{"api_server", true}});
    sc["hardware"] = hardware;
    engine::SimulationOptions opt;
    opt.record_requests = true;
    const auto r = engine::simulate(make(sc), opt);
    INFO(hardware.dump());
    REQUIRE(r.summary.timed_out_requests > 0);
    REQUIRE(r.summary.completed_requests > 0);
    double latest = 0;
    for (const auto& q : r.requests)
      if (q.outcome == engine::RequestOutcome::completed) latest = std::max(latest, q.finish_s - q.arrival_s);
    CHECK(latest <= timeout_s + 1e-9);  // as the client saw it: the engine's last token plus the path
    CHECK(r.summary.e2e_ms.max <= timeout_s * 1e3 + 1e-6);
  }
}
