#pragma once
// Tokens per decode step under speculative decoding (private to the engine; docs/speculative-decoding.md).
//
// Each decoder's step emits 1 + (accepted proposals) tokens; with per-token acceptance α and k proposals the
// expected count is E = (1 − α^{k+1}) / (1 − α) (Leviathan et al. 2023). The engine keeps every step O(1) in the
// batch by advancing all decoders together (replica.hpp), so it accounts the expectation deterministically: every
// decoder of a step emits the same n ∈ {⌊E⌋, ⌈E⌉}, the sequence of n chosen so that after s steps Σ n = ⌊s·E + c⌋
// (a carry, as Bresenham's line) — the long-run mean is exactly E. What that leaves out: the spread between
// sequences (a request's TPOT varies with its own acceptances; here only through batch and length).
#include <cmath>
#include <cstdint>

namespace llmsim::engine::detail {

class SpeculativeTokens {
 public:
  SpeculativeTokens() = default;
  /// `expected` = E >= 1.
  explicit SpeculativeTokens(double expected) : expected_(expected) {}
  /// Tokens of the next step (>= 1, <= ⌈E⌉), without committing it.
  std::int64_t next() const noexcept {
    const auto n = static_cast<std::int64_t>(std::floor(carry_ + expected_));
    return n < 1 ? 1 : n;
  }
  /// Commits the next step; returns its tokens.
  std::int64_t advance() noexcept {
    const std::int64_t n = next();
    carry_ = carry_ + expected_ - static_cast<double>(n);
    return n;
  }

 private:
  double expected_ = 1;
  double carry_ = 0;  ///< in [0, 1)
};

}  // namespace llmsim::engine::detail
