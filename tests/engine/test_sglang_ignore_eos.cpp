// SGLang's admission of requests that ignore EOS with the radix cache off (PrefillAdder.add_one_req_ignore_eos;
// engine/schedule_sglang_eos.cpp, the release rule in spec/sglang_admission.hpp): the walk over the running requests'
// exact future tokens, by release, against the new_token_ratio path it replaces for those requests.
#include <catch2/catch.hpp>

#include "llmsim/engine/simulator.hpp"
#include "llmsim/spec/sglang_admission.hpp"
#include "engine_test_util.hpp"

using namespace llmsim;
using engine::SimulationOptions;
using engine::simulate;
using test::make;
using test::scenario;

namespace {

Json eos_offline(std::int64_t in, const Json& out, std::int64_t n, bool ignore_eos) {
  return {{"arrival", {{"process", "offline"}}},
          {"input_tokens", {{"dist", "fixed"}, {"value", in}}},
          {"output_tokens", out},
          {"num_requests", n}, {"warmup_requests", 0}, {"ignore_eos", ignore_eos}};
}

Json eos_fixed(std::int64_t v) { return {{"dist", "fixed"}, {"value", v}}; }

/// SGLang `release` with the radix cache off and page size 1 (SGLang's; llmsim's block_size 1 makes the pool exact).
Json eos_engine(const char* release, bool radix = false) {
  return {{"runtime", release}, {"enable_prefix_caching", radix}, {"block_size", 1}, {"max_num_batched_tokens", 8192}};
}

}  // namespace

TEST_CASE("SGLang ignore_eos: which walk a release runs, and only with the radix cache off", "[sglang][ignore_eos]") {
  const Json w = eos_offline(100, eos_fixed(10), 4, true);
  auto walk = [&](const char* release, bool radix = false, bool eos = true) {
    Json ww = w;
    ww["ignore_eos"] = eos;
    const auto rs = make(scenario(ww, eos_engine(release, radix)));
    return spec::sglang_eos_admission(rs.scenario.engine, rs.scenario.workload);
  };
  using W = spec::SglangEosWalk;
  for (const char* r : {"sglang==0.3.5", "sglang==0.4.0", "sglang==0.4.5.post1"}) {
    INFO(r);
    CHECK(walk(r).walk == W::next_finish);
    CHECK_FALSE(walk(r).early_exit);
    CHECK(walk(r).reserve_per_request == 0);
  }
  for (const char* r : {"sglang==0.4.6", "sglang==0.4.7.post1"}) {
    INFO(r);
    CHECK(walk(r).walk == W::own_finish);
    CHECK(walk(r).early_exit);
    CHECK(walk(r).reserve_per_request == 1);
    CHECK_FALSE(walk(r).extend_in_walk);  // sglang#7434 came after
  }
  for (const char* r : {"sglang==0.4.8", "sglang==0.5.3", "sglang"}) {
    INFO(r);
    CHECK(walk(r).walk == W::own_finish);
    CHECK(walk(r).extend_in_walk);
  }
  CHECK(walk("sglang==0.4.7", /*radix=*/true).walk == W::none);  // add_one_req: `and tree_cache.disable`
  CHECK(walk("sglang==0.4.7", false, /*eos=*/false).walk == W::none);
  const auto v1 = make(scenario(w, {{"enable_prefix_caching", false}}));
  CHECK(spec::sglang_eos_admission(v1.scenario.engine, v1.scenario.workload).walk == W::none);
}

TEST_CASE("SGLang ignore_eos: the first batch admits n - 1 where the ratio path admits n (hand-counted)",
          "[sglang][ignore_eos]") {
  // Identical requests at once, 100-token prompts, L tokens out, an idle engine with a pool of P tokens. The ratio
  // path (nothing running: no reservation) admits the n-th while n (100 + L) < P; 0.4.6+'s walk lists the n admitted
  // so far and the candidate, all (L left, 100 held), and needs P - 100 n - L n > 1 x n: n (101 + L) < P; 0.3-0.4.5's
  // walk needs P - 100 n - L n > 0, the ratio path's bound. L = floor((P - 1) / n) - 100 puts n between the two.
  SimulationOptions opt;
  opt.record_iterations = true;
  const auto probe = simulate(make(scenario(eos_offline(100, eos_fixed(8), 1, true), eos_engine("sglang==0.4.7"), "rtx4090-24gb")));
  const std::int64_t pool = probe.summary.kv.capacity_tokens;
  const std::int64_t n = pool / 3000 + 1;
  const std::int64_t out = (pool - 1) / n - 100;
  INFO("pool " << pool << " tokens, n " << n << ", output " << out);
  REQUIRE(out < 4096);         // below CLIP_MAX_NEW_TOKENS: the ratio path reserves it whole
  REQUIRE(n < 8192 / 100);     // within one chunk budget
  REQUIRE(100 + out < 8192);   // max_model_len
  auto first_batch = [&](const char* release, bool eos) {
    const auto r = simulate(make(scenario(eos_offline(100, eos_fixed(out), 3 * n, eos), eos_engine(release), "rtx4090-24gb")), opt);
    REQUIRE(r.summary.completed_requests == 3 * n);
    CHECK(r.summary.preemptions == 0);
    return r.iterations.front().prefill_seqs;
  };
  CHECK(first_batch("sglang==0.4.7", false) == n);     // requests that stop at EOS: the ratio path
  CHECK(first_batch("sglang==0.4.7", true) == n - 1);  // the walk, with one token in hand per request
  CHECK(first_batch("sglang==0.4.5", true) == n);      // the older walk: no reserve
}

TEST_CASE("SGLang ignore_eos: the exact walk never retracts where the decayed ratio does", "[sglang][ignore_eos]") {
  // Outputs spread over 200-3800 tokens: requests finish one by one and new_token_ratio decays towards 0.098, so the
  // ratio path admits past the pool and retracts (test_scheduler_sglang.cpp). The walk admits only what fits until
  // every request has finished: nothing is retracted, and the pool is used no less than it can be.
  const Json out = {{"dist", "uniform"}, {"min", 200}, {"max", 3800}};
  SimulationOptions opt;
  opt.record_requests = true;
  for (const char* release : {"sglang==0.4.7.post1", "sglang==0.4.5.post1", "sglang==0.4.9"}) {
    INFO(release);
    const auto ratio = simulate(make(scenario(eos_offline(300, out, 300, false), eos_engine(release), "rtx4090-24gb")), opt);
    const auto walk = simulate(make(scenario(eos_offline(300, out, 300, true), eos_engine(release), "rtx4090-24gb")), opt);
    REQUIRE(ratio.summary.completed_requests == 300);
    REQUIRE(walk.summary.completed_requests == 300);
    CHECK(ratio.summary.preemptions > 0);
    CHECK(walk.summary.preemptions == 0);
    CHECK(walk.kv_blocks_in_use_at_end == 0);
    CHECK(walk.summary.kv.peak_used_fraction <= 1.0);
    CHECK(walk.summary.kv.peak_used_fraction > 0.9);
    // With the radix cache on the ratio path admits them whatever the client sent (add_one_req's condition).
    const auto on = simulate(make(scenario(eos_offline(300, out, 300, true), eos_engine(release, true), "rtx4090-24gb")));
    const auto on_eos_off = simulate(make(scenario(eos_offline(300, out, 300, false), eos_engine(release, true), "rtx4090-24gb")));
    CHECK(on.summary.duration_s == on_eos_off.summary.duration_s);
    CHECK(on.summary.preemptions == on_eos_off.summary.preemptions);
  }
}
