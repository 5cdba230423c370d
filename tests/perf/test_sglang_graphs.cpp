// SGLang's decode CUDA-graph limit in the cost model (issue 27; docs/cost-model.md "SGLang's CUDA graphs"): a decode
// batch above cuda_graph_max_bs runs SGLang's Python forward eagerly, which costs the eager launches and, where the
// GPU's work is shorter, the host's enqueue time (sglang#1401's 0.26 ms per layer); batches up to it are unchanged.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/eager_host.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;

namespace sglang_graphs_perf_test {

perf::CostModel sg_model(const std::string& model, const std::string& gpu_id) {
  const auto g = test::gpu(gpu_id);
  return perf::CostModel(spec::Catalog::builtin().model(model), spec::Quantization{}, g, perf::default_profile(g),
                         spec::ParallelConfig{}, true, 0, perf::Runtime::sglang);
}

perf::CostModel sg_scenario_model(const std::string& engine_extra) {
  const auto s = spec::scenario_from_text(
      R"({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-40gb-sxm"}, "engine": {"runtime": "sglang==0.5.3")" +
          engine_extra + "}}",
      "s.json");
  return perf::make_cost_model(spec::resolve(s, spec::Catalog::builtin()));
}

}  // namespace sglang_graphs_perf_test

using namespace sglang_graphs_perf_test;

TEST_CASE("SGLang: a decode batch above cuda_graph_max_bs pays the eager forward, one at or below it does not",
          "[sglang_graphs]") {
  // Llama-3.2-1B on an H100 at batch 33: ~1 ms of GPU work against 16 x 0.26 ms of host enqueue. Eager, the step is
  // the host's forward plus the serialized CPU time; graphed (limit 64), much less.
  const auto base = sg_model("llama-3.2-1b", "h100-80gb-sxm");
  const auto limit32 = base.with_max_graph_batch(32), limit64 = base.with_max_graph_batch(64);
  const auto b33 = test::decode(33, 256), b32 = test::decode(32, 256);
  const double host = 16 * perf::eager_host::kSglangPerLayerS;
  CHECK(limit32.iteration_time(b33) == Approx(test::op(limit32, b33, "cpu") + host).epsilon(1e-9));
  CHECK(limit64.iteration_time(b33) < 0.6 * limit32.iteration_time(b33));
  // At or below the limit: the same step whatever the limit (the graph replays the whole forward).
  CHECK(limit32.iteration_time(b32) == limit64.iteration_time(b32));
  CHECK(limit32.iteration_time(b32) < limit32.iteration_time(b33));
  // The engine's planned decode steps agree with iteration_time on both sides of the limit, bit for bit.
  for (const auto* m : {&limit32, &limit64}) {
    const auto d = m->decode_steps(33);
    CHECK(d.time(33 * 256) == m->iteration_time(b33));
  }
  CHECK_THROWS_WITH(base.with_max_graph_batch(0), Catch::Contains("engine.cuda_graph_max_bs"));
}

TEST_CASE("SGLang: where the GPU's work hides the host, the eager decode step costs its eager launches",
          "[sglang_graphs]") {
  // Llama-3.1-8B on an A100 40GB at batch 200, 512 tokens of context: ~20 ms of GPU work hides 32 x 0.26 ms of
  // host; the kernels launch eagerly (kernel_launch_s each in place of graph_launch_s): a small, nonzero cost.
  const auto base = sg_model("llama-3.1-8b", "a100-40gb-sxm");
  const auto eager = base.with_max_graph_batch(160), graphed = base.with_max_graph_batch(256);
  const auto b = test::decode(200, 512);
  const auto p = perf::default_profile(test::gpu("a100-40gb-sxm"));
  CHECK(test::op(eager, b, "launch") ==
        Approx(test::op(graphed, b, "launch") * p.kernel_launch_s / p.graph_launch_s).epsilon(1e-9));
  CHECK(eager.iteration_time(b) > graphed.iteration_time(b));
  CHECK(eager.iteration_time(b) < 1.05 * graphed.iteration_time(b));
}

TEST_CASE("SGLang: the scenario's release and card set the limit; engine.cuda_graph_max_bs wins", "[sglang_graphs]") {
  // 0.5.3 on a 40 GB A100 at TP 1 captures decode batches up to 32 (server_args.py "A100 (40GB), L40").
  const auto dflt = sg_scenario_model("");
  const auto asked = sg_scenario_model(R"(, "cuda_graph_max_bs": 64)");
  const auto b32 = test::decode(32, 1024), b33 = test::decode(33, 1024);
  CHECK(dflt.iteration_time(b33) > asked.iteration_time(b33));
  CHECK(dflt.iteration_time(b32) == asked.iteration_time(b32));
  // The difference is the eager term of this step, nothing else: the 64 limit prices b33 as the 32 limit prices a
  // graphed step.
  CHECK(asked.iteration_time(b33) == dflt.with_max_graph_batch(64).iteration_time(b33));
}
