#pragma once
// One API server's event loop under the chat render barrier (perf/chat_render.hpp) or a pre-0.6 vLLM's in-process
// server (perf/inprocess_server.hpp inprocess_front; private to the engine layer). Every request's synchronous front
// part (its chat template's render; the in-process handler's parse and tokenisation: `render_s` seconds plus
// `per_token_s` per prompt token) runs on the loop in arrival order;
// then it awaits the tokeniser, and its continuation, which hands it to the engine, joins the back of the loop's FIFO
// ready queue: it runs once every render queued before its own render ended has run (the continuation itself and the
// tokeniser are taken as instantaneous). So with renders ending at r_k = max(a_k, r_{k-1}) + c, request k reaches the
// engine at the end of the last render of a request that arrived by r_k: a burst of N requests at once reaches it
// together at N·c, an isolated request at a + c, and under overload the continuations interleave with the renders of
// later arrivals instead of waiting for the loop to go idle.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

namespace llmsim::engine::detail {

class ApiRenderLoop {
 public:
  explicit ApiRenderLoop(double render_s, double per_token_s = 0) : render_s_(render_s), per_token_s_(per_token_s) {}
  /// Request `seq` (bound for engine `engine`, `prompt_tokens` long) reaches the API server at `now_s` (non-decreasing
  /// over calls). Returns the time of the hand-off event the caller must schedule (the end of its render: when its
  /// continuation may run).
  double arrive(std::int32_t seq, std::int32_t engine, double now_s, std::int64_t prompt_tokens = 0);
  /// At a hand-off event at `now_s`: the requests whose continuation runs now, FIFO, as (seq, engine), appended to
  /// `out`. A stale event (its render's end moved behind later renders) hands nothing off.
  void due(double now_s, std::vector<std::pair<std::int32_t, std::int32_t>>& out);
  /// Removes request `seq` (its client timed out while it waited on the loop); its engine, or -1 when not here.
  std::int32_t erase(std::int32_t seq);
  /// Calls f(seq, engine) for every request on the loop (the lifecycle's holdings check counts them at their engine).
  template <class F>
  void each(F&& f) const {
    for (const Item& it : items_) f(it.seq, it.engine);
  }
  bool empty() const noexcept { return items_.empty(); }
  std::size_t size() const noexcept { return items_.size(); }

 private:
  struct Item {
    std::int32_t seq, engine;
    double render_end;
    double handoff;  ///< when its continuation runs; < 0 while renders queued before its end may still come
  };
  double render_s_;
  double per_token_s_;
  double busy_until_ = 0;  ///< the end of the last render queued
  std::deque<Item> items_;
  std::size_t resolved_ = 0;  ///< the first items_ whose hand-off is known (they are always the front ones)
};

}  // namespace llmsim::engine::detail
