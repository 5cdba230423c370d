// SGLang's scheduler (policy "sglang", engine/schedule_sglang.cpp) against the behaviour read from SGLang's code
// (managers/scheduler.py, schedule_policy.py, server_args.py; ../shared/reference/serving-engines.md §5): prefill
// batches run alone, admission reserves the running requests' future output, retraction when a decode step does not
// fit, the defaults by release and GPU, and the policy's behaviour beside prefix caching, timeouts and replicas.
#include <catch2/catch.hpp>

#include <algorithm>

#include "llmsim/engine/simulator.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/scenario.hpp"
#include "engine_test_util.hpp"

using namespace llmsim;
using engine::SimulationOptions;
using engine::simulate;
using test::make;
using test::scenario;

namespace {

Json offline(int in, const Json& out, int n) {
  return {{"arrival", {{"process", "offline"}}},
          {"input_tokens", {{"dist", "fixed"}, {"value", in}}},
          {"output_tokens", out},
          {"num_requests", n}, {"warmup_requests", 0}};
}

Json fixed(int v) { return {{"dist", "fixed"}, {"value", v}}; }

Json sglang(const Json& more = Json::object()) {
  Json e = {{"runtime", "sglang==0.4.7"}};
  for (auto it = more.begin(); it != more.end(); ++it) e[it.key()] = it.value();
  return e;
}

}  // namespace

TEST_CASE("sglang==x and runtime sglang select SGLang's scheduler with its defaults by release and GPU", "[sglang]") {
  const Json poisson = {{"arrival", {{"process", "poisson"}, {"rate", 1}}}};
  struct Case { const char* runtime; const char* gpu; int chunk; };
  // server_args.py: 0.3-0.4.x 8192 (2048 below 25,000 MB); 0.5.x by memory (< 35 GB 2048, < 60 GB 4096, < 160 GB 8192).
  for (const auto& c : {Case{"sglang==0.4.7.post1", "a100-40gb-pcie", 8192}, Case{"sglang==0.3.5", "a100-40gb-sxm", 8192},
                        Case{"sglang==0.4.9", "rtx4090-24gb", 2048}, Case{"sglang==0.5.3", "a100-40gb-pcie", 4096},
                        Case{"sglang==0.5.3", "h100-80gb-sxm", 8192}, Case{"sglang==0.5.3", "rtx4090-24gb", 2048},
                        Case{"sglang", "h200-141gb-sxm", 8192}}) {
    INFO(c.runtime << " on " << c.gpu);
    const auto e = make({{"hardware", {{"gpu", c.gpu}}}, {"engine", {{"runtime", c.runtime}, {"max_model_len", 4096}}},
                         {"workload", poisson}}).scenario.engine;
    CHECK(e.policy == spec::SchedulerPolicy::sglang);
    CHECK(e.resolved_runtime() == spec::Runtime::sglang);
    CHECK(e.max_num_batched_tokens == c.chunk);
    CHECK(e.max_num_seqs == 2048);
    CHECK(e.prefix_caching());            // the radix cache is on by default
    CHECK(e.watermark_or_default() == 0);  // reservation instead of a watermark
  }
  // The policy a scenario names wins over the release's; SGLang has no swap path.
  const auto named = make({{"engine", {{"runtime", "sglang==0.4.7"}, {"policy", "vllm"}}}, {"workload", poisson}}).scenario.engine;
  CHECK(named.policy == spec::SchedulerPolicy::vllm);
  CHECK(named.resolved_runtime() == spec::Runtime::sglang);
  CHECK(make({{"engine", {{"policy", "sglang"}}}, {"workload", poisson}}).scenario.engine.resolved_runtime() ==
        spec::Runtime::sglang);
  CHECK_THROWS_WITH(make({{"engine", {{"policy", "sglang"}, {"preemption", "swap"}}}, {"workload", poisson}}),
                    Catch::Contains("engine.preemption"));
  CHECK_THROWS_WITH(make({{"engine", {{"policy", "sglng"}}}, {"workload", poisson}}), Catch::Contains("sglang"));
  const auto s = simulate(make(scenario({{"num_requests", 5}, {"warmup_requests", 0}}, sglang()))).summary;
  // The release is named, and its overlap scheduler (on from 0.3.6, perf/sglang_overlap.hpp).
  CHECK(s.engine == "SGLang (unmixed prefill/decode scheduler) on sglang==0.4.7, overlap scheduler");
  const auto old = simulate(make(scenario({{"num_requests", 5}, {"warmup_requests", 0}}, {{"runtime", "sglang==0.3.5"}})));
  CHECK(old.summary.engine == "SGLang (unmixed prefill/decode scheduler) on sglang==0.3.5");
}

