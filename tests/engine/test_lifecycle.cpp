// The request lifecycle where mechanisms meet (issue 29's engine defects, each tested as a class): shared prefixes
// longer than a step's budget, client timeouts on deployments of several engines under every policy, failures faster
// than service, the autoscaler's window, warm-up requests in the counts, overload of timed-out and replayed runs,
// and one record per request with its outcome.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <random>

#include "../../libsim/src/engine/autoscaler.hpp"
#include "../../libsim/src/engine/request_lifecycle.hpp"
#include "engine_test_util.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/simulator.hpp"

using namespace llmsim;
using llmsim::test::make;

namespace {

Json chats(double rate, int n, int warmup, int input = 512, int output = 128) {
  return {{"arrival", {{"process", "poisson"}, {"rate", rate}}},
          {"input_tokens", {{"dist", "fixed"}, {"value", input}}},
          {"output_tokens", {{"dist", "fixed"}, {"value", output}}},
          {"num_requests", n},
          {"warmup_requests", warmup}};
}

// Every request that arrived is accounted for exactly once, measured and warm-up apart, and the records hold one row
// per request that entered with the same outcome counts.
void check_conserved(const engine::SimulationResult& r, std::int64_t issued) {
  const auto& s = r.summary;
  CHECK(s.offered.arrivals == s.rejected_requests + s.completed_requests + s.failed_requests + s.timed_out_requests +
                                  s.unfinished_requests);
  const auto& w = s.warmup;
  CHECK(w.arrivals == w.rejected + w.completed + w.failed + w.timed_out + w.unfinished);
  CHECK(s.offered.arrivals + w.arrivals == issued);
  if (r.requests.empty()) return;
  std::map<std::pair<bool, engine::RequestOutcome>, std::int64_t> rows;
  for (const auto& q : r.requests) ++rows[{q.warmup, q.outcome}];
  using O = engine::RequestOutcome;
  CHECK(rows[{false, O::completed}] == s.completed_requests);
  CHECK(rows[{false, O::failed}] == s.failed_requests);
  CHECK(rows[{false, O::timed_out}] == s.timed_out_requests);
  CHECK(rows[{false, O::unfinished}] == s.unfinished_requests);
  CHECK(rows[{true, O::completed}] == w.completed);
  CHECK(rows[{true, O::failed}] == w.failed);
  CHECK(rows[{true, O::timed_out}] == w.timed_out);
  CHECK(static_cast<std::int64_t>(r.requests.size()) == issued - s.rejected_requests - w.rejected);
}

}  // namespace

TEST_CASE("a shared prefix longer than a step's token budget is admitted and chunked under every policy", "[lifecycle]") {
  // The first chunk of a prompt whose shared prefix spans several steps lies inside the prefix: it needs no own
  // block (the prefix is referenced whole at admission). It asked for a negative count, which crashed V1.
  for (const char* policy : {"vllm", "chunked", "vllm-v0"}) {
    for (const int prefix : {100, 2047, 2049, 3000, 7000}) {
      for (const int groups : {1, 3}) {
        CAPTURE(policy, prefix, groups);
        Json w = chats(4, 12, 0, prefix + 300, 16);  // the prefix is the start of the prompt (shorter ones share none)
        w["prefix_tokens"] = prefix;
        w["prefix_groups"] = groups;
        // V0 computes a prompt in one step (its budget covers max_model_len); the chunking policies get 2048.
        Json e = {{"policy", policy}, {"enable_prefix_caching", true}};
        if (std::string(policy) != "vllm-v0") e["max_num_batched_tokens"] = 2048;
        const auto r = engine::simulate(make(llmsim::test::scenario(w, e)));
        CHECK(r.summary.complete);
        CHECK(r.summary.completed_requests == 12);
        CHECK(r.kv_blocks_in_use_at_end == 0);
        // Later requests of a group find its prefix cached.
        CHECK(r.summary.kv.prefix_cache_hit_tokens > 0);
      }
    }
  }
}

