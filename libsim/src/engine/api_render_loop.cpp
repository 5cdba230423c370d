// One API server's event loop under the chat render barrier (api_render_loop.hpp).
#include "api_render_loop.hpp"

#include <algorithm>

namespace llmsim::engine::detail {

double ApiRenderLoop::arrive(std::int32_t seq, std::int32_t engine, double now_s, std::int64_t prompt_tokens) {
  // Requests whose render ended by now and whose continuation is still unresolved: no render can come between their
  // end and this arrival any more (an arrival in between would have resolved them), so everything queued before their
  // continuation is the renders queued so far: they run at busy_until_, whose hand-off event is already scheduled. A
  // continuation ready at the very instant of an arrival goes first (its tokeniser's callback was queued first).
  for (auto it = items_.begin() + static_cast<std::ptrdiff_t>(resolved_); it != items_.end(); ++it, ++resolved_) {
    if (it->render_end > now_s) break;  // FIFO: later items end later
    it->handoff = busy_until_;
  }
  const double end = std::max(now_s, busy_until_) + render_s_ + per_token_s_ * static_cast<double>(prompt_tokens);
  busy_until_ = end;
  items_.push_back({seq, engine, end, -1});
  return end;
}

void ApiRenderLoop::due(double now_s, std::vector<std::pair<std::int32_t, std::int32_t>>& out) {
  // The loop ran every render queued before now: every unresolved continuation runs now too.
  const bool drained = busy_until_ <= now_s;
  while (!items_.empty()) {
    const Item& it = items_.front();
    const bool ready = it.handoff >= 0 ? it.handoff <= now_s : drained;
    if (!ready) break;
    out.emplace_back(it.seq, it.engine);
    if (it.handoff >= 0) --resolved_;
    items_.pop_front();
  }
}

std::int32_t ApiRenderLoop::erase(std::int32_t seq) {
  const auto at = std::find_if(items_.begin(), items_.end(), [&](const Item& it) { return it.seq == seq; });
  if (at == items_.end()) return -1;
  const std::int32_t engine = at->engine;
  if (at->handoff >= 0) --resolved_;
  items_.erase(at);  // its render stays spent (busy_until_): the loop ran it before the client gave up
  return engine;
}

}  // namespace llmsim::engine::detail
