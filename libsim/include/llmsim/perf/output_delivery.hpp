#pragma once
// When vLLM V0 (0.6-0.10) hands a step's outputs to the caller (issue 27; docs/cost-model.md "Runtimes"). Under the
// asynchronous output processor (perf::first_token_after_next_step) step k's sampled tokens are turned into
// RequestOutputs by _process_model_outputs, which LLMEngine passes to the worker as step k + 1's async_callback; the
// model runner calls it right after launching step k + 1's forward and compute_logits and before its sampler waits
// for the GPU (worker/model_runner.py, ModelRunner.execute_model), and behind `vllm serve` the same callback sends
// the outputs to the API server (MQLLMEngine._async_socket_engine_callback -> _send_outputs, "make socket handling
// async with GPU"). So step k's tokens leave when step k + 1 has been launched — its host part after step k ended —
// not when step k + 1 ends, and not when step k ends.
#include <cstdint>

#include "llmsim/perf/cost_model.hpp"

namespace llmsim::perf {

/// Seconds from the start of a V0 step of `seqs` sequences to the moment it sends the previous step's outputs: the
/// host-to-GPU KV copies the worker makes before the forward (`transfer_s`: swaps, host-tier loads) and the step's
/// serialized host time (CostModel::host_time: scheduling, input preparation, served-step work), all of which llmsim
/// places before the launch. Not priced: the time the callback itself takes before the send (detokenising and
/// pickling the batch's outputs; the served-step term is charged as host time instead) and the enqueue time of an
/// eager (prefill) forward. seqs >= 0, transfer_s >= 0; O(1).
double outputs_sent_after_s(const CostModel& cost, std::int64_t seqs, double transfer_s);

}  // namespace llmsim::perf
