// SGLang's overlap loop processes batch k's result only once batch k + 1's forward is enqueued (issues 27/28;
// perf/overlap_launch_wait.hpp, docs/cost-model.md "The overlap loop waits for the launch"): on the host, an eager
// step's Python forward and the loop's CPU work run in series, so the step costs max(GPU, enqueue + CPU terms).
// Graphed steps, and eager steps whose GPU work outlasts both, keep their price.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/eager_host.hpp"
#include "llmsim/perf/engine_overhead.hpp"
#include "llmsim/perf/overlap_launch_wait.hpp"
#include "llmsim/spec/catalog.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;

namespace overlap_launch_wait_test {

perf::CostModel olw_model(const std::string& model, const std::string& gpu_id, perf::Runtime runtime) {
  const auto g = test::gpu(gpu_id);
  return perf::CostModel(spec::Catalog::builtin().model(model), spec::Quantization{}, g, perf::default_profile(g),
                         spec::ParallelConfig{}, true, 0, runtime);
}

perf::BatchShape olw_prefill(std::int64_t tokens) {
  perf::BatchShape b;
  b.add_prefill(tokens, 0, true);
  return b;
}

}  // namespace overlap_launch_wait_test

using namespace overlap_launch_wait_test;

TEST_CASE("SGLang overlap: a host-bound eager prefill pays its forward's enqueue and the loop's CPU work in series",
          "[overlap_launch_wait]") {
  // Llama-3.2-1B on an H100, a 16-token prefill: well under 1 ms of GPU work against 16 x 0.26 ms of Python enqueue.
  // The loop then processes the previous batch's result and schedules the next (the profile's CPU terms) only after
  // launch_done: the step is enqueue + CPU. The old rule, max(GPU + launches, enqueue, CPU), gave the enqueue alone.
  const auto g = test::gpu("h100-80gb-sxm");
  const auto p = perf::default_profile(g);
  const auto overlap = olw_model("llama-3.2-1b", "h100-80gb-sxm", perf::Runtime::sglang).with_async_scheduling(true);
  REQUIRE(overlap.async_scheduling());
  const auto b = olw_prefill(16);
  const double enqueue = 16 * perf::eager_host::kSglangPerLayerS;
  const double cpu = p.cpu_overhead_per_iter_s + p.cpu_overhead_per_seq_s * 1;
  CHECK(overlap.iteration_time(b) == Approx(enqueue + cpu).epsilon(1e-9));
  CHECK(overlap.iteration_time(b) > 1.1 * enqueue);
  // breakdown() shows the same step: its ops sum to iteration_time's.
  CHECK(overlap.breakdown(b).time_s == Approx(overlap.iteration_time(b)).epsilon(1e-9));
  // The synchronous loop (0.3.5 and earlier, --disable-overlap-schedule) pays the same series, and no more.
  const auto sync = overlap.with_async_scheduling(false);
  CHECK(sync.iteration_time(b) == Approx(overlap.iteration_time(b)).epsilon(1e-6));
}

TEST_CASE("SGLang overlap: graphed decode steps and GPU-bound prefills keep the overlap's price",
          "[overlap_launch_wait]") {
  const auto overlap = olw_model("llama-3.2-1b", "h100-80gb-sxm", perf::Runtime::sglang).with_async_scheduling(true);
  const auto sync = overlap.with_async_scheduling(false);
  // A decode batch of 8 replays its graph: one replay to enqueue, the CPU terms alone on the host, below the
  // eager forward's enqueue time.
  const auto d = test::decode(8, 512);
  CHECK(overlap.iteration_time(d) < 16 * perf::eager_host::kSglangPerLayerS);
  CHECK(overlap.iteration_time(d) < sync.iteration_time(d));
  CHECK(overlap.decode_steps(8).time(8 * 512) == overlap.iteration_time(d));
  // An 8,192-token prefill: the GPU's work outlasts enqueue + CPU, so the overlap hides the CPU terms still.
  const auto big = olw_prefill(8192);
  CHECK(overlap.iteration_time(big) < sync.iteration_time(big));
  // Above cuda_graph_max_bs a decode batch runs eagerly: the same series where the host is the longer.
  const auto limit32 = overlap.with_max_graph_batch(32);
  const auto d33 = test::decode(33, 256);
  const auto p = perf::default_profile(test::gpu("h100-80gb-sxm"));
  CHECK(limit32.iteration_time(d33) ==
        Approx(16 * perf::eager_host::kSglangPerLayerS + p.cpu_overhead_per_iter_s + 33 * p.cpu_overhead_per_seq_s)
            .epsilon(1e-9));
  CHECK(limit32.decode_steps(33).time(33 * 256) == limit32.iteration_time(d33));
}

TEST_CASE("eager_enqueue_s: the Python forward's host time on eager steps of runtimes that price it, else 0",
          "[overlap_launch_wait]") {
  const auto g = test::gpu("h100-80gb-sxm");
  const auto prof = perf::default_profile(g);
  const perf::EngineOverheadModel sg(prof, perf::Runtime::sglang, true, 4, 4);
  CHECK(sg.eager_enqueue_s(512, false, 80) ==
        Approx(80 * (perf::eager_host::kSglangPerLayerS + 2 * perf::eager_host::kEagerAllReduceHostS)));
  CHECK(sg.eager_enqueue_s(64, true, 80) == 0);   // a graphed decode batch (limit 160)
  CHECK(sg.eager_enqueue_s(200, true, 80) > 0);   // above it
  const perf::EngineOverheadModel no_graphs(prof, perf::Runtime::sglang, false, 1, 1);
  CHECK(no_graphs.eager_enqueue_s(8, true, 32) == Approx(32 * perf::eager_host::kSglangPerLayerS));
  const perf::EngineOverheadModel v1(prof, perf::Runtime::vllm_v1, true, 1, 1);
  CHECK(v1.eager_enqueue_s(8192, false, 32) == 0);  // V1's compiled pieces: no per-layer host time priced
  CHECK(perf::overlap_loop_host_s(1e-3, 4e-3) == Approx(5e-3));
}
