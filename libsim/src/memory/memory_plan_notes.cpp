// A memory plan in words and JSON (llmsim/memory/memory_plan.hpp): the notes on its context length (auto, and the
// vLLM releases that would refuse it) and on its KV capacity under sliding-window layers, and to_json. The plan itself
// is memory_plan.cpp's.
#include <optional>
#include <string>

#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::memory {

namespace {
std::string grouped(std::int64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > (n < 0 ? 1 : 0); i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}
}  // namespace

namespace {
// What a vLLM release without --max-model-len auto does with it, and the number that plans the same context there.
std::string refused_auto(const std::string& version, int fitted, bool fits) {
  return "; vLLM " + version + " has no --max-model-len auto (from " + spec::kMaxModelLenAutoSince +
         ") and would refuse it" + (fits ? ": pass --max-model-len " + std::to_string(fitted) : "");
}
}  // namespace

std::string context_note(const MemoryPlan& plan) {
  if (!plan.max_model_len_auto) return "";
  const std::string refused =
      plan.auto_context_refused_by.empty() ? "" : refused_auto(plan.auto_context_refused_by, plan.max_model_len, plan.fits);
  if (!plan.fits) return "auto" + refused;
  if (plan.max_model_len < plan.max_model_len_wanted)
    return "auto: the model's " + grouped(plan.max_model_len_wanted) + " does not fit" + refused;
  return "auto: the model's limit" + refused;
}

std::string context_note(const spec::ResolvedScenario& rs) {
  if (!rs.max_model_len_auto) return "";
  const auto& e = rs.scenario.engine;
  const std::optional<std::string> old =
      e.max_model_len == spec::kMaxModelLenAuto ? spec::vllm_release_without_auto_context(e.runtime_release) : std::nullopt;
  const std::string refused = old ? refused_auto(*old, rs.max_model_len, true) : "";
  if (rs.max_model_len < rs.max_model_len_wanted)
    return "auto: the model's " + grouped(rs.max_model_len_wanted) + " does not fit" + refused;
  return "auto: the model's limit" + refused;
}

std::string kv_capacity_note(const MemoryPlan& plan) {
  if (plan.kv_sliding_window <= 0 || plan.kv_cache_groups <= 1) return "";
  return "tokens at every layer's per-token cost (vLLM's \"GPU KV cache size\"); the sliding-window layers keep only "
         "their last " + grouped(plan.kv_sliding_window) + " tokens, so vLLM holds a longer sequence in less (" +
         (plan.kv_sliding_groups > 0 ? "the simulation frees a decoder's blocks past the window as vLLM V1 does"
                                     : "the simulation charges every layer for every token") +
         "): max_concurrent_seqs and concurrent_seqs_at count that way";
}

std::string describe_context(int max_model_len, const std::string& note) {
  return "max_model_len " + grouped(max_model_len) + (note.empty() ? "" : " (" + note + ")");
}

std::string describe_context(const MemoryPlan& plan) { return describe_context(plan.max_model_len, context_note(plan)); }

Json to_json(const MemoryPlan& plan) {
  const auto& g = plan.per_gpu;
  Json at = Json::array();
  for (const auto& [tokens, seqs] : plan.concurrent_seqs_at) at.push_back({{"tokens", tokens}, {"seqs", seqs}});
  return Json{{"fits", plan.fits},
              {"reason", plan.reason},
              {"params", plan.params},
              {"kv_bytes_per_token", plan.kv_bytes_per_token},
              {"kv_bytes_per_token_per_gpu", plan.kv_bytes_per_token_per_gpu},
              {"kv_capacity_tokens", plan.kv_capacity_tokens},
              {"kv_capacity_blocks", plan.kv_capacity_blocks},
              {"kv_capacity_note", kv_capacity_note(plan)},
              {"max_concurrent_seqs", plan.max_concurrent_seqs},
              {"concurrent_seqs_at", at},
              {"longest_context_tokens", plan.longest_context_tokens},
              {"kv_sliding_window", plan.kv_sliding_window},
              {"kv_cache_groups", plan.kv_cache_groups},
              {"max_model_len", plan.max_model_len},
              {"max_model_len_note", context_note(plan)},
              {"per_gpu",
               {{"total_bytes", g.total_bytes},
                {"weights_bytes", g.weights_bytes},
                {"offloaded_weights_bytes", g.offloaded_weights_bytes},
                {"kv_cache_bytes", g.kv_cache_bytes},
                {"activation_bytes", g.activation_bytes},
                {"runtime_bytes", g.runtime_bytes},
                {"comm_buffer_bytes", g.comm_buffer_bytes},
                {"cuda_context_bytes", g.cuda_context_bytes},
                {"cuda_graph_bytes", g.cuda_graph_bytes},
                {"non_torch_bytes", g.non_torch_bytes},
                {"requested_bytes", g.requested_bytes},
                {"free_bytes", g.free_bytes},
                {"proposer_weights_bytes", g.proposer_weights_bytes},
                {"linear_state_bytes", g.linear_state_bytes},
                {"lora_bytes", g.lora_bytes},
                {"mla_absorbed_weights_bytes", g.mla_absorbed_weights_bytes}}},
              {"kv_mla_entries_aligned", plan.kv_mla_entries_aligned},
              {"linear_state_bytes_per_seq_per_gpu", plan.linear_state_bytes_per_seq_per_gpu},
              {"linear_state_blocks_per_seq", plan.linear_state_blocks_per_seq},
              {"linear_state_seqs_fit", plan.linear_state_seqs_fit},
              {"mamba_cache_blocks", plan.mamba_cache_blocks},
              {"linear_state_slots", plan.linear_state_slots},
              {"linear_state_memory_ratio", plan.linear_state_memory_ratio},
              {"max_running_requests", plan.max_running_requests},
              {"proposer_kv_bytes_per_token_per_gpu", plan.proposer_kv_bytes_per_token_per_gpu}};
}

}  // namespace llmsim::memory