TEST_CASE("client timeouts on several engines under every policy: no crash, no leak, every request counted",
          "[lifecycle][timeouts]") {
  // A slot freed by a timed-out request is reused elsewhere while another engine's finish heap still holds an entry
  // for its previous occupant; the entry must never match the new one (SeqPool continues the slot's stamp).
  const Json layouts[] = {
      {{"gpu", "a100-80gb-sxm"}, {"replicas", 2}},
      {{"gpu", "a100-80gb-sxm"}, {"replicas", 3}, {"router", "least_kv"}},
      {{"gpu", "2xa100-80gb-sxm@pp"}},
      {{"gpu", "a100-80gb-sxm"}, {"replicas", 1}},
      {{"fleet", {{{"gpu", "rtx4090-24gb"}, {"replicas", 1}}, {{"gpu", "a100-80gb-sxm"}, {"replicas", 1}}}}},
  };
  for (const auto& hw : layouts) {
    for (const char* policy : {"vllm", "vllm-v0", "chunked", "static", "sglang"}) {
      for (const double timeout : {0.5, 2.0, 5.0}) {
        CAPTURE(hw.dump(), policy, timeout);
        Json w = chats(30, 400, 20);
        w["timeout_s"] = timeout;
        Json j = llmsim::test::scenario(w, {{"policy", policy}});
        j["hardware"] = hw;
        engine::SimulationOptions opt;
        opt.record_requests = true;
        const auto r = engine::simulate(make(j), opt);
        CHECK(r.summary.complete);
        CHECK(r.kv_blocks_in_use_at_end == 0);
        CHECK(r.summary.unfinished_requests == 0);
        check_conserved(r, 400);
      }
    }
  }
}

TEST_CASE("timeouts with an autoscaler and with disaggregation", "[lifecycle][timeouts]") {
  Json w = chats(20, 300, 10);
  w["timeout_s"] = 3;
  Json as = llmsim::test::scenario(w);
  as["autoscaler"] = {{"min_replicas", 1}, {"max_replicas", 3}, {"interval_s", 5}, {"scale_up_delay_s", 10},
                     {"queue_per_replica", 8}};
  // Disaggregated, pull (after_prefill) and push (layerwise), on a slow link so that requests time out while their
  // KV is on it, queued at a decode replica with the KV still held by the prefill one, or reading it.
  std::vector<Json> cases{as};
  // And clients so impatient (0.3 s) that long prompts time out during their own prefill step: the prefill replica
  // lets go of them at its boundary, never handing them to the decode pool.
  Json impatient = chats(30, 134, 0);
  impatient["input_tokens"] = {{"dist", "lognormal"}, {"mean", 1024}, {"sigma", 0.6}};
  impatient["output_tokens"] = {{"dist", "lognormal"}, {"mean", 400}, {"sigma", 0.6}};
  impatient["timeout_s"] = 0.3;
  for (const auto& [transfer, load] : std::vector<std::pair<const char*, Json>>{
           {"after_prefill", w}, {"layerwise", w}, {"after_prefill", impatient}, {"layerwise", impatient}}) {
    Json dis = llmsim::test::scenario(load, {{"max_num_batched_tokens", 512}});
    dis.erase("hardware");  // the pools are the deployment
    dis["disaggregation"] = {{"prefill", {{"replicas", 1}}}, {"decode", {{"replicas", 3}}},
                             {"link", {{"kind", "ethernet"}, {"bandwidth_gbps", 1}}}, {"transfer", transfer}};
    cases.push_back(dis);
  }
  for (const Json& j : cases) {
    CAPTURE(j.dump());
    engine::SimulationOptions opt;
    opt.record_requests = true;
    const auto r = engine::simulate(make(j), opt);
    CHECK(r.summary.complete);
    CHECK(r.summary.timed_out_requests > 0);
    check_conserved(r, j["workload"]["num_requests"].get<std::int64_t>());
  }
}

TEST_CASE("an autoscaler stopping and starting replicas under every policy: each start a new, empty server",
          "[lifecycle][autoscaler]") {
  // Scale-downs and scale-ups every few seconds (static batching's padding may still be in flight when its replica
  // stops), with and without timeouts and a shared prefix: a started replica restarts empty, nothing it held is lost.
  for (const char* policy : {"vllm", "vllm-v0", "chunked", "static", "sglang"}) {
    for (const double timeout : {0.0, 1.0}) {
      CAPTURE(policy, timeout);
      Json w = chats(12, 400, 20);
      w["timeout_s"] = timeout;
      w["prefix_tokens"] = 256;
      w["prefix_groups"] = 2;
      Json j = llmsim::test::scenario(w, {{"policy", policy}, {"enable_prefix_caching", true}});
      j["autoscaler"] = {{"min_replicas", 0}, {"max_replicas", 3}, {"interval_s", 0.5}, {"scale_up_delay_s", 0.5},
                         {"scale_down_delay_s", 1}, {"queue_per_replica", 2}};
      engine::SimulationOptions opt;
      opt.record_requests = true;
      const auto r = engine::simulate(make(j), opt);
      CHECK(r.summary.complete);
      CHECK(r.kv_blocks_in_use_at_end == 0);
      CHECK(r.summary.fleet.scale_ups > 1);
      check_conserved(r, 400);
    }
  }
}

