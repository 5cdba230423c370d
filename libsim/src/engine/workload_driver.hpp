#pragma once
// Where requests come from (private to the engine): one source per open-loop class, one offline source for the
// offline classes, one per closed-loop user, one per trace. The driver draws each request's lengths and shared
// prefix and says when a source's next request arrives; the simulation turns that into arrival events.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "llmsim/core/rng.hpp"
#include "llmsim/engine/workload_source.hpp"
#include "llmsim/metrics/collector.hpp"
#include "llmsim/spec/scenario.hpp"
#include "prompt_pool_driver.hpp"
#include "session_driver.hpp"

namespace llmsim::engine::detail {

/// A request as drawn, before it enters the engine.
struct DrawnRequest {
  std::int32_t tenant = 0;
  std::int64_t input = 0, output = 0;
  std::uint64_t prefix_key = 0;  ///< (tenant class, prefix group); meaningful when prefix_len > 0
  std::int64_t prefix_len = 0;   ///< shared prefix in whole KV blocks (0 = none or prefix caching off)
  /// Block-hash traces (Mooncake) with prefix caching on: the chained hash of the prompt's first j + 1 hash
  /// blocks at chain[j] (KvBlockManager::chain_hash), hash_block_tokens() tokens each; nullptr otherwise.
  const std::uint64_t* chain = nullptr;
  bool clipped = false;          ///< shortened to max_model_len
  /// A prompt pool's request (prefix caching on) carries its blocks' keys the same way (chain_blocks > 0, prompt +
  /// reply), valid until the next draw.
  /// Sessions: the source the turn belongs to (its session's turn source, whose next turn follows this one's end),
  /// its index in the session, and its chain's blocks (prompt + reply; `chain` then points at the driver's buffer of
  /// their cache keys, KvBlockManager::block_key of each block's chained hash and index — not the chained hashes a
  /// trace gives — valid until the session's next draw: the caller copies it). -1 / -1 / 0 otherwise.
  std::int32_t source = -1;
  std::int32_t turn = -1;
  std::int32_t chain_blocks = 0;
  bool session_start = false;    ///< the draw started a new session (its first turn)
  bool too_long = false;         ///< longer than max_model_len under workload.too_long = "reject"
};

class WorkloadDriver {
 public:
  /// Builds the sources of `rs`'s workload. `block_size` and `prefix_caching` decide the shared prefixes'
  /// length in blocks. ConfigError (with the field's path) for invalid workload input, including trace rows
  /// whose scaled times pass kMaxSimulatedSeconds.
  WorkloadDriver(const spec::ResolvedScenario& rs, int block_size, bool prefix_caching);

  /// The fixed sources (open-loop classes, users, a trace, the offline source, the sessions' arrivals). A session's
  /// turns come from source sources() + its slot (session_driver.hpp), created as sessions start.
  std::int32_t sources() const noexcept { return static_cast<std::int32_t>(kinds_.size()); }
  /// A closed-loop user, or a session's turn source: its next request follows its previous one's end (or
  /// rejection) by its think time.
  bool is_user(std::int32_t source) const noexcept {
    return source >= sources() || kinds_[static_cast<std::size_t>(source)] == Kind::user;
  }
  /// The request of `source` ended (completed or not): a session's completed turn joins its history.
  void turn_ended(std::int32_t source, bool completed) {
    if (source >= sources()) sessions_->turn_ended(source - sources(), completed);
  }
  /// The session whose turn source is `source` started with a measured turn (SessionDriver::mark_measured).
  void session_measured(std::int32_t source) {
    if (source >= sources()) sessions_->mark_measured(source - sources());
  }
  /// The session driver (nullptr without workload.sessions).
  const SessionDriver* sessions() const noexcept { return sessions_.get(); }
  /// The classes as the metrics collector sees them.
  std::vector<metrics::ClassInfo> class_infos() const;
  /// When `source` sends first (users and offline sources at 0); nullopt when it never sends.
  std::optional<double> first_time(std::int32_t source);
  /// When `source` sends next after a request at (open loop, trace, offline) or a reply to a user at `now_s`;
  /// nullopt when it has no more requests (end of trace, schedule at rate 0, or past kMaxSimulatedSeconds).
  std::optional<double> next_time(std::int32_t source, double now_s);
  /// Prompt tokens per block hash of a trace that carries them (DrawnRequest::chain), else 0.
  /// Rows of the replayed trace (0 without one): the arrivals a trace can issue.
  std::int64_t replay_rows() const noexcept { return static_cast<std::int64_t>(trace_.rows.size()); }
  int hash_block_tokens() const noexcept {
    if (sessions_) return sessions_->block_size();
    if (prompt_pool_ && prefix_caching_) return block_size_;  // one key per engine block, as a session turn's
    return chain_.empty() ? 0 : trace_.hash_block_tokens;
  }
  /// The replayed trace (empty rows without one) and a row's chained hashes (nullptr when it has none): what a warm
  /// cache is filled with (warm_cache_fill.hpp).
  const Trace& trace() const noexcept { return trace_; }
  const std::uint64_t* row_chain(const TraceRow& row) const noexcept {
    return chain_.empty() || row.hash_count == 0 ? nullptr : chain_.data() + row.hash_begin;
  }
  /// Draws the next request of `source` (advances its random streams or its trace row).
  DrawnRequest draw(std::int32_t source);

