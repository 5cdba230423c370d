#include "workload_driver.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <boost/random/uniform_int_distribution.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/engine/kv_block_manager.hpp"
#include "warm_cache_fill.hpp"

namespace llmsim::engine::detail {

std::uint64_t lora_key_salt(std::int64_t adapter) {
  return KvBlockManager::chain_hash(0x4C6F5241'64617074ULL, static_cast<std::uint64_t>(adapter) + 1);  // "LoRAdapt"
}

WorkloadDriver::WorkloadDriver(const spec::ResolvedScenario& rs, int block_size, bool prefix_caching)
    : rs_(&rs), block_size_(block_size), prefix_caching_(prefix_caching) {
  const auto& w = rs.scenario.workload;
  // vLLM keys a cached block by the request's adapter too (vllm/v1/core/kv_cache_utils.py: the LoRA name is one of
  // the block hash's extra keys, _gen_lora_extra_hash_keys): a prefix cached under adapter A is no hit for B.
  if (prefix_caching && rs.scenario.engine.enable_lora) adapters_ = std::max(1, w.lora_adapters.value_or(1));
  w.validate("workload");  // also run by resolve(); repeated here for scenarios changed after it (at_load)
  classes_ = w.effective_classes();
  const bool multi = !w.classes.empty();
  const std::int64_t max_len = rs.max_model_len > 0 ? rs.max_model_len : 0;
  for (std::size_t c = 0; c < classes_.size(); ++c) {
    const auto& tc = classes_[c];
    const std::string cpath = multi ? "workload.classes[" + std::to_string(c) + "]" : "workload";
    const auto ci = static_cast<std::uint64_t>(c);
    const auto tenant = static_cast<std::int32_t>(c);
    Tenant t;
    t.input = std::make_unique<LengthSampler>(tc.input_tokens, cpath + ".input_tokens", max_len);
    t.output = std::make_unique<LengthSampler>(tc.output_tokens, cpath + ".output_tokens", max_len);
    if (tc.dataset) t.dataset = std::make_unique<spec::DatasetLengths>(*tc.dataset, cpath + ".dataset");
    t.input_rng = rng_stream(w.seed, "input_tokens", ci);
    t.output_rng = rng_stream(w.seed, "output_tokens", ci);
    t.prefix_rng = rng_stream(w.seed, "prefix", ci);
    // Groups are drawn per request and get their cache entry on first use: nothing is allocated per group.
    if (prefix_caching && tc.prefix_groups > 0 && tc.prefix_tokens / block_size > 0) {
      t.prefix_groups = tc.prefix_groups;
      t.prefix_blocks = tc.prefix_tokens / block_size;
    }
    const std::string apath = cpath + ".arrival";
    if (const auto* cl = std::get_if<spec::ClosedLoop>(&tc.arrival)) {
      t.think_s = cl->think_time_s;
      const auto groups = static_cast<std::int64_t>(cl->start_offsets_s.size());
      for (int u = 0; u < cl->concurrency; ++u) {
        // User u of N belongs to client u·G/N: G clients of N/G users each (sizes differ by at most one).
        if (groups > 0 || !user_start_s_.empty()) {
          user_start_s_.resize(kinds_.size(), 0.0);
          user_start_s_.push_back(groups > 0 ? cl->start_offsets_s[static_cast<std::size_t>(u * groups / cl->concurrency)]
                                             : 0.0);
        }
        kinds_.push_back(Kind::user);
        tenant_of_.push_back(tenant);
        open_index_.push_back(-1);
      }
    } else if (const auto* tr = std::get_if<spec::TraceReplay>(&tc.arrival)) {
      // Requests given inline (a vLLM result's per-request lengths) replay with no file to read.
      if (tr->requests.empty()) trace_ = load_trace(*tr, apath);
      else trace_.rows = trace_rows(tr->requests);
      time_scale_ = tr->time_scale;
      // A warm cache (workload.warm_cache) needs each prompt's identity: a trace without hashes gets one per block.
      if (w.warm_cache && prefix_caching && trace_.hash_ids.empty()) give_prompt_hashes(trace_, block_size);
      if (!trace_.hash_ids.empty() && prefix_caching) {
        if (tc.prefix_groups > 0)
          throw ConfigError(cpath + ".prefix_groups", "the trace's hash_ids set each request's shared prefix; "
                                                      "prefix_groups must be 0, got " + std::to_string(tc.prefix_groups));
        t.prefix_groups = 0;
        // Each row's ids chained as vLLM chains block hashes: a block's key names its whole prefix.
        chain_.resize(trace_.hash_ids.size());
        for (std::size_t n = 0; n < trace_.rows.size(); ++n) {
          const auto& row = trace_.rows[n];
          // Row n's adapter (n mod adapters) starts its chain: every block key is then that adapter's own.
          std::uint64_t h = adapters_ > 1 ? lora_key_salt(static_cast<std::int64_t>(n) % adapters_) : 0;
          for (std::int64_t k = row.hash_begin; k < row.hash_begin + row.hash_count; ++k)
            chain_[static_cast<std::size_t>(k)] = h = KvBlockManager::chain_hash(h, trace_.hash_ids[static_cast<std::size_t>(k)]);
        }
      }
      const double last = trace_.rows.back().arrival_s / time_scale_;
      if (!(last <= spec::kMaxSimulatedSeconds)) {
        throw ConfigError(apath + ".time_scale",
                          "the trace's last arrival at " + format_value(trace_.rows.back().arrival_s) + " s / time_scale " +
                              format_value(time_scale_) + " = " + format_value(last) +
                              " s lies beyond the 1e9 s the clock resolves to 0.2 µs: raise time_scale");
      }
      kinds_.push_back(Kind::trace);
      tenant_of_.push_back(tenant);
      open_index_.push_back(-1);
    } else if (const auto* off = std::get_if<spec::OfflineArrivals>(&tc.arrival)) {
      if (offline_tenants_.empty()) {  // one source serves every offline class
        kinds_.push_back(Kind::offline);
        tenant_of_.push_back(tenant);
        open_index_.push_back(-1);
      }
      offline_tenants_.push_back(tenant);
      offline_weight_.push_back(off->weight);
      offline_credit_.push_back(0);
    } else {
      Open o;
      o.sampler = std::make_unique<ArrivalSampler>(tc.arrival, apath);
      o.rng = rng_stream(w.seed, "arrivals", ci);
      kinds_.push_back(Kind::open);
      tenant_of_.push_back(tenant);
      open_index_.push_back(static_cast<std::int32_t>(open_.size()));
      open_.push_back(std::move(o));
    }
    tenants_.push_back(std::move(t));
  }
  if (w.prompt_pool) {
    if (!trace_.hash_ids.empty())
      throw ConfigError("workload.prompt_pool", "the trace's hash_ids already say which blocks each request shares; "
                                                "remove prompt_pool or replay a trace without them");
    prompt_pool_ = std::make_unique<PromptPoolDriver>(*w.prompt_pool, w.seed, block_size);
  }
  if (w.sessions)  // the one class's arrival source starts sessions; hashing per engine block
    sessions_ = std::make_unique<SessionDriver>(*w.sessions, w.seed, max_len, w.too_long, block_size, prefix_caching);
}

std::vector<metrics::ClassInfo> WorkloadDriver::class_infos() const {
  std::vector<metrics::ClassInfo> out;
  for (const auto& c : classes_) out.push_back(metrics::ClassInfo{c.name, c.slo ? *c.slo : rs_->scenario.slo});
  return out;
}

std::optional<double> WorkloadDriver::checked(double t) const {
  // Past the clock's precise range a source is done (validation keeps expected spans far inside it).
  if (!(t <= spec::kMaxSimulatedSeconds)) return std::nullopt;
  return t;
}

std::optional<double> WorkloadDriver::first_time(std::int32_t si) {
  switch (kinds_[static_cast<std::size_t>(si)]) {
    case Kind::user:
      return static_cast<std::size_t>(si) < user_start_s_.size() ? user_start_s_[static_cast<std::size_t>(si)] : 0.0;
    case Kind::offline: return 0.0;
    default: return next_time(si, 0.0);
  }
}

std::optional<double> WorkloadDriver::next_time(std::int32_t si, double now_s) {
  if (si >= sources()) return checked_or_end(si, sessions_->next_turn_time(si - sources(), now_s));
  const auto s = static_cast<std::size_t>(si);
  switch (kinds_[s]) {
    case Kind::open: {
      Open& o = open_[static_cast<std::size_t>(open_index_[s])];
      return checked(o.sampler->next(now_s, o.rng));
    }
    case Kind::offline: return now_s;  // the next one at the same instant (a later sequence number)
    case Kind::user: return checked(now_s + tenants_[static_cast<std::size_t>(tenant_of_[s])].think_s);
    case Kind::trace:
      if (next_row_ >= trace_.rows.size()) return std::nullopt;
      return std::max(now_s, trace_.rows[next_row_].arrival_s / time_scale_);
  }
  return std::nullopt;
}

std::int32_t WorkloadDriver::offline_pick() {
  // Smooth weighted round robin: deterministic, and any prefix of the sequence follows the weights closely.
  double total = 0;
  std::size_t best = 0;
  for (std::size_t k = 0; k < offline_tenants_.size(); ++k) {
    offline_credit_[k] += offline_weight_[k];
    total += offline_weight_[k];
    if (offline_credit_[k] > offline_credit_[best]) best = k;
  }
  offline_credit_[best] -= total;
  return offline_tenants_[best];
}

std::optional<double> WorkloadDriver::checked_or_end(std::int32_t si, std::optional<double> t) {
  // A session whose next turn lies past the clock's range ends there (its slot is not kept for a turn never drawn).
  if (t && !checked(*t)) {
    sessions_->end(si - sources());
    return std::nullopt;
  }
  return t;
}

DrawnRequest WorkloadDriver::draw_session_turn(std::int32_t slot) {
  DrawnRequest r;
  const SessionTurnDraw d = sessions_->draw_turn(slot);
  r.tenant = 0;
  r.input = d.input;
  r.output = d.output;
  r.clipped = d.clipped;
  r.too_long = d.too_long;
  r.source = sources() + slot;
  r.turn = d.turn;
  if (d.keys && !d.keys->empty()) {
    r.chain = d.keys->data();
    r.chain_blocks = static_cast<std::int32_t>(d.keys->size());
  }
  if (adapters_ > 1) {  // a conversation keeps its first turn's adapter
    const auto s = static_cast<std::size_t>(slot);
    if (session_adapter_.size() <= s) session_adapter_.resize(s + 1, 0);
    if (d.turn == 0) session_adapter_[s] = (sessions_->started() - 1) % adapters_;
    key_by_adapter(r, session_adapter_[s]);
  }
  return r;
}

void WorkloadDriver::key_by_adapter(DrawnRequest& r, std::int64_t adapter) {
  const std::uint64_t salt = lora_key_salt(adapter);
  if (r.prefix_len > 0) r.prefix_key = KvBlockManager::chain_hash(r.prefix_key, salt);
  if (r.chain_blocks > 0) {  // per-block keys (a session turn, a pool prompt): copied, each moved by the salt
    adapter_keys_.assign(r.chain, r.chain + r.chain_blocks);
    for (auto& k : adapter_keys_) k = KvBlockManager::chain_hash(k, salt);
    r.chain = adapter_keys_.data();
  }
  // A trace's chained hashes were seeded with its row's adapter when they were chained (the constructor).
}

DrawnRequest WorkloadDriver::draw(std::int32_t si) {
  if (si >= sources()) return draw_session_turn(si - sources());
  if (sessions_) {  // the arrival source: a new session and its first turn
    DrawnRequest r = draw_session_turn(sessions_->start());
    r.session_start = true;
    return r;
  }
  const auto s = static_cast<std::size_t>(si);
  DrawnRequest r;
  r.tenant = kinds_[s] == Kind::offline ? offline_pick() : tenant_of_[s];
  Tenant& t = tenants_[static_cast<std::size_t>(r.tenant)];
  std::int64_t adapter = 0;
  if (kinds_[s] == Kind::trace) {
    if (adapters_ > 1) adapter = static_cast<std::int64_t>(next_row_) % adapters_;
    const auto& row = trace_.rows[next_row_++];
    r.input = row.input_tokens;
    r.output = row.output_tokens;
    if (!chain_.empty() && row.hash_count > 0) r.chain = chain_.data() + row.hash_begin;
  } else if (t.dataset) {  // prompt and output drawn together (spec/dataset_lengths.hpp)
    std::tie(r.input, r.output) = t.dataset->sample(t.input_rng);
  } else {
    r.input = t.input->sample(t.input_rng);
    r.output = t.output->sample(t.output_rng);
  }
  if (adapters_ > 1 && kinds_[s] != Kind::trace) adapter = drawn_++ % adapters_;  // no division on the common path
  if (t.prefix_groups > 0) {
    const auto g = boost::random::uniform_int_distribution<std::int64_t>(0, t.prefix_groups - 1)(t.prefix_rng);
    r.prefix_key = (static_cast<std::uint64_t>(r.tenant) << 32) | static_cast<std::uint64_t>(g);
    r.prefix_len = t.prefix_blocks;
  }
  // Lengths beyond the model's context are clipped (input first) or, under too_long = "reject", refused.
  const std::int64_t max_len = rs_->max_model_len;
  if (max_len > 0 && r.input + r.output > max_len) {
    if (rs_->scenario.workload.too_long == spec::TooLongPolicy::reject) {
      r.too_long = true;
    } else {
      r.input = std::min(r.input, max_len - 1);
      r.output = std::min(r.output, max_len - r.input);
      r.clipped = true;
    }
  }
  if (prompt_pool_) {  // the pool's next prompt: its blocks' keys (the lengths as drawn and clipped)
    const std::int64_t p = prompt_pool_->next_prompt();
    if (prefix_caching_ && !r.too_long) {
      const auto& keys = prompt_pool_->keys(p, r.input, r.output, static_cast<std::uint64_t>(prompt_pool_->drawn()));
      if (!keys.empty()) {
        r.chain = keys.data();
        r.chain_blocks = static_cast<std::int32_t>(keys.size());
      }
    }
  }
  if (adapters_ > 1) key_by_adapter(r, adapter);
  return r;
}

}  // namespace llmsim::engine::detail