TEST_CASE("failures faster than a request's service time end: each request retries at most max_retries times",
          "[lifecycle][failures]") {
  // One replica failing every ~2 s (repaired in ~0.4 s) serving requests that take ~6 s: under unbounded requeue no
  // request ever finished and the run never ended.
  for (const int retries : {0, 2, 5}) {
    CAPTURE(retries);
    Json j = llmsim::test::scenario(chats(2, 60, 5, 512, 1024));
    j["failures"] = {{"mtbf_h", 2.0 / 3600}, {"mttr_h", 0.4 / 3600}, {"on_failure", "requeue"}, {"max_retries", retries}};
    engine::SimulationOptions opt;
    opt.record_requests = true;
    const auto r = engine::simulate(make(j), opt);
    CHECK(r.summary.complete);
    CHECK(r.summary.failed_requests > 0);
    for (const auto& q : r.requests) CHECK(q.retries <= retries);
    if (retries == 0) CHECK(r.summary.requeued_requests == 0);
    check_conserved(r, 60);
  }
}

TEST_CASE("the autoscaler's scale-down window costs O(1) per evaluation and keeps its maximum", "[lifecycle][autoscaler]") {
  // The monotonic deque's front against a brute-force maximum over the window, on a random metric.
  spec::AutoscalerSpec spec;
  spec.min_replicas = 0;
  spec.max_replicas = 40;
  spec.interval_s = 0.5;
  spec.scale_down_delay_s = 7.3;
  spec.queue_per_replica = 4.0;
  engine::detail::Autoscaler a(spec, 0.0, 16);
  engine::detail::Fleet fleet(40, 1);
  engine::detail::Autoscaler::Actions act;
  std::mt19937 gen(7);
  std::vector<std::pair<double, int>> history;
  int distinct = 0;
  for (int k = 1; k <= 3000; ++k) {
    const double t = k * spec.interval_s;
    a.on_in_system(t - 0.25, static_cast<std::int64_t>(gen() % 150));
    a.tick(t, fleet, [](std::int32_t) { return std::int64_t{0}; }, act);
    history.emplace_back(t, a.last_recommendation());
    int brute = 0;
    for (const auto& [when, r] : history)
      if (when >= t - spec.scale_down_delay_s) brute = std::max(brute, r);
    CHECK(a.window_max() == brute);
    distinct += a.window_max() != a.last_recommendation();
  }
  CHECK(distinct > 100);  // the window mattered: its maximum often differed from the latest recommendation
}

TEST_CASE("an autoscaler evaluating every 10 ms over a 300 s window finishes", "[lifecycle][autoscaler]") {
  Json j = llmsim::test::scenario(chats(4, 400, 10));
  j["autoscaler"] = {{"min_replicas", 1}, {"max_replicas", 4}, {"interval_s", 0.01}, {"scale_down_delay_s", 300},
                     {"scale_up_delay_s", 5}, {"queue_per_replica", 8}};
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = engine::simulate(make(j));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(r.summary.complete);
  CHECK(r.summary.completed_requests == 390);
  // ~10,000 evaluations: each rescanned up to 30,000 window entries before (minutes); now milliseconds.
  CHECK(wall < 10.0);
}

TEST_CASE("warm-up requests are never counted in timed_out_requests or failed_requests", "[lifecycle][warmup]") {
  // Overload with a short timeout: warm-up requests time out too, and are counted apart.
  Json w = chats(40, 600, 200);
  w["timeout_s"] = 2;
  Json j = llmsim::test::scenario(w);
  j["failures"] = {{"outages", {{3, 2, 0}}}, {"on_failure", "fail"}};
  engine::SimulationOptions opt;
  opt.record_requests = true;
  const auto r = engine::simulate(make(j), opt);
  const auto& s = r.summary;
  CHECK(s.warmup.arrivals == 200);
  CHECK(s.offered.arrivals == 400);
  CHECK(s.warmup.timed_out + s.warmup.failed > 0);
  CHECK(s.timed_out_requests + s.failed_requests + s.completed_requests + s.unfinished_requests + s.rejected_requests ==
        400);
  check_conserved(r, 600);
}