TEST_CASE("SGLang: a prefill batch never shares a step with decodes, and long prompts are chunked alone", "[sglang]") {
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 6.0}}},
                  {"input_tokens", {{"dist", "lognormal"}, {"mean", 1500}, {"sigma", 0.8}}},
                  {"output_tokens", fixed(150)},
                  {"num_requests", 400}, {"warmup_requests", 0}};
  SimulationOptions opt;
  opt.record_iterations = true;
  const auto sg = simulate(make(scenario(w, sglang({{"max_num_batched_tokens", 2048}}))), opt);
  const auto v1 = simulate(make(scenario(w, {{"max_num_batched_tokens", 2048}})), opt);
  REQUIRE(sg.summary.completed_requests == 400);
  int prefill = 0, decode = 0;
  for (const auto& it : sg.iterations) {
    REQUIRE((it.prefill_seqs == 0 || it.decode_seqs == 0));  // never mixed
    REQUIRE(it.prefill_tokens <= 2048);                        // chunked_prefill_size
    prefill += it.prefill_seqs > 0;
    decode += it.decode_seqs > 0;
  }
  CHECK(prefill > 200);
  CHECK(decode > 1000);
  // Every prefill batch stalls the running decodes: the tail of the inter-token gaps is longer than V1's.
  CHECK(sg.summary.itl_ms.p99 > 1.5 * v1.summary.itl_ms.p99);

  // A 6000-token prompt: three prefill-only chunk steps (2048, 2048, 1904), then its decodes.
  const auto r = simulate(make(scenario(offline(6000, fixed(4), 1), sglang({{"max_num_batched_tokens", 2048}}))), opt);
  std::vector<int> chunks;
  for (const auto& it : r.iterations)
    if (it.prefill_seqs > 0) chunks.push_back(it.prefill_tokens);
  CHECK(chunks == std::vector<int>{2048, 2048, 1904});
  CHECK(r.iterations.size() == 3 + 3);  // the step completing the prompt samples the first of its 4 tokens
}

TEST_CASE("SGLang: admission stops when the reserved future output exceeds the KV pool", "[sglang]") {
  // 200 requests at once, 100-token prompts, 2000 tokens out, on a 24 GB card, an 8192-token chunk (81 prompts). A
  // prefill batch admits request j only while (j + 1) × (100 + 2000) < the free pool (each reserved at full size),
  // so the first step holds (pool − 1) / 2100 prompts, and the failure marks the running batch full: no prefill
  // until it shrinks. The batch decodes together to its end, then the next one is as large; nothing is retracted.
  // vLLM V1 admits by the prompts' blocks alone and preempts as the outputs grow.
  SimulationOptions opt;
  opt.record_iterations = true;
  const Json w = offline(100, fixed(2000), 200);
  const auto sg = simulate(make(scenario(w, sglang({{"max_num_batched_tokens", 8192}}), "rtx4090-24gb")), opt);
  const auto v1 = simulate(make(scenario(w, Json::object(), "rtx4090-24gb")), opt);
  const std::int64_t pool = sg.summary.kv.capacity_tokens;
  INFO("pool " << pool << " tokens");
  REQUIRE(pool > 10 * 2100);
  REQUIRE(pool < 80 * 2100);  // the reservation binds before the chunk budget
  REQUIRE(sg.iterations.size() > 2000);
  const std::int64_t k = (pool - 1) / 2100;
  CHECK(sg.iterations[0].prefill_seqs == k);
  CHECK(sg.iterations[0].decode_seqs == 0);
  // The batch is full: 1999 decode steps of the k requests (the prefill sampled their first token).
  for (int s = 1; s < 2000; ++s) {
    INFO("step " << s);
    REQUIRE(sg.iterations[static_cast<std::size_t>(s)].prefill_seqs == 0);
    REQUIRE(sg.iterations[static_cast<std::size_t>(s)].decode_seqs == k);
  }
  CHECK(sg.iterations[2000].prefill_seqs == k);  // all finished together: the next batch
  std::int32_t sg_max = 0, v1_max = 0;
  for (const auto& it : sg.iterations) sg_max = std::max(sg_max, it.decode_seqs);
  for (const auto& it : v1.iterations) v1_max = std::max(v1_max, it.decode_seqs);
  CHECK(sg_max == k);
  CHECK(v1_max > 2 * sg_max);
  CHECK(sg.summary.preemptions == 0);  // the reservation held
  CHECK(v1.summary.preemptions > 0);
  CHECK(sg.summary.completed_requests == 200);

  // With a 2048-token chunk the first batch stops at the chunk (20 prompts and a 48-token piece of the 21st), the
  // batch is not marked full, and the next prefill batch reserves 0.7 × the running requests' future output.
  // mem_fraction_static 0.9: at 0.4.x's default (0.88) the 4090's CUDA-visible 23.53 GiB leaves the pool just under
  // 21 × 2100 tokens, where the reservation would bind before the chunk.
  const auto small = simulate(make(scenario(w, sglang({{"gpu_memory_utilization", 0.9}}), "rtx4090-24gb")),
                              opt);  // 0.4.x on 24 GB: chunk 2048
  REQUIRE(small.summary.kv.capacity_tokens > 21 * 2100);
  REQUIRE(small.iterations.size() > 2);
  CHECK(small.iterations[0].prefill_tokens == 2048);
  CHECK(small.iterations[0].prefill_seqs == 21);
  CHECK(small.iterations[1].decode_seqs == 0);  // a prefill again: the carried chunk first, then new prompts
  CHECK(small.iterations[1].prefill_seqs > 1);
}

