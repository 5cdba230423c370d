// Issue 27: the engine holds what vLLM V1's hybrid KV-cache manager holds for a sliding-window layer — a decoder past
// its window keeps cdiv(window, block_size) + 1 blocks in each sliding group (SlidingWindowManager.remove_skipped_blocks
// before allocate_slots; memory::KvLayout::blocks_held), and only its full groups grow (engine/kv_window.cpp). The
// expected counts below come from that rule and the plan's pool, not from the engine's output.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

#include "engine_test_util.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/memory/kv_layout.hpp"
#include "llmsim/memory/memory_plan.hpp"

using namespace llmsim;

namespace {

std::int64_t swa_cdiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

/// Sequences of `input` + up to `output` tokens that vLLM V1's pool of the plan holds at once, by KvLayout's rule:
/// at most pages ÷ the least one holds (its prompt's full-group blocks, the window's in each sliding group), at least
/// pages less one admission step's prompts (charged in every group while they prefill) ÷ the most a decoder holds.
struct SwaBounds {
  std::int64_t most = 0, least = 0, every_group = 0;
};

SwaBounds swa_bounds(const memory::MemoryPlan& plan, const memory::KvLayout& l, int input, int output, int budget) {
  const std::int64_t bs = 16, pages = (plan.kv_capacity_blocks - 1) * l.groups();  // V1's null block
  const std::int64_t in = swa_cdiv(input, bs), end = swa_cdiv(input + output, bs);
  const std::int64_t window = swa_cdiv(l.window, bs);
  SwaBounds b;
  b.most = pages / (l.full_groups * in + l.sliding_groups * std::min(in, window));
  const std::int64_t admitting = (budget / input + 1) * l.groups() * in;
  b.least = (pages - admitting) / (l.full_groups * end + l.sliding_groups * std::min(end, window + 1));
  b.every_group = (plan.kv_capacity_blocks - 1) / in;  // the old charge: every group holds every token
  return b;
}

}  // namespace

TEST_CASE("issue 27: gpt-oss-120b on vLLM V1 runs as many 2,000-token sequences as its sliding window allows") {
  // Replies long enough that admission (4 prompts a step) outruns completions: the pool, not the budget, binds.
  const int input = 2000, output = 600, budget = 8192;
  const Json j = test::offline_burst_scenario("gpt-oss-120b", "h200-141gb-sxm", 1500, input, output,
      {{"max_num_seqs", 1024}, {"max_num_batched_tokens", budget}, {"max_model_len", 8192}});
  const auto r = test::run_burst(j);
  REQUIRE(r.plan.fits);
  const auto l = memory::kv_layout(test::make(j).model, spec::ParallelConfig{1, 1}, 2.0, true);
  REQUIRE(l.full_groups == 1);
  REQUIRE(l.sliding_groups == 1);
  REQUIRE(r.plan.kv_sliding_groups == 1);
  CHECK(r.result.summary.completed_requests == 1500);
  CHECK(r.result.kv_blocks_in_use_at_end == 0);
  const SwaBounds b = swa_bounds(r.plan, l, input, output, budget);
  INFO("running " << r.most_running << ", rule " << b.least << ".." << b.most << ", every group " << b.every_group);
  CHECK(r.most_running <= b.most);
  CHECK(r.most_running >= b.least);
  // Where every group held every token, the pool ran ~1.5x fewer (126..163 + 9 blocks against 2 x 126..163).
  CHECK(r.most_running > b.every_group * 14 / 10);
}

TEST_CASE("issue 27: Gemma-3-27B's five sliding groups of six free their blocks past the 1,024-token window") {
  const int input = 3000, output = 64, budget = 8192;
  const Json j = test::offline_burst_scenario("gemma-3-27b", "h200-141gb-sxm", 800, input, output,
      {{"max_num_seqs", 1024}, {"max_num_batched_tokens", budget}, {"max_model_len", 8192}});
  const auto r = test::run_burst(j);
  REQUIRE(r.plan.fits);
  const auto l = memory::kv_layout(test::make(j).model, spec::ParallelConfig{1, 1}, 2.0, true);
  REQUIRE(l.full_groups == 1);
  REQUIRE(l.sliding_groups == 6);
  REQUIRE(r.plan.kv_sliding_groups == 6);
  CHECK(r.result.summary.completed_requests == 800);
  CHECK(r.result.kv_blocks_in_use_at_end == 0);
  const SwaBounds b = swa_bounds(r.plan, l, input, output, budget);
  INFO("running " << r.most_running << ", rule " << b.least << ".." << b.most << ", every group " << b.every_group);
  CHECK(r.most_running <= b.most);
  CHECK(r.most_running >= b.least);
  // 188 + 6 x 65 pages a sequence against 7 x 188: about 2.3x more.
  CHECK(r.most_running > b.every_group * 2);
}

