// SGLang's ignore_eos admission by release (llmsim/spec/sglang_admission.hpp), read from schedule_policy.py:
//  * 0.3.x trees (new_inflight_req) through a 2025 tree with token_to_kv_pool_allocator and no page size: the walk
//    charges entry i with the next entry's tokens left, `cur_rem_tokens + tokens_freed - decode_steps * bs <= 0`,
//    the candidate's len(origin_input_ids) taken off first, no early exit;
//  * the 0.4.7 tree (is_hybrid SWA, page size, before sglang#7434): `min_free_tokens = cur_rem_tokens +
//    tokens_freed - tokens_left * bs`, refused at `<= IGNORE_EOS_RESERVE_TOKENS * bs` (1), after the early exit on
//    the candidate's paged input; the release that changed it is not pinned down (between those two trees): 0.4.6 is
//    taken, so 0.4.5.x keeps the older walk;
//  * sglang#7434 (2025-06, "resolve prefill of retracted request out-of-memory issue when ignore_eos is enabled"):
//    the candidate's extend_input_len instead of its original prompt, taken as 0.4.8+.
// The same function through 0.5.x (the 0.5.x trees add only hybrid-SWA/Mamba branches llmsim does not model).
#include "llmsim/spec/sglang_admission.hpp"

#include <cctype>
#include <string>
#include <vector>

#include "sglang_release.hpp"

namespace llmsim::spec {

SglangEosAdmission sglang_eos_admission(const EngineConfig& engine, const Workload& workload) {
  SglangEosAdmission a;
  if (engine.policy != SchedulerPolicy::sglang || engine.prefix_caching() || !workload.ignore_eos) return a;
  const detail::SglangRelease r = detail::sglang_release(engine.runtime_release);
  if (r.known && !r.at_least(0, 4, 6)) {
    a.walk = SglangEosWalk::next_finish;
    return a;
  }
  a.walk = SglangEosWalk::own_finish;
  a.early_exit = true;
  a.reserve_per_request = sglang::kIgnoreEosReserveTokens;
  a.extend_in_walk = !r.known || r.at_least(0, 4, 8);
  return a;
}

std::optional<bool> client_ignores_eos(std::string_view command_line) {
  std::vector<std::string> words;
  std::string w;
  for (char c : command_line) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!w.empty()) words.push_back(w);
      w.clear();
    } else {
      w += c;
    }
  }
  if (!w.empty()) words.push_back(w);
  auto ends_with = [](const std::string& s, std::string_view tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  auto has = [&](std::string_view flag) {
    for (const auto& x : words)
      if (x == flag || x.rfind(std::string(flag) + "=", 0) == 0) return true;
    return false;
  };
  bool sglang = false, vllm = false;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& x = words[i];
    if (ends_with(x, "sglang.bench_serving") || (ends_with(x, "bench_serving.py") && !ends_with(x, "benchmark_serving.py")))
      sglang = true;
    else if (ends_with(x, "benchmark_serving.py") || ends_with(x, "vllm.benchmarks.serve"))
      vllm = true;
    else if ((x == "vllm" || ends_with(x, "/vllm")) && i + 2 < words.size() && words[i + 1] == "bench" &&
             words[i + 2] == "serve")
      vllm = true;
  }
  if (sglang) return !has("--disable-ignore-eos");
  if (vllm) return has("--ignore-eos");
  return std::nullopt;
}

}  // namespace llmsim::spec