TEST_CASE("overload is flagged when clients time out and when a trace replays faster than service", "[lifecycle][overload]") {
  SECTION("timeouts: a queue bounded by the clients' patience still means overload") {
    Json w = chats(40, 2000, 100);
    w["timeout_s"] = 5;
    const auto s = engine::simulate(make(llmsim::test::scenario(w))).summary;
    REQUIRE(s.timed_out_requests > 0.05 * 1900);
    CHECK(s.unstable);
    CHECK(s.reason.find("timed out") != std::string::npos);
    CHECK_FALSE(s.slo_met);
    // At light load a generous timeout no request reaches: stable.
    Json light = chats(2, 400, 40);
    light["timeout_s"] = 60;
    const auto ok = engine::simulate(make(llmsim::test::scenario(light))).summary;
    CHECK(ok.timed_out_requests == 0);
    CHECK_FALSE(ok.unstable);
  }
  SECTION("trace replay: offered twice what it serves is unstable, a light trace is not") {
    for (const double rate : {30.0, 2.0}) {
      CAPTURE(rate);
      const std::string path = "lifecycle_trace_" + std::to_string(static_cast<int>(rate)) + ".csv";
      {
        std::ofstream f(path);
        f << "arrival_time_s,input_tokens,output_tokens\n";
        for (int k = 0; k < 1000; ++k) f << k / rate << ",512,256\n";
      }
      Json w = {{"arrival", {{"process", "trace"}, {"path", path}}}, {"num_requests", 1000}, {"warmup_requests", 0}};
      const auto s = engine::simulate(make(llmsim::test::scenario(w))).summary;
      CHECK(s.completed_requests == 1000);
      CHECK(s.unstable == (rate > 10));
      if (rate > 10) {
        CHECK(s.reason.find("grew") != std::string::npos);
        CHECK_FALSE(s.slo_met);
      }
      std::remove(path.c_str());
    }
  }
  SECTION("a burst (every row at one instant, as `vllm bench serve --request-rate inf` sends) is a batch, not unstable") {
    // 1,000 rows at t = 0: all in the system from the start whatever the server's speed. The growth check called
    // it "grew by 500 over the last 500 arrivals"; it is judged as an offline batch is, not at all.
    Json reqs = Json::array();
    for (int k = 0; k < 1000; ++k) reqs.push_back({0.0, 512, 256});
    Json w = {{"arrival", {{"process", "trace"}, {"requests", reqs}}}, {"num_requests", 1000}, {"warmup_requests", 0}};
    const auto s = engine::simulate(make(llmsim::test::scenario(w))).summary;
    CHECK(s.completed_requests == 1000);
    CHECK_FALSE(s.unstable);
    CHECK(s.reason.empty());  // the same 1,000 rows at 30 req/s are unstable (the section above)
  }
}

TEST_CASE("the lifecycle refuses moves it does not have", "[lifecycle]") {
  using engine::detail::legal_transition;
  using S = engine::detail::SeqState;
  CHECK(legal_transition(S::free, S::waiting));
  CHECK(legal_transition(S::waiting, S::prefill));
  CHECK(legal_transition(S::prefill, S::decoding));
  CHECK(legal_transition(S::decoding, S::done));
  CHECK(legal_transition(S::done, S::free));
  CHECK_FALSE(legal_transition(S::free, S::decoding));
  CHECK_FALSE(legal_transition(S::done, S::waiting));    // a finished request is never re-admitted
  CHECK_FALSE(legal_transition(S::waiting, S::decoding));  // decoding starts only after a prefill (or a swap-in)
  CHECK_FALSE(legal_transition(S::swapped, S::waiting));
  engine::detail::Seq s;
  s.state = S::done;
  CHECK_THROWS_AS(engine::detail::transition(s, S::prefill), InternalError);
  engine::detail::RequestLedger ledger;
  ledger.arrive(true);
  ledger.leave(true, engine::detail::Exit::completed);
  CHECK_THROWS_AS(ledger.leave(true, engine::detail::Exit::timed_out), InternalError);  // left twice
}

TEST_CASE("a failure's retry is a lifecycle move: from a held state to waiting, never from free or done", "[lifecycle]") {
  using S = engine::detail::SeqState;
  for (const S from : {S::waiting, S::prefill, S::decoding, S::swapped, S::handoff, S::receiving}) {
    engine::detail::Seq s;
    s.state = from;
    s.id = 42;
    s.input = 100;
    s.generated = 7;
    engine::detail::retry(s);
    CHECK(s.state == S::waiting);
    CHECK(s.retries == 1);
    CHECK(s.id == 42);
    CHECK(s.generated == 0);  // from scratch
  }
  for (const S from : {S::free, S::done}) {
    engine::detail::Seq s;
    s.state = from;
    CHECK_THROWS_AS(engine::detail::retry(s), InternalError);  // its exit was counted: never back in the system
  }
}

TEST_CASE("warm-up by default scales with the run: min(100, num_requests / 10)", "[lifecycle][warmup]") {
  for (const auto& [n, expected] : std::vector<std::pair<int, int>>{{5, 0}, {100, 10}, {999, 99}, {2000, 100}, {50000, 100}}) {
    CAPTURE(n);
    Json w = {{"arrival", {{"process", "poisson"}, {"rate", 2}}}, {"num_requests", n}};
    const auto rs = make(llmsim::test::scenario(w));
    CHECK(rs.scenario.workload.warmup_requests == expected);
  }
  // The scenario: 100 requests, no warm-up given, runs (it was refused: warm-up 100 >= num_requests).
  Json w = {{"arrival", {{"process", "poisson"}, {"rate", 2}}}, {"num_requests", 100}};
  const auto s = engine::simulate(make(llmsim::test::scenario(w))).summary;
  CHECK(s.completed_requests == 90);
}