 private:
  enum class Kind : std::uint8_t { open, offline, user, trace };
  struct Tenant {
    std::unique_ptr<LengthSampler> input, output;
    std::unique_ptr<spec::DatasetLengths> dataset;  ///< workload.dataset: both lengths drawn together
    RandomEngine input_rng, output_rng, prefix_rng;
    std::int32_t prefix_groups = 0;
    std::int64_t prefix_blocks = 0;
    double think_s = 0;
  };
  struct Open {
    std::unique_ptr<ArrivalSampler> sampler;
    RandomEngine rng;
  };
  std::optional<double> checked(double t) const;
  std::optional<double> checked_or_end(std::int32_t source, std::optional<double> t);
  DrawnRequest draw_session_turn(std::int32_t slot);
  std::int32_t offline_pick();
  /// A request of adapter `adapter` (LoRA with several adapters): its cache keys moved into that adapter's own
  /// space, as vLLM's block hash carries the request's LoRA in its extra keys.
  void key_by_adapter(DrawnRequest& r, std::int64_t adapter);

  const spec::ResolvedScenario* rs_;
  std::vector<spec::TenantClass> classes_;
  std::vector<Tenant> tenants_;
  std::vector<Kind> kinds_;               ///< per source
  std::vector<std::int32_t> tenant_of_;   ///< per source (users: their class)
  std::vector<Open> open_;                ///< per open-loop source, indexed by open_index_
  std::vector<std::int32_t> open_index_;  ///< per source: index into open_ (-1 otherwise)
  /// Per closed-loop user (a source of Kind::user), when its client starts (ClosedLoop::start_offsets_s); empty
  /// when no loop names offsets: every user then starts at t = 0.
  std::vector<double> user_start_s_;
  Trace trace_;
  std::vector<std::uint64_t> chain_;  ///< trace_.hash_ids chained (prefix caching on), per row as hash_ids
  std::size_t next_row_ = 0;
  double time_scale_ = 1;
  // Offline classes interleave by weight (smooth weighted round robin): credit += weight, pick the largest.
  std::vector<std::int32_t> offline_tenants_;
  std::vector<double> offline_weight_, offline_credit_;
  std::int32_t offline_next_ = -1;  ///< tenant of the next offline request
  std::unique_ptr<SessionDriver> sessions_;  ///< workload.sessions: source 0 starts sessions
  std::unique_ptr<PromptPoolDriver> prompt_pool_;  ///< workload.prompt_pool: which prompt each request sends
  int block_size_ = 0;
  bool prefix_caching_ = false;
  /// LoRA adapters the requests name (workload.lora_adapters with engine.enable_lora and prefix caching on; 1 =
  /// nothing to key). The requests spread over them in turn: request n (a trace's row n) uses adapter n mod adapters_,
  /// a session every turn its first's.
  std::int64_t adapters_ = 1;
  std::int64_t drawn_ = 0;                      ///< requests drawn outside sessions and traces (their adapter)
  std::vector<std::int64_t> session_adapter_;   ///< per session slot
  std::vector<std::uint64_t> adapter_keys_;     ///< a session turn's or pool prompt's keys in its adapter's space
};

/// The salt of LoRA adapter `adapter`'s cache keys (WorkloadDriver::key_by_adapter): distinct per adapter.
std::uint64_t lora_key_salt(std::int64_t adapter);

}  // namespace llmsim::engine::detail