TEST_CASE("issue 27: the window credit applies to vLLM V1's sliding groups only") {
  const Json base =
      test::offline_burst_scenario("gpt-oss-120b", "h200-141gb-sxm", 10, 500, 10, {{"max_model_len", 8192}});
  CHECK(memory::plan_memory(test::make(base)).kv_sliding_groups == 1);
  // V0 and SGLang allocate every layer in full (their plans have no sliding groups; the engine credits nothing).
  Json v0 = base;
  // V0 by its runtime name: no vLLM release before 0.10.1 serves gpt-oss (spec/architecture_release.hpp).
  v0["engine"]["runtime"] = "vllm-v0";
  v0["engine"]["policy"] = "vllm-v0";
  CHECK(memory::plan_memory(test::make(v0)).kv_sliding_groups == 0);
  Json sg = base;
  sg["engine"]["runtime"] = "sglang";
  CHECK(memory::plan_memory(test::make(sg)).kv_sliding_groups == 0);
  // A dense model: nothing slides, so the engine's pool is the plain one (the same path as before).
  const Json dense = test::offline_burst_scenario("llama-3.1-8b", "a100-80gb-sxm", 10, 500, 10, {});
  const auto p = memory::plan_memory(test::make(dense));
  CHECK(p.kv_sliding_groups == 0);
  CHECK(p.kv_cache_groups == 1);
}

namespace {

Json swa_chat(const char* model, double rate, int n, double util) {
  Json j = test::scenario({{"arrival", {{"process", "poisson"}, {"rate", rate}}},
                           {"input_tokens", {{"dist", "lognormal"}, {"mean", 700}, {"sigma", 0.8}}},
                           {"output_tokens", {{"dist", "lognormal"}, {"mean", 300}, {"sigma", 0.8}}},
                           {"num_requests", n},
                           {"warmup_requests", n / 10}},
                          {{"max_model_len", 16384}, {"gpu_memory_utilization", util}}, "h200-141gb-sxm");
  j["model"] = model;
  return j;
}

struct SwaPair {
  engine::SimulationResult with, without;
};

/// The same scenario with decode runs and with an event per step: the window credit is planned in a run as the
/// event-per-step engine takes it, so the two must agree bit for bit.
SwaPair swa_both(const Json& j) {
  const auto rs = test::make(j);
  engine::SimulationOptions opt;
  opt.record_requests = true;
  SwaPair p{engine::simulate(rs, opt), {}};
  opt.decode_runs = false;
  p.without = engine::simulate(rs, opt);
  return p;
}

void swa_check_same(const SwaPair& p, const std::string& what) {
  INFO(what);
  CHECK(metrics::to_json(p.with.summary).dump() == metrics::to_json(p.without.summary).dump());
  REQUIRE(p.with.requests.size() == p.without.requests.size());
  std::size_t differ = 0;
  for (std::size_t k = 0; k < p.with.requests.size(); ++k) {
    const auto& x = p.with.requests[k];
    const auto& y = p.without.requests[k];
    differ += x.id != y.id || x.first_token_s != y.first_token_s || x.finish_s != y.finish_s ||
              x.preemptions != y.preemptions;
  }
  CHECK(differ == 0);
  CHECK(p.with.kv_blocks_in_use_at_end == p.without.kv_blocks_in_use_at_end);
}

}  // namespace

TEST_CASE("issue 27: sliding-window credit with preemption, prefix caching, a host tier, replicas and failures",
          "[decode_runs]") {
  // Tight pools: growth past the window, preemption by recompute (its blocks cached), re-admission.
  Json tight = swa_chat("gpt-oss-120b", 60, 1500, 0.55);
  const auto t = swa_both(tight);
  CHECK(t.with.summary.preemptions > 0);  // not vacuous
  CHECK(t.with.summary.completed_requests == 1500 - 150);
  swa_check_same(t, "gpt-oss, tight KV");
  Json gemma = swa_chat("gemma-3-27b", 12, 1200, 0.5);
  const auto g = swa_both(gemma);
  CHECK(g.with.summary.preemptions > 0);
  swa_check_same(g, "gemma-3, tight KV");
  // Prefix caching off: the preempted request's blocks are released, not cached.
  Json nocache = tight;
  nocache["engine"]["enable_prefix_caching"] = false;
  swa_check_same(swa_both(nocache), "no prefix caching");
  // Shared prefixes: a decoder's credit starts after its shared prefix's blocks.
  Json shared = tight;
  shared["workload"]["prefix_tokens"] = 512;
  shared["workload"]["prefix_groups"] = 4;
  swa_check_same(swa_both(shared), "shared prefixes");
  // A host KV tier and three replicas; a failure that re-queues a replica's requests; client timeouts.
  Json host = tight;
  host["engine"]["kv_offload_gb"] = 40;
  swa_check_same(swa_both(host), "host tier");
  Json three = swa_chat("gpt-oss-120b", 120, 2000, 0.55);
  three["hardware"]["replicas"] = 3;
  swa_check_same(swa_both(three), "three replicas");
  Json f = three;
  f["failures"] = {{"outages", {{20.0123, 10, 0}}}, {"on_failure", "requeue"}};
  const auto fp = swa_both(f);
  CHECK(fp.with.summary.fleet.failures == 1);
  swa_check_same(fp, "failure");
  Json to = tight;
  to["workload"]["timeout_s"] = 4;
  const auto tp = swa_both(to);
  CHECK(tp.with.summary.timed_out_requests > 0);
  swa_check_same(tp, "timeouts");
  // Speculative decoding steps several tokens at a time past the window.
  Json spec_j = tight;
  spec_j["engine"]["speculative"] = {{"method", "ngram"}, {"num_speculative_tokens", 3}};
  spec_j["workload"]["speculative_acceptance_rate"] = 0.5;
  swa_check_same(swa_both(spec_j), "speculative");
}
