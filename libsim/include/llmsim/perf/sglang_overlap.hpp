#pragma once
// SGLang's overlap scheduler (docs/cost-model.md "Async scheduling"; sglang#1738, on by default since sglang#2067):
// whether a scenario's engine runs it, read from SGLang's code. Scheduler.event_loop_overlap
// (python/sglang/srt/managers/scheduler.py, 0.3.6-0.5.x) receives requests, forms batch k + 1 and hands it to the
// forward thread (managers/tp_worker_overlap_thread.py: future token ids stand in for batch k's, resolved on the
// GPU) before it processes batch k's result, which waits for batch k's GPU work. So:
//  (a) the step: scheduling, batch preparation and batch k's result processing run on the CPU while the GPU runs
//      batch k; a step costs max(GPU work, host time), not their sum — the same pricing as vLLM V1's async
//      scheduling (perf::CostModel::with_async_scheduling);
//  (b) admission: batch k + 1 is formed from the requests received when batch k starts (the loop's recv_requests
//      runs after batch k - 1's result), so a request that arrives while batch k runs joins batch k + 2, unless the
//      engine was idle (engine: ReplicaConfig::async_scheduling);
//  (c) outputs: batch k's tokens are streamed when its result is processed, as batch k ends.
// Not modelled: the short delay of a prefill batch's first token while batch k + 1 is launched first (sglang#2067:
// "we delayed the processing of the first batch in favor of launching the kernels for the next batch first").
#include <optional>

#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/speculative.hpp"

namespace llmsim::perf {

/// Whether an engine of runtime `sglang` with SGLang's scheduler (policy "sglang") runs the overlap scheduler:
/// engine.async_scheduling when set (false = `--disable-overlap-schedule`, true = 0.3.x's `--enable-overlap-schedule`),
/// else the release's default (spec::sglang_overlap_by_default: 0.3.6 and later, and the unversioned runtime). Off,
/// as server_args.py turns it off, with pipeline parallel (`pp` > 1: "Pipeline parallelism is incompatible with
/// overlap schedule") and with speculative decoding (EAGLE: "Overlap scheduler is disabled because of using eagle
/// speculative decoding"); asked for there, a ConfigError at "engine.async_scheduling".
bool sglang_overlap(const spec::EngineConfig& engine, int pp,
                    const std::optional<spec::SpeculativeConfig>& speculative);

}  // namespace llmsim::perf
