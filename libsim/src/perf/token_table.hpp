// Private to perf: the table of a CostModel's token-only op times (CostModel::Constants::table), filled on first use.
//
// A cost model priced every row of its table (up to the engine's token budget, 8,193 rows for vLLM's and SGLang's
// defaults) when it was built, though a simulation reads the rows of the step sizes it runs only: a serving run at
// light load never steps past a few thousand tokens, a static batch of B sequences past B rows. A run fit builds a
// cost model per run per profile it tries (thousands), and filling them was a quarter of the H200 serving fit's CPU
// (`perf`: CostModel::Constants::gemm, issue 30). So a row is filled on the first step that reads it, by the very
// functions the direct path calls: a row's bits do not depend on when it was filled. Until 2026-12-07 the rows were
// filled as a prefix (every row up to the largest step priced); a serving run's steps read a few hundred of those
// thousands of rows (decode batches, and prompt chunks plus the decodes beside them), and filling the prefix was
// still a fifth of the H200 serving fit (`perf`, CostModel::Constants::fill_table).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>

namespace llmsim::perf::cost_detail {

/// Times of the ops that depend only on the token count (and LM-head rows): one row per count.
struct TokenRow {
  double qkv = 0, o_proj = 0, mlp = 0, norms = 0, allreduce = 0, pp = 0;  // indexed by tokens
  double lm_head = 0, sampling = 0;                                      // indexed by LM-head rows
};

/// Rows 0 .. size() of TokenRow, each set on first use. Storage for all rows is taken at reset() and not written (the
/// pages a simulation never reaches are never touched); a row's flag says it is set. The owner fills a row under
/// lock() and publishes it with publish(n) (release); a reader that sees has(n) (acquire) sees the row complete, so
/// one cost model may price steps from several threads. A copy holds the rows the original had set.
class TokenTable {
 public:
  TokenTable() = default;
  TokenTable(const TokenTable& o) { copy_from(o); }
  TokenTable& operator=(const TokenTable& o) {
    if (this != &o) copy_from(o);
    return *this;
  }
  ~TokenTable() {
    std::free(rows_);
    std::free(set_);
  }

  /// Room for rows 0 .. size (none set).
  void reset(std::int64_t size) {
    std::free(rows_);
    std::free(set_);
    rows_ = nullptr;
    set_ = nullptr;
    size_ = size;
    if (size < 0) return;
    const auto n = static_cast<std::size_t>(size + 1);
    rows_ = static_cast<TokenRow*>(std::malloc(sizeof(TokenRow) * n));
    set_ = static_cast<std::atomic<unsigned char>*>(std::calloc(n, sizeof(std::atomic<unsigned char>)));
    if (!rows_ || !set_) throw std::bad_alloc();
  }
  /// The largest row index the table may hold (rows past it are priced directly).
  std::int64_t size() const noexcept { return size_; }
  /// Whether row n (0 <= n <= size()) is set.
  bool has(std::int64_t n) const noexcept { return set_[n].load(std::memory_order_acquire) != 0; }
  const TokenRow& operator[](std::int64_t n) const { return rows_[n]; }

  /// The owner's fill: hold lock(), set row n with set() unless has(n), then publish(n).
  std::mutex& lock() const { return mutex_; }
  void set(std::int64_t n, const TokenRow& r) const { ::new (static_cast<void*>(rows_ + n)) TokenRow(r); }
  void publish(std::int64_t n) const { set_[n].store(1, std::memory_order_release); }

 private:
  void copy_from(const TokenTable& o) {
    std::lock_guard<std::mutex> g(o.mutex_);
    reset(o.size_);
    for (std::int64_t i = 0; i <= o.size_; ++i)
      if (o.set_[i].load(std::memory_order_relaxed)) {
        set(i, o.rows_[i]);
        set_[i].store(1, std::memory_order_relaxed);
      }
  }
  static_assert(sizeof(std::atomic<unsigned char>) == 1 && std::atomic<unsigned char>::is_always_lock_free);
  TokenRow* rows_ = nullptr;
  std::atomic<unsigned char>* set_ = nullptr;  // calloc'd: all clear (an all-zero atomic<unsigned char> holds 0)
  std::int64_t size_ = -1;
  mutable std::mutex mutex_;
};

}  // namespace llmsim::perf::cost_detail
