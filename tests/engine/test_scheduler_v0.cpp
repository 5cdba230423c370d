// vLLM V0's chunked-prefill scheduler (policy "chunked") against vllm/core/scheduler.py (0.4-0.10,
// Scheduler._schedule_chunked_prefill): decodes first, then partial prefills, then — whatever the running walk
// preempted — new prompts from the queue. The recompute victims join the queue front only after those admissions
// (waiting.extendleft(running_scheduled.preempted)), so a prompt behind them may take the blocks they freed. V1
// (policy "vllm") admits nothing in a step that preempted; that rule is tested in test_scheduler_v1.cpp.
#include <catch2/catch.hpp>

#include <algorithm>

#include "engine_test_util.hpp"
#include "llmsim/engine/simulator.hpp"

using namespace llmsim;
using engine::SimulationOptions;
using engine::simulate;
using test::make;
using test::scenario;

namespace {

Json v0_chunked_trace(const Json& requests) {
  const Json w = {{"arrival", {{"process", "trace"}, {"requests", requests}}}, {"warmup_requests", 0}};
  // 0.9.1 with VLLM_USE_V1=0 and chunked prefill on. No watermark, so the test's block counts are exact; a token
  // budget that takes every prompt of the test in one step, so all of them start decoding together; a KV pool of
  // a few thousand blocks (35 % of the card).
  return scenario(w, {{"runtime", "vllm==0.9.1"}, {"policy", "chunked"}, {"max_num_batched_tokens", 65536},
                      {"watermark", 0.0}, {"gpu_memory_utilization", 0.35}});
}

}  // namespace