TEST_CASE("SGLang: the decayed reservation overcommits and decode steps retract the newest requests", "[sglang]") {
  // Outputs spread over 200-3800 tokens: requests finish one by one, the batch is never empty, the ratio decays
  // towards 0.098 and admissions against it outgrow the pool: decode steps retract (recompute) requests.
  SimulationOptions opt;
  opt.record_requests = true;
  opt.record_iterations = true;
  const Json w = offline(300, {{"dist", "uniform"}, {"min", 200}, {"max", 3800}}, 300);
  const auto r = simulate(make(scenario(w, sglang(), "rtx4090-24gb")), opt);
  const auto& s = r.summary;
  REQUIRE(s.complete);
  CHECK(s.completed_requests == 300);
  CHECK(s.preemptions > 0);
  CHECK(r.kv_blocks_in_use_at_end == 0);
  CHECK(s.kv.peak_used_fraction <= 1.0);
  for (const auto& q : r.requests) CHECK(q.output_tokens >= 200);
  // Retracted requests re-prefill their prompt and the tokens they had produced.
  double prefill_tokens = 0;
  for (const auto& it : r.iterations) {
    REQUIRE((it.prefill_seqs == 0 || it.decode_seqs == 0));
    prefill_tokens += it.prefill_tokens;
  }
  CHECK(prefill_tokens > 300.0 * 300);
}

TEST_CASE("SGLang: retracted requests wait behind the whole queue", "[sglang]") {
  // scheduler.py update_running_batch puts the retracted at the back of the waiting queue
  // (`waiting_queue.extend(retracted_reqs)`): with every request queued at t = 0 (FCFS), a retracted request is
  // re-admitted only after every request that had never run, so it finishes after the last first admission. The
  // front (vLLM's place for a preempted request) would re-admit it as soon as KV frees.
  SimulationOptions opt;
  opt.record_requests = true;
  const Json w = offline(300, {{"dist", "uniform"}, {"min", 200}, {"max", 3800}}, 300);
  const auto r = simulate(make(scenario(w, sglang(), "rtx4090-24gb")), opt);
  REQUIRE(r.summary.complete);
  REQUIRE(r.summary.preemptions > 0);
  double last_admission = 0;
  for (const auto& q : r.requests) last_admission = std::max(last_admission, q.admitted_s);
  int retracted = 0, retracted_early = 0;
  for (const auto& q : r.requests) {
    if (q.preemptions == 0) continue;
    ++retracted;
    if (q.first_token_s < 0.5 * last_admission) ++retracted_early;
    CHECK(q.finish_s > last_admission);
  }
  CHECK(retracted > 0);
  CHECK(retracted_early > 0);  // retracted while half the queue had still to run: not a vacuous check
  // Their gaps: a retracted request's TPOT holds its wait behind the queue, several times a typical one.
  std::vector<double> tpot;
  double retracted_tpot = 0;
  for (const auto& q : r.requests) {
    const double t = (q.finish_s - q.first_token_s) / static_cast<double>(q.output_tokens - 1);
    tpot.push_back(t);
    if (q.preemptions > 0) retracted_tpot += t / retracted;
  }
  std::nth_element(tpot.begin(), tpot.begin() + 150, tpot.end());
  CHECK(retracted_tpot > 3 * tpot[150]);
}

