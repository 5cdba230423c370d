// Private to perf: the table of a CostModel's token-only op times (CostModel::Constants::table), filled on first use.
//
// A cost model priced every row of its table (up to the engine's token budget, 8,193 rows for vLLM's and SGLang's
// defaults) when it was built, though a simulation reads the rows of the step sizes it runs only: a serving run at
// light load never steps past a few thousand tokens, a static batch of B sequences past B rows. A run fit builds a
// cost model per run per profile it tries (thousands), and filling them was a quarter of the H200 serving fit's CPU
// (`perf`: CostModel::Constants::gemm, issue 30). So the rows are filled as a prefix, on the first step that needs a
// row past it, by the very functions the direct path calls: a row's bits do not depend on when it was filled.
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

/// Rows 0 .. size() of TokenRow, of which the first filled() are set. Storage for all rows is taken at reset() and
/// not written (the pages a simulation never reaches are never touched); the owner fills rows in order under lock()
/// and publishes them with publish(). Readers see a row below filled() complete (release/acquire), so one cost model
/// may price steps from several threads. A copy holds the rows the original had filled.
class TokenTable {
 public:
  TokenTable() = default;
  TokenTable(const TokenTable& o) { copy_from(o); }
  TokenTable& operator=(const TokenTable& o) {
    if (this != &o) copy_from(o);
    return *this;
  }
  ~TokenTable() { std::free(rows_); }

  /// Room for rows 0 .. size (none filled).
  void reset(std::int64_t size) {
    std::free(rows_);
    rows_ = nullptr;
    size_ = size;
    filled_.store(0, std::memory_order_relaxed);
    if (size < 0) return;
    rows_ = static_cast<TokenRow*>(std::malloc(sizeof(TokenRow) * static_cast<std::size_t>(size + 1)));
    if (!rows_) throw std::bad_alloc();
  }
  /// The largest row index the table may hold (rows past it are priced directly).
  std::int64_t size() const noexcept { return size_; }
  /// How many rows, from 0, are set.
  std::int64_t filled() const noexcept { return filled_.load(std::memory_order_acquire); }
  const TokenRow& operator[](std::int64_t n) const { return rows_[n]; }

  /// The owner's fill: hold lock(), set rows filled() .. n with set(), then publish(n + 1).
  std::mutex& lock() const { return mutex_; }
  void set(std::int64_t n, const TokenRow& r) const { ::new (static_cast<void*>(rows_ + n)) TokenRow(r); }
  void publish(std::int64_t rows) const { filled_.store(rows, std::memory_order_release); }

 private:
  void copy_from(const TokenTable& o) {
    std::lock_guard<std::mutex> g(o.mutex_);
    reset(o.size_);
    const std::int64_t n = o.filled_.load(std::memory_order_relaxed);
    for (std::int64_t i = 0; i < n; ++i) set(i, o.rows_[i]);
    filled_.store(n, std::memory_order_relaxed);
  }
  TokenRow* rows_ = nullptr;
  std::int64_t size_ = -1;
  mutable std::atomic<std::int64_t> filled_{0};
  mutable std::mutex mutex_;
};

}  // namespace llmsim::perf::cost_detail
