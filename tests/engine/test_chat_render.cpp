// The chat endpoint's render barrier (perf/chat_render.hpp, engine/api_render_loop.hpp; issue 27): vLLM releases that
// parse the chat template's Jinja source on every /v1/chat/completions request do it on the API server's one event
// loop before the request reaches the engine, and a request's hand-off waits behind the renders queued before its
// own ended. A burst of N requests reaches the engine together after N renders, with no engine work before; an
// isolated request waits one render; the completions endpoint, other releases, SGLang and non-Jinja models pay nothing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "../../libsim/src/engine/api_render_loop.hpp"
#include "engine_test_util.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/perf/chat_render.hpp"
#include "llmsim/spec/runtime_version.hpp"

using namespace llmsim;
using llmsim::test::make;

namespace {

/// `n` requests of 128 prompt / 4 output tokens arriving at `times` (or all at t = 0), through vLLM's API server.
Json chat_burst_scenario(int n, const Json& engine, const std::string& endpoint, const std::vector<double>& times = {},
                         const char* model = "llama-3.1-8b", double timeout_s = 0) {
  Json reqs = Json::array();
  for (int k = 0; k < n; ++k) reqs.push_back({times.empty() ? 0.0 : times[static_cast<std::size_t>(k)], 128, 4});
  Json w = {{"arrival", {{"process", "trace"}, {"requests", reqs}}},
            {"num_requests", n}, {"warmup_requests", 0}, {"endpoint", endpoint}};
  if (timeout_s > 0) w["timeout_s"] = timeout_s;
  Json e = {{"api_server", true}, {"runtime", "vllm==0.11.0"}};
  for (auto it = engine.begin(); it != engine.end(); ++it) e[it.key()] = it.value();
  Json s = test::scenario(w, e);
  s["model"] = model;
  return s;
}

constexpr double kParse = perf::kChatTemplateKwargsS;  // the scenarios' release, vllm==0.11.0

}  // namespace

TEST_CASE("the releases that parse the chat template per request, read from vLLM's code", "[chat_render]") {
  for (const char* v : {"vllm==0.8.0", "vllm==0.9.1", "vllm==0.11.0", "vllm==0.11.2"}) {
    INFO(v);
    CHECK(spec::chat_template_parsed_per_request(std::string(v)));
  }
  // vllm#20065 cached the content-format detection (0.9.2); 0.10.x has no per-request parse; vllm#25794's filter is
  // cached in the 0.13-era code; V0 releases, SGLang and a bare runtime name are not priced.
  for (const char* v : {"vllm==0.7.3", "vllm==0.9.2", "vllm==0.10.2", "vllm==0.12.0", "vllm==0.13.0", "sglang==0.5.5",
                        "vllm-v1"}) {
    INFO(v);
    CHECK_FALSE(spec::chat_template_parsed_per_request(std::string(v)));
  }
  CHECK_FALSE(spec::chat_template_parsed_per_request(std::nullopt));
}

TEST_CASE("0.11's per-request pass is the kwargs filter, 2.1x 0.9's content-format detection", "[chat_render]") {
  CHECK(spec::chat_template_parse(std::string("vllm==0.9.1")) == spec::ChatTemplateParse::content_format_detection);
  CHECK(spec::chat_template_parse(std::string("vllm==0.11.0")) == spec::ChatTemplateParse::template_kwargs_filter);
  CHECK(spec::chat_template_parse(std::string("vllm==0.10.2")) == spec::ChatTemplateParse::none);
  const auto barrier = [](const char* release) {
    return perf::chat_render_barrier_s(make(chat_burst_scenario(1, {{"runtime", release}}, "/v1/chat/completions")));
  };
  CHECK(barrier("vllm==0.9.1") == Approx(perf::kChatTemplateParseS));
  // vllm#25794's parse + find_undeclared_variables costs what vllm#20065's detection did, times the measured ratio;
  // one rule, not the detection's 7 ms again.
  CHECK(barrier("vllm==0.11.0") == Approx(perf::kChatTemplateParseS * perf::kTemplateKwargsOverDetection));
  CHECK(barrier("vllm==0.11.0") > 2 * barrier("vllm==0.9.1"));
  // An isolated request's TTFT over the completions endpoint's, on the same release: its release's pass.
  const auto chat_over_plain = [](const char* release) {
    const auto ttft = [&](const char* endpoint) {
      return test::mean_ttft_s(test::recorded_run(chat_burst_scenario(1, {{"runtime", release}}, endpoint)));
    };
    return ttft("/v1/chat/completions") - ttft("/v1/completions");
  };
  CHECK(chat_over_plain("vllm==0.9.1") == Approx(perf::kChatTemplateParseS).epsilon(1e-6));
  CHECK(chat_over_plain("vllm==0.11.0") == Approx(perf::kChatTemplateKwargsS).epsilon(1e-6));
}