TEST_CASE("V0 chunked prefill admits the queue behind this step's recompute victims in the step that preempted",
          "[scheduler_v0]") {
  SimulationOptions opt;
  opt.record_requests = true;
  // The KV pool of this engine, in blocks of 16 tokens (one short request is enough to read it).
  const auto probe = simulate(make(v0_chunked_trace(Json::array({Json::array({0.0, 16, 1})}))), opt);
  const std::int64_t blocks = probe.summary.kv.capacity_tokens / 16;
  REQUIRE(blocks > 200);
  // n requests of 1024 tokens (64 blocks) and a filler F of 60..123 blocks hold every block but 2 (V0 allocates
  // whole prompts at admission). B (64 tokens, 4 blocks), last in the queue, does not fit. Every prompt fills whole
  // blocks, so the first decode step needs n + 1 new blocks: it preempts the newest, F, which frees more than that
  // step needs but too few for F itself to come back. The blocks left over are enough for B.
  const std::int64_t n = (blocks - 2 - 60) / 64;
  const std::int64_t filler = blocks - 2 - n * 64;
  REQUIRE(filler >= 60);
  REQUIRE(filler < 124);
  REQUIRE(n + 2 < filler);  // one victim is enough, and F + 2 - (n + 1) + 1 >= 4 blocks are left for B
  Json reqs = Json::array();
  for (std::int64_t k = 0; k < n; ++k) reqs.push_back(Json::array({0.0, 1024, 200}));
  reqs.push_back(Json::array({0.0, filler * 16, 200}));  // F
  reqs.push_back(Json::array({0.0, 64, 4}));            // B
  const auto r = simulate(make(v0_chunked_trace(reqs)), opt);
  REQUIRE(r.summary.complete);
  REQUIRE(r.requests.size() == static_cast<std::size_t>(n + 2));
  REQUIRE(r.summary.preemptions > 0);
  auto by_id = r.requests;
  std::sort(by_id.begin(), by_id.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  const auto& first = by_id.front();
  const auto& b = by_id.back();
  const auto& f = by_id[static_cast<std::size_t>(n)];
  CHECK(first.preemptions == 0);  // the head of the running list is never the victim
  CHECK(f.preemptions >= 1);      // the newest is
  // B is admitted in the step that preempted F, right after the prompts' step. Without V0's order (no admissions
  // in a step that preempted, V1's rule) F would sit ahead of B at the queue front, and B would wait until the
  // other requests finish and free the blocks F needs.
  CHECK(b.admitted_s < first.first_token_s + 0.1 * (first.finish_s - first.first_token_s));
  CHECK(b.finish_s < first.finish_s);
  CHECK(b.admitted_s < f.finish_s);
}

namespace {

Json v0_release_chunked_trace(const char* release, const Json& requests) {
  const Json w = {{"arrival", {{"process", "trace"}, {"requests", requests}}}, {"warmup_requests", 0}};
  return scenario(w, {{"runtime", release}, {"policy", "chunked"}, {"max_num_batched_tokens", 65536},
                      {"watermark", 0.0}, {"gpu_memory_utilization", 0.35}});
}

}  // namespace

TEST_CASE("V0 before 0.5.4 keeps the running queue in arrival order: a re-admitted victim is not the next victim",
          "[scheduler_v0]") {
  // vllm/core/scheduler.py before vllm#6867 sorted the running queue by arrival (FCFS sort_by_priority) in every
  // _schedule_running and preempted running_queue.pop(), the latest arrival; after it a re-admitted victim is
  // appended to the running queue and is the next victim. Under chunked prefill that append is 0.6.0's (vllm#7874
  // put the new prompts behind the decodes; 0.5.4-0.5.5 put them ahead, test_v0_walk.cpp), so 0.5.3 is compared
  // with 0.6.0 here.
  SimulationOptions opt;
  opt.record_requests = true;
  const auto probe = simulate(make(v0_release_chunked_trace("vllm==0.6.0", Json::array({Json::array({0.0, 16, 1})}))), opt);
  const std::int64_t blocks = probe.summary.kv.capacity_tokens / 16;
  const auto probe3 = simulate(make(v0_release_chunked_trace("vllm==0.5.3", Json::array({Json::array({0.0, 16, 1})}))), opt);
  REQUIRE(probe3.summary.kv.capacity_tokens == probe.summary.kv.capacity_tokens);  // the same KV pool in both runs
  // n prompts of 4096 tokens (256 blocks; the first finishes early and frees room), a filler F and a short B, last
  // in the queue, that does not fit. As in the test above, the first decode step preempts F (the newest) and
  // admits B behind it; F returns when the first prompt finishes, so the running queue holds B then F by admission
  // but F then B by arrival. The next step short of blocks preempts the tail: F again in 0.6.0, B before 0.5.4.
  const std::int64_t n = (blocks - 2 - 60) / 256;
  const std::int64_t filler = blocks - 2 - n * 256;
  REQUIRE(n >= 4);
  REQUIRE(filler >= 60);
  REQUIRE(filler < 316);
  Json reqs = Json::array({Json::array({0.0, 4096, 30})});
  for (std::int64_t k = 1; k < n; ++k) reqs.push_back(Json::array({0.0, 4096, 600}));
  reqs.push_back(Json::array({0.0, filler * 16, 600}));  // F
  reqs.push_back(Json::array({0.0, 64, 600}));           // B
  auto run = [&](const char* release) {
    auto r = simulate(make(v0_release_chunked_trace(release, reqs)), opt);
    REQUIRE(r.summary.complete);
    REQUIRE(r.requests.size() == static_cast<std::size_t>(n + 2));
    std::sort(r.requests.begin(), r.requests.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    return r;
  };
  const auto sorted = run("vllm==0.5.3");
  const auto appended = run("vllm==0.6.0");
  const auto& f3 = sorted.requests[static_cast<std::size_t>(n)];
  const auto& b3 = sorted.requests.back();
  const auto& f4 = appended.requests[static_cast<std::size_t>(n)];
  const auto& b4 = appended.requests.back();
  INFO("0.5.3: F " << f3.preemptions << ", B " << b3.preemptions << "; 0.6.0: F " << f4.preemptions << ", B "
                   << b4.preemptions);
  // Both runs: F is the first victim and B is admitted in that step (the case is not vacuous).
  REQUIRE(f3.preemptions >= 1);
  REQUIRE(f4.preemptions >= 1);
  CHECK(b3.admitted_s < sorted.requests.front().finish_s);
  CHECK(b4.admitted_s < appended.requests.front().finish_s);
  // Arrival order puts the later-arrived B at the tail: it loses its place more often, F no more often.
  CHECK(b3.preemptions > b4.preemptions);
  CHECK(f3.preemptions <= f4.preemptions);
}
