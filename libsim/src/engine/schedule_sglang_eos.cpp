// SGLang's admission of requests that ignore EOS with the radix cache off (policy "sglang"; the release rule and its
// source are spec/sglang_admission.hpp): PrefillAdder.add_one_req_ignore_eos, python/sglang/srt/managers/
// schedule_policy.py. Every request's max_new_tokens is its output length (ignore_eos: it runs to it), so the walk
// is exact where the ratio path estimates:
//  * req_states, once per batch: (tokens left, tokens held) = (max_new_tokens - output so far, prompt + output so
//    far) of the candidate, every running request and those this batch took, stable-sorted by tokens left; each
//    later candidate is inserted before the first entry with at least as many left (SGLang's loop leaves it before
//    the last entry when none has: `for i in range(len(...))` ends at len - 1 without a break — kept);
//  * free = available + evictable (0: no radix cache) less this batch's inputs, less the candidate's prompt (0.4.8+:
//    its extend_input_len); at entry i of n (bs = n - i still running) the pool must hold the growth of all bs until
//    it finishes: 0.4.6+ refuses when free + Σ held by the earlier entries - left_i × bs <= 1 × bs; before, when
//    free + Σ held before - left_{i+1} × bs <= 0 (the next entry's tokens left; the last entry its own);
//  * 0.4.6+ first refuses a candidate whose input exceeds min(free less this batch's inputs, rem_total_tokens).
// The running requests' reservation of the ratio path still enters rem_total_tokens (the early exit and
// budget_state) as SGLang's adder computes it for every path. The walk is O(running) per candidate, as SGLang's: it
// runs at admissions only (a refusal marks the batch full until a request finishes), never in a decode step.
#include <algorithm>

#include "replica.hpp"

namespace llmsim::engine::detail {

bool Replica::sglang_eos_admits(const Seq& cand, std::int64_t extend, double cur_rem, double rem_total) {
  const spec::SglangEosAdmission& a = cfg_.sglang_eos;
  if (a.early_exit && static_cast<double>(extend) > std::min(cur_rem, rem_total)) return false;
  const auto state_of = [this](const Seq& s) {
    const std::int64_t gen = s.state == SeqState::decoding ? s.gen_base + (step_ - s.k0) : s.generated;
    return std::pair<std::int64_t, std::int64_t>{s.output - gen, s.input + gen};
  };
  auto& st = sg_.eos_states;
  const auto c = state_of(cand);
  if (!sg_.eos_built) {
    st.clear();
    if (c.first > 0) st.push_back(c);
    const SeqPool& pool = *pool_;
    for (std::int32_t i = head_; i != -1; i = pool[i].next) {
      const auto e = state_of(pool[i]);
      if (e.first > 0) st.push_back(e);
    }
    std::stable_sort(st.begin(), st.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    sg_.eos_built = true;
  } else if (c.first > 0) {
    auto at = std::find_if(st.begin(), st.end(), [&c](const auto& e) { return c.first <= e.first; });
    if (at == st.end() && !st.empty()) --at;  // SGLang's loop variable ends on the last index
    st.insert(at, c);
  }
  const double free = cur_rem - static_cast<double>(a.extend_in_walk ? extend : cand.input);
  const auto n = static_cast<std::int64_t>(st.size());
  double held_before = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto& [left, held] = st[static_cast<std::size_t>(i)];
    const double bs = static_cast<double>(n - i);
    if (a.walk == spec::SglangEosWalk::own_finish) {
      if (free + held_before - static_cast<double>(left) * bs <= static_cast<double>(a.reserve_per_request) * bs)
        return false;
    } else {
      const std::int64_t steps = i + 1 < n ? st[static_cast<std::size_t>(i + 1)].first : left;
      if (free + held_before - static_cast<double>(steps) * bs <= 0) return false;
    }
    held_before += static_cast<double>(held);
  }
  return true;
}

}  // namespace llmsim::engine::detail