TEST_CASE("the chat rendering is a model fact: harmony for gpt-oss, its own encoder for DeepSeek-V3.2", "[chat_render]") {
  CHECK(perf::chat_rendering(make(chat_burst_scenario(1, Json::object(), "/v1/chat/completions")).model) ==
        perf::ChatRendering::jinja);
  CHECK(perf::chat_rendering(make(chat_burst_scenario(1, Json::object(), "/v1/chat/completions", {}, "qwen3-14b")).model) ==
        perf::ChatRendering::jinja);
  CHECK(perf::chat_rendering(make(chat_burst_scenario(1, Json::object(), "/v1/chat/completions", {}, "gpt-oss-20b")).model) ==
        perf::ChatRendering::harmony);
  CHECK(perf::chat_rendering(make(chat_burst_scenario(1, Json::object(), "/v1/chat/completions", {}, "deepseek-v3.2")).model) ==
        perf::ChatRendering::own_encoder);
}

TEST_CASE("the barrier applies only to vLLM V1's chat endpoint on a parsing release with a Jinja template", "[chat_render]") {
  const auto barrier = [](const Json& s) { return perf::chat_render_barrier_s(make(s)); };
  CHECK(barrier(chat_burst_scenario(1, Json::object(), "/v1/chat/completions")) == kParse);
  CHECK(barrier(chat_burst_scenario(1, Json::object(), "/v1/completions")) == 0);
  CHECK(barrier(chat_burst_scenario(1, {{"runtime", "vllm==0.10.2"}}, "/v1/chat/completions")) == 0);
  CHECK(barrier(chat_burst_scenario(1, {{"runtime", "sglang==0.5.5"}}, "/v1/chat/completions")) == 0);
  CHECK(barrier(chat_burst_scenario(1, {{"api_server", false}}, "/v1/chat/completions")) == 0);
  CHECK(barrier(chat_burst_scenario(1, Json::object(), "/v1/chat/completions", {}, "gpt-oss-20b")) == 0);
  std::string why;
  CHECK(perf::chat_render_barrier_s(make(chat_burst_scenario(1, Json::object(), "/v1/completions")), &why) == 0);
  CHECK(why.find("/v1/completions") != std::string::npos);
}

TEST_CASE("workload.endpoint reads vLLM's paths and refuses others by name", "[chat_render]") {
  CHECK(make(chat_burst_scenario(1, Json::object(), "/v1/chat/completions")).scenario.workload.endpoint ==
        spec::Endpoint::chat_completions);
  CHECK(make(chat_burst_scenario(1, Json::object(), "/v1/completions")).scenario.workload.endpoint ==
        spec::Endpoint::completions);
  CHECK_THROWS_WITH(make(chat_burst_scenario(1, Json::object(), "/v1/chat")),
                    Catch::Contains("workload.endpoint") && Catch::Contains("/v1/chat/completions"));
}

TEST_CASE("one API loop: a burst reaches the engine after every render, an isolated request after its own", "[chat_render]") {
  const double c = 0.01;
  std::vector<std::pair<std::int32_t, std::int32_t>> out;
  engine::detail::ApiRenderLoop burst(c);
  for (int k = 0; k < 5; ++k) burst.arrive(k, 0, 0.0);
  for (int k = 1; k < 5; ++k) {  // the hand-off events at each render's end: nothing until the last render ends
    burst.due(k * c, out);
    CHECK(out.empty());
  }
  burst.due(5 * c, out);
  CHECK(out.size() == 5);
  CHECK(burst.empty());

  out.clear();
  engine::detail::ApiRenderLoop light(c);
  CHECK(light.arrive(0, 0, 1.0) == Approx(1.0 + c));
  light.due(1.0 + c, out);
  CHECK(out.size() == 1);

  // Overload: a request whose render ended before the next arrival goes with the renders queued before it, not at the
  // loop's first idle moment. Arrivals every 0.5c: render k ends at (k + 1)c; request 0's continuation (end c) runs
  // after the renders of the requests that arrived by c (requests 0-2), i.e. at 3c.
  out.clear();
  engine::detail::ApiRenderLoop over(c);
  std::vector<double> ends;
  for (int k = 0; k < 8; ++k) ends.push_back(over.arrive(k, 0, 0.5 * c * k));
  for (double t : ends) over.due(t, out);  // the events, in order (each end, once)
  REQUIRE(out.size() >= 1);
  CHECK(out.front().first == 0);
  over.due(1e9, out);
  CHECK(out.size() == 8);
  // erase (a client timeout) removes one request and reports its engine
  engine::detail::ApiRenderLoop t(c);
  t.arrive(7, 3, 0.0);
  CHECK(t.erase(7) == 3);
  CHECK(t.erase(7) == -1);
}