TEST_CASE("SGLang beside prefix caching, client timeouts and several replicas: counts conserved", "[sglang]") {
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 4.0}}},
                  {"input_tokens", {{"dist", "uniform"}, {"min", 1100}, {"max", 1300}}},
                  {"output_tokens", {{"dist", "uniform"}, {"min", 20}, {"max", 300}}},
                  {"prefix_tokens", 1024}, {"prefix_groups", 2},
                  {"num_requests", 600}, {"warmup_requests", 0}};
  const auto nocache = simulate(make(scenario(w, sglang({{"enable_prefix_caching", false}})))).summary;
  const auto cache = simulate(make(scenario(w, sglang()))).summary;
  CHECK(nocache.completed_requests == 600);
  CHECK(cache.completed_requests == 600);
  CHECK(cache.ttft_ms.mean < 0.8 * nocache.ttft_ms.mean);  // the shared prefixes are not recomputed

  // Overload with a client timeout: every request completes or times out, every KV block comes back.
  Json over = {{"arrival", {{"process", "poisson"}, {"rate", 20}}}, {"input_tokens", fixed(512)},
               {"output_tokens", fixed(256)}, {"num_requests", 1500}, {"warmup_requests", 0}, {"timeout_s", 20}};
  const auto t = simulate(make(scenario(over, sglang())));
  CHECK(t.summary.completed_requests + t.summary.timed_out_requests == 1500);
  CHECK(t.summary.timed_out_requests > 0);
  CHECK(t.summary.unfinished_requests == 0);
  CHECK(t.kv_blocks_in_use_at_end == 0);

  for (const char* router : {"round_robin", "least_outstanding"}) {
    INFO(router);
    Json j = scenario(w, sglang());
    j["hardware"]["replicas"] = 2;
    j["hardware"]["router"] = router;
    const auto r = simulate(make(j));
    CHECK(r.summary.completed_requests == 600);
    CHECK(r.kv_blocks_in_use_at_end == 0);
  }
}

