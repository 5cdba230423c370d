#pragma once
// Picking a winner among options whose numbers are estimates: differences inside the noise are a tie, and a tie is
// broken by what a buyer prefers when the money is the same (the lossless format, then the cheaper card), saying so.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmsim::analysis {

/// One option as the ranking sees it.
struct RankCandidate {
  std::optional<double> value;  ///< the criterion, lower is better; nullopt = not eligible (misses the SLO)
  /// Relative uncertainty of `value` (half-width of its 95% CI ÷ value, >= 0): the capacity search's CI where the
  /// value depends on capacity; kMinRelativeTie is the floor.
  double rel_uncertainty = 0;
  std::vector<double> tie_keys;  ///< secondary criteria, lower is better, used only outside a tie
  bool lossless = true;          ///< 16-bit weights and KV cache (quantization changes answers: quality.hpp)
  double card_price = 0;         ///< price per GPU-hour of its card
  std::string name;
};

/// Two values closer than this (relative) are never told apart: simulated percentiles and token rates carry a few
/// percent of sampling noise even where a CI is not measured.
inline constexpr double kMinRelativeTie = 0.02;

struct RankPick {
  std::optional<std::size_t> winner;
  /// Candidates indistinguishable from the best by value (their intervals value × (1 ± uncertainty) overlap), the
  /// winner included; one element when there is no tie.
  std::vector<std::size_t> tied;
  /// Empty without a tie; else "tie within the noise (±3%) between A, B and C: A wins as the lossless format".
  std::string note;
};

/// The best eligible candidate: the lowest value (then tie_keys, then the earlier); when others are
/// indistinguishable from it, the tie goes to the lossless format, then to the cheaper card, then as above.
/// `plain_order`: how the note names the plain order when neither the format nor the card price breaks the tie
/// (search: "on the lower P95 TTFT").
RankPick pick_winner(const std::vector<RankCandidate>& candidates, std::string_view plain_order = "on the plain order");

/// True for weight formats and KV dtypes that keep 16 bits ("fp16", "bf16", "auto" resolved to them).
bool lossless_format(const std::string& weights, const std::string& kv_cache);

}  // namespace llmsim::analysis