TEST_CASE("a chat burst: no engine step before N renders, then the engine runs as before", "[chat_render]") {
  const int n = 200;
  const auto chat = test::recorded_run(chat_burst_scenario(n, Json::object(), "/v1/chat/completions"));
  const auto plain = test::recorded_run(chat_burst_scenario(n, Json::object(), "/v1/completions"));
  REQUIRE(chat.summary.completed_requests == n);
  REQUIRE(plain.summary.completed_requests == n);
  // Nothing is computed during the delay: the first step starts once all N renders ran.
  CHECK(test::first_step_s(chat) == Approx(n * kParse).epsilon(1e-9));
  CHECK(test::first_step_s(plain) < 1e-6);
  // After it, the engine runs the same steps: every request's TTFT is N·c longer.
  REQUIRE(chat.iterations.size() == plain.iterations.size());
  for (std::size_t k = 0; k < chat.iterations.size(); ++k)
    CHECK(chat.iterations[k].duration_s == Approx(plain.iterations[k].duration_s).epsilon(1e-12));
  CHECK(test::mean_ttft_s(chat) - test::mean_ttft_s(plain) == Approx(n * kParse).epsilon(1e-6));
}

TEST_CASE("light load pays about one render; completions, other releases, SGLang and gpt-oss pay none", "[chat_render]") {
  std::vector<double> times;
  for (int k = 0; k < 20; ++k) times.push_back(0.5 * k);  // 2 req/s: the loop is idle at every arrival
  const auto chat = test::recorded_run(chat_burst_scenario(20, Json::object(), "/v1/chat/completions", times));
  const auto plain = test::recorded_run(chat_burst_scenario(20, Json::object(), "/v1/completions", times));
  CHECK(test::mean_ttft_s(chat) - test::mean_ttft_s(plain) == Approx(kParse).epsilon(1e-6));
  for (const Json& e : {Json{{"runtime", "vllm==0.10.2"}}, Json{{"runtime", "sglang==0.5.5"}}}) {
    INFO(e.dump());
    const auto a = test::recorded_run(chat_burst_scenario(50, e, "/v1/chat/completions"));
    const auto b = test::recorded_run(chat_burst_scenario(50, e, "/v1/completions"));
    CHECK(test::mean_ttft_s(a) == test::mean_ttft_s(b));
  }
  const auto oss = test::recorded_run(chat_burst_scenario(50, Json::object(), "/v1/chat/completions", {}, "gpt-oss-20b"));
  CHECK(test::first_step_s(oss) < 1e-6);
}

TEST_CASE("several replicas: each API server renders its own share of the burst", "[chat_render]") {
  const int n = 200;
  for (const char* router : {"round_robin", "least_outstanding"}) {
    INFO(router);
    Json s = chat_burst_scenario(n, Json::object(), "/v1/chat/completions");
    s["hardware"]["replicas"] = 4;
    s["hardware"]["router"] = router;
    const auto r = test::recorded_run(s);
    REQUIRE(r.summary.completed_requests == n);
    CHECK(test::first_step_s(r) == Approx(n / 4 * kParse).epsilon(1e-9));  // the router spreads the burst evenly
  }
}

TEST_CASE("a client timeout shorter than the burst's renders cancels requests still on the loop", "[chat_render]") {
  const int n = 200;  // renders end at 1.4 s; the clients give up at 0.5 s
  const auto r = test::recorded_run(chat_burst_scenario(n, Json::object(), "/v1/chat/completions", {}, "llama-3.1-8b", 0.5));
  CHECK(r.summary.completed_requests == 0);
  CHECK(r.summary.timed_out_requests == n);
  CHECK(r.iterations.empty());  // none reached the engine
}

TEST_CASE("with prefix caching the burst still waits for its renders", "[chat_render]") {
  const auto r = test::recorded_run(chat_burst_scenario(100, {{"enable_prefix_caching", true}}, "/v1/chat/completions"));
  REQUIRE(r.summary.completed_requests == 100);
  CHECK(test::first_step_s(r) == Approx(100 * kParse).epsilon(1e-9));
}
