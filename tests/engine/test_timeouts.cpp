// Client timeouts (workload.timeout_s): a request not finished in time is cancelled wherever it is, counted as
// timed out, its KV freed, and excluded from goodput and from the tokens the cost is divided by.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "engine_test_util.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/simulator.hpp"

using namespace llmsim;
using llmsim::test::make;

namespace {

// One A100 at 20 req/s of 512/256-token chats: about 1.5 times what it serves (~13 req/s), so the queue grows until
// clients give up.
Json overload(double timeout_s, const Json& engine = Json::object(), int n = 1500) {
  Json w = {{"arrival", {{"process", "poisson"}, {"rate", 20}}},
            {"input_tokens", {{"dist", "fixed"}, {"value", 512}}},
            {"output_tokens", {{"dist", "fixed"}, {"value", 256}}},
            {"num_requests", n},
            {"warmup_requests", 0}};
  if (timeout_s != 0) w["timeout_s"] = timeout_s;
  Json j = llmsim::test::scenario(w, engine);
  j["slo"] = {{"ttft_ms", {{"p95", 2000}}}, {"tpot_ms", {{"p95", 100}}}};
  return j;
}

}  // namespace

TEST_CASE("under overload a client timeout cancels the late requests; the rest complete within it", "[timeouts]") {
  const auto base = engine::simulate(make(overload(0)));
  engine::SimulationOptions opt;
  opt.record_iterations = true;
  const auto r = engine::simulate(make(overload(20)), opt);
  const auto& s = r.summary;
  REQUIRE(base.summary.timed_out_requests == 0);
  REQUIRE(s.complete);
  CHECK(s.timed_out_requests > 100);
  CHECK(s.completed_requests > 100);
  CHECK(s.completed_requests + s.timed_out_requests == 1500);
  CHECK(s.unfinished_requests == 0);
  // Without the timeout the same load completes everything, late.
  CHECK(base.summary.completed_requests == 1500);
  CHECK(base.summary.e2e_ms.max > 20000);
  // No completed request outlived its client; every KV block came back.
  CHECK(s.e2e_ms.max <= 20000 + 1e-6);
  CHECK(r.kv_blocks_in_use_at_end == 0);
  // A cancelled running request leaves the batch at the next boundary: the decode steps run are at most the
  // completed requests' (255 each after the prefill's token) plus the tokens the timed-out ones had produced.
  REQUIRE(s.preemptions == 0);
  double decode_tokens = 0;
  for (const auto& it : r.iterations) decode_tokens += it.decode_seqs;
  CHECK(decode_tokens <= 255.0 * s.completed_requests + s.wasted_output_tokens);
  // Timed-out requests never count: throughput and goodput are the completed ones', attainment counts them as
  // misses, the cost per SLO-meeting token divides by the completed good tokens only.
  CHECK(s.throughput.output_tokens_per_s * s.duration_s == Approx(256.0 * s.completed_requests));
  const double good = s.goodput_rps * s.duration_s;
  CHECK(good <= s.completed_requests + 1e-6);
  CHECK(s.slo_attainment == Approx(good / static_cast<double>(s.completed_requests + s.timed_out_requests)));
  // Most requests were lost: the P95 targets cannot hold over the requests that entered (the survivors' own P95
  // TTFT is under 2 s), so the SLO is not met.
  CHECK_FALSE(s.slo_met);
  CHECK(s.wasted_output_tokens > 0);
  CHECK(s.wasted_output_tokens < 256.0 * s.timed_out_requests);
  std::int64_t in_hours = 0;
  for (const auto& h : s.fleet.hours) in_hours += h.timed_out;
  CHECK(in_hours == s.timed_out_requests);
}

TEST_CASE("a timeout no request reaches changes nothing: the summary is bit-identical", "[timeouts]") {
  const auto off = engine::simulate(make(overload(0, Json::object(), 600))).summary;
  const auto far = engine::simulate(make(overload(1e6, Json::object(), 600))).summary;
  CHECK(far.timed_out_requests == 0);
  CHECK(metrics::to_json(far).dump() == metrics::to_json(off).dump());
}

TEST_CASE("timeouts cancel requests in every place and policy without leaking KV blocks", "[timeouts]") {
  const Json engines[] = {
      {{"policy", "vllm"}},
      {{"policy", "vllm"}, {"enable_prefix_caching", true}},
      {{"policy", "vllm-v0"}, {"preemption", "swap"}},
      {{"policy", "vllm-v0"}},
      {{"policy", "chunked"}},
      {{"policy", "static"}, {"max_num_seqs", 32}},
      {{"policy", "vllm"}, {"max_num_seqs", 512}, {"gpu_memory_utilization", 0.3}},  // KV-bound: preemptions
  };
  for (const auto& e : engines) {
    INFO(e.dump());
    const auto r = engine::simulate(make(overload(10, e, 600)));
    const auto& s = r.summary;
    REQUIRE(s.complete);
    CHECK(s.timed_out_requests > 0);
    CHECK(s.completed_requests + s.timed_out_requests == 600);
    CHECK(s.e2e_ms.max <= 10000 + 1e-6);
    CHECK(r.kv_blocks_in_use_at_end == 0);
  }
}

TEST_CASE("a closed-loop user whose request timed out moves on to its next one", "[timeouts]") {
  Json w = {{"arrival", {{"process", "closed"}, {"concurrency", 600}}},
            {"input_tokens", {{"dist", "fixed"}, {"value", 2048}}},
            {"output_tokens", {{"dist", "fixed"}, {"value", 256}}},
            {"num_requests", 3000},
            {"warmup_requests", 0},
            {"timeout_s", 4}};
  const auto s = engine::simulate(make(llmsim::test::scenario(w))).summary;
  REQUIRE(s.complete);
  CHECK(s.timed_out_requests > 0);
  CHECK(s.completed_requests + s.timed_out_requests == 3000);
  CHECK(s.e2e_ms.max <= 4000 + 1e-6);
}

TEST_CASE("a negative or NaN timeout is a ConfigError naming workload.timeout_s", "[timeouts]") {
  CHECK_THROWS_WITH(make(overload(-1)), Catch::Contains("workload.timeout_s") && Catch::Contains("-1"));
  Json j = overload(0);
  j["workload"]["timeout_s"] = -0.5;
  CHECK_THROWS_AS(make(j), ConfigError);
  spec::Workload w;
  w.timeout_s = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(w.validate(), Catch::Contains("workload.timeout_s"));
}
