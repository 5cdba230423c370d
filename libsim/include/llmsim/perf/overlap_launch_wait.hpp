#pragma once
// SGLang's overlap scheduler processes a batch's result only after the NEXT batch's forward has been enqueued
// (issues 27/28; docs/cost-model.md "The overlap loop waits for the launch"). Read in SGLang's code:
//  * 0.4.x to 0.5.3 (managers/tp_worker_overlap_thread.py, read in a Dec-2024 copy that carries
//    update_weights_from_distributed, and in later copies): the forward thread creates `launch_done` for each batch
//    it takes and TpModelWorker.forward_batch_generation sets it once model_runner.forward has returned, i.e. once the
//    whole forward is enqueued, before sampling; Scheduler.event_loop_overlap hands batch k + 1 to that thread and
//    then calls process_batch_result(batch k), whose resolve_batch_result waits copy_done(k) and then
//    `self.launch_done.wait()` — batch k + 1's. sglang#5788 (2025-04) kept both waits (the event moved onto the
//    batch); sglang#10514 (2025-09, H20) measured that wait at 14 ms on average when batch k's copy finishes first,
//    and sglang#10601 (proposing to swap the waits) was closed unmerged.
//  * 0.5.4 on (sglang#11210, 2025-10-04, "Remove overlap thread"): the scheduler thread itself launches batch k + 1 on
//    the forward stream and then processes batch k's result: the same order on one thread.
// So on the host the scheduler's per-step work (result processing, the next batch's scheduling and preparation:
// the runtime's CPU terms, EngineOverheadModel::cpu_s) runs AFTER the step's forward is enqueued, not beside it.
// A graphed step's enqueue is one replay; an eager step's (a prefill, a decode batch above cuda_graph_max_bs, any
// step with --disable-cuda-graph) is the Python forward, eager_forward_host_s (perf/eager_host.hpp). Under the
// overlap loop the step therefore costs max(the GPU's work, enqueue + CPU terms), not max(GPU, enqueue, CPU terms).
// Not priced here: when batch k's tokens reach the client (after batch k + 1's enqueue, the same wait), which moves
// token timestamps but not the step.
#include "llmsim/perf/eager_host.hpp"

namespace llmsim::perf {

/// The host's time per step under an overlapped loop (SGLang's overlap scheduler, vLLM V1's async scheduling):
/// the loop's CPU work `cpu_s` after the step's eager forward enqueue `eager_enqueue_s` (0 for a graphed step, or a
/// runtime whose eager host time is not priced), in series.
inline double overlap_loop_host_s(double cpu_s, double eager_enqueue_s) { return cpu_s + eager_enqueue_s; }

}  // namespace llmsim::perf