TEST_CASE("SGLang: mem_fraction_static by release, GPU and parallel size, unless the scenario sets it", "[sglang]") {
  const Json poisson = {{"arrival", {{"process", "poisson"}, {"rate", 1}}}};
  auto resolved = [&](const char* runtime, const char* gpu, int tp, const Json& more = Json::object()) {
    Json e = {{"runtime", runtime}, {"max_model_len", 4096}};
    for (auto it = more.begin(); it != more.end(); ++it) e[it.key()] = it.value();
    return make({{"model", "llama-3.1-8b"}, {"hardware", {{"gpu", gpu}, {"tp", tp}}}, {"engine", e}, {"workload", poisson}});
  };
  // server_args.py up to 0.4.7: by tensor x pipeline parallel size.
  CHECK(resolved("sglang==0.4.7", "a100-40gb-pcie", 1).scenario.engine.gpu_memory_utilization == 0.88);
  CHECK(resolved("sglang==0.3.5", "a100-40gb-sxm", 2).scenario.engine.gpu_memory_utilization == 0.87);
  CHECK(resolved("sglang==0.4.5.post1", "h100-80gb-sxm", 8).scenario.engine.gpu_memory_utilization == 0.81);
  // sglang#7054 (0.4.7.post1 on): a reserve by capacity. A 40 GB A100 (40960 MiB) at TP 1 keeps 9.5 + 0.5 GiB out:
  // (40960 - 10240) / 40960 = 0.75.
  const auto post1 = resolved("sglang==0.4.7.post1", "a100-40gb-pcie", 1);
  CHECK(post1.scenario.engine.gpu_memory_utilization == 0.75);
  const double mib = static_cast<double>(post1.gpu.memory_bytes) / (1024.0 * 1024.0);
  REQUIRE(mib == 40960.0);
  CHECK(resolved("sglang==0.5.2", "a100-40gb-pcie", 2).scenario.engine.gpu_memory_utilization ==
        Approx((40960.0 - 10.5 * 1024) / 40960.0).margin(5e-4));
  // 0.5.3+ (sglang#10975, _handle_gpu_memory_settings): the reserve from the step sizes that function set. A 40 GB
  // A100 (chunk 4096, 32 decode graphs): 512 + 4096 x 1.5 + 32 x 2 + 1/8 GiB = 6848 MiB out, (40960 - 6848) / 40960.
  CHECK(resolved("sglang==0.5.3", "a100-40gb-pcie", 1).scenario.engine.gpu_memory_utilization ==
        Approx((40960.0 - 6848.0) / 40960.0).margin(5e-4));
  // An 80 GB card (chunk 8192, 256 graphs) at TP 1: 512 + 12288 + 512 + 128 = 13440 MiB; at TP 8 (512 graphs)
  // 512 + 12288 + 1024 + 1024. Below 0.4.7.post1-0.5.2's 10 GiB reserve at TP 1: less KV than 0.5.2 left.
  const auto h100 = resolved("sglang==0.5.5.post1", "h100-80gb-sxm", 1);
  const double h100_mib = static_cast<double>(h100.gpu.memory_bytes) / (1024.0 * 1024.0);
  CHECK(h100.scenario.engine.gpu_memory_utilization == Approx((h100_mib - 13440.0) / h100_mib).margin(5e-4));
  CHECK(h100.scenario.engine.gpu_memory_utilization <
        resolved("sglang==0.5.2", "h100-80gb-sxm", 1).scenario.engine.gpu_memory_utilization);
  CHECK(resolved("sglang==0.5.6.post2", "h100-80gb-sxm", 8).scenario.engine.gpu_memory_utilization ==
        Approx((h100_mib - 14848.0) / h100_mib).margin(5e-4));
  // 0.5.3rc0 was cut before #10975 (sglang#10468, 2025-09-15): #7054's 9.5 + 0.5 GiB reserve on an 80 GB card.
  CHECK(resolved("sglang==0.5.3rc0", "h100-80gb-sxm", 1).scenario.engine.gpu_memory_utilization ==
        Approx((h100_mib - 10240.0) / h100_mib).margin(5e-4));
  // The step sizes the scenario names move it, and a card above 60 GiB keeps at least 10 GiB out: chunk 2048 and
  // 8 graphs would reserve 512 + 3072 + 16 + 128 MiB.
  CHECK(resolved("sglang==0.5.5", "h100-80gb-sxm", 1, {{"max_num_batched_tokens", 16384}})
            .scenario.engine.gpu_memory_utilization == Approx((h100_mib - 25728.0) / h100_mib).margin(5e-4));
  CHECK(resolved("sglang==0.5.5", "h100-80gb-sxm", 1, {{"max_num_batched_tokens", 2048}, {"cuda_graph_max_bs", 8}})
            .scenario.engine.gpu_memory_utilization == Approx((h100_mib - 10240.0) / h100_mib).margin(5e-4));
  // Not applied: no release, a card above 80 GiB on the by-size rule, a fraction the scenario names
  // (--mem-fraction-static).
  CHECK(resolved("sglang", "a100-40gb-pcie", 1).scenario.engine.gpu_memory_utilization == 0.90);
  CHECK(resolved("sglang==0.4.7", "h200-141gb-sxm", 1).scenario.engine.gpu_memory_utilization == 0.90);
  CHECK(resolved("sglang==0.4.7.post1", "a100-40gb-pcie", 1, {{"gpu_memory_utilization", 0.8}})
            .scenario.engine.gpu_memory_utilization == 0.8);
  CHECK(resolved("vllm==0.9.1", "a100-40gb-pcie", 1).scenario.engine.gpu_memory_utilization == 0.90);
  // The KV pool follows: 0.4.7.post1's on a 40 GB A100 holds about (0.75 x 40 - weights) / (0.88 x 40 - weights) of
  // 0.4.7's, an 8B model's ~15 GiB of weights taken out of both.
  const auto kv = [](const spec::ResolvedScenario& r) { return memory::plan_memory(r).kv_capacity_tokens; };
  const auto k47 = kv(resolved("sglang==0.4.7", "a100-40gb-pcie", 1)), kpost = kv(post1);
  CHECK(kpost < k47);
  CHECK(static_cast<double>(kpost) / static_cast<double>(k47) > 0.6);
  CHECK(static_cast<double>(kpost) / static_cast<double>(k47) < 0.8);
  // A resolved engine written out keeps its fraction; an unset one is not written, so it stays the release's.
  const Json round = spec::to_json(post1.scenario);
  CHECK(round["engine"]["gpu_memory_utilization"] == 0.75);
}
