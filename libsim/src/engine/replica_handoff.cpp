// A replica's side of disaggregated prefill/decode (docs/disaggregation.md): a prefill replica holding a handed-off
// request's KV until the transfer ends, and (pull, vLLM's NixlConnector) a decode replica allocating blocks for a
// request's KV before reading it.
#include "llmsim/core/error.hpp"
#include "replica.hpp"
#include "request_lifecycle.hpp"

namespace llmsim::engine::detail {

void Replica::release_handoff(std::int32_t i, double now_s) {
  Seq& s = (*pool_)[i];
  LLMSIM_CHECK(s.state == SeqState::handoff, "releasing the KV of a request that was not handed off");
  release_blocks(s);
  transition(s, SeqState::waiting);
  kv_used_.set(now_s, static_cast<double>(kv_.held()));
}

HeldKv Replica::detach_handoff(std::int32_t i) {
  Seq& s = (*pool_)[i];
  LLMSIM_CHECK(s.state == SeqState::handoff, "detaching the KV of a request that was not handed off");
  const HeldKv held{s.own_blocks, s.prefix_blocks};
  s.own_blocks = 0;
  s.prefix_blocks = 0;
  return held;
}

void Replica::release_held(std::int32_t i, const HeldKv& held, double now_s) {
  Seq& s = (*pool_)[i];
  kv_.release(held.own);
  // The shared prefix blocks are named by the request's keys (chain or prefix_key) and this replica's count; the
  // decode replica references none of its own while the read is in flight (cached_tokens counts the remote KV).
  const std::int64_t decode_prefix = s.prefix_blocks;
  s.prefix_blocks = held.prefix;
  release_shared(s);
  s.prefix_blocks = decode_prefix;
  kv_used_.set(now_s, static_cast<double>(kv_.held()));
}

bool Replica::start_pull(std::int32_t i, double now_s) {
  Seq& s = (*pool_)[i];
  // vLLM's scheduler allocates slots for the external tokens alone (num_new_tokens = 0 while loading) and parks the
  // request in WAITING_FOR_REMOTE_KVS, outside the running set and the token budget.
  const std::int64_t blocks = kv_.blocks_for(s.remote_tokens);
  if (!kv_.can_admit(blocks)) return false;
  kv_.allocate(blocks);
  s.own_blocks = blocks;
  s.kv_pending = false;
  transition(s, SeqState::receiving);
  s.decode_admitted_s = now_s;
  pulls_.push_back(i);
  return true;
}

void Replica::drop_received(std::int32_t i, double now_s) {
  Seq& s = (*pool_)[i];
  LLMSIM_CHECK(s.state == SeqState::receiving && s.timed_out, "dropping a KV read of a request that is still wanted");
  kv_.release(s.own_blocks);
  s.own_blocks = 0;
  leave_engine(s, SeqState::waiting, *outstanding_);  // out of the read; the caller ends it (done, slot released)
  kv_used_.set(now_s, static_cast<double>(kv_.held()));
}

void Replica::kv_received(std::int32_t i) {
  Seq& s = (*pool_)[i];
  LLMSIM_CHECK(s.state == SeqState::receiving, "a KV read ended for a request that was not reading one");
  // vLLM puts the requests it skipped while they read back at the head of the waiting queue.
  transition(s, SeqState::waiting);
  waiting_.push_front(i);
}

}  // namespace llmsim::engine::detail
