#include "llmsim/analysis/ranking.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace llmsim::analysis {

namespace {

std::string percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * x);
  return buf;
}

bool sixteen_bit(const std::string& f) { return f == "fp16" || f == "bf16" || f == "float16" || f == "bfloat16"; }

}  // namespace

bool lossless_format(const std::string& weights, const std::string& kv_cache) {
  return sixteen_bit(weights) && (kv_cache.empty() || sixteen_bit(kv_cache) || kv_cache == "auto");
}

RankPick pick_winner(const std::vector<RankCandidate>& c, std::string_view plain_order) {
  RankPick out;
  auto u = [&](std::size_t i) { return std::max(kMinRelativeTie, std::isfinite(c[i].rel_uncertainty) ? c[i].rel_uncertainty : 1.0); };
  // The plain order: value, then the secondary keys, then the earlier option.
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!c[i].value || !std::isfinite(*c[i].value)) continue;
    if (!best || *c[i].value < *c[*best].value ||
        (*c[i].value == *c[*best].value && c[i].tie_keys < c[*best].tie_keys))
      best = i;
  }
  if (!best) return out;
  const double b = *c[*best].value;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!c[i].value || !std::isfinite(*c[i].value)) continue;
    // Indistinguishable: the intervals v × (1 ± u) of the two overlap.
    if (*c[i].value * (1 - u(i)) <= b * (1 + u(*best))) out.tied.push_back(i);
  }
  auto better = [&](std::size_t x, std::size_t y) {  // inside the tie
    if (c[x].lossless != c[y].lossless) return c[x].lossless;
    if (c[x].card_price != c[y].card_price) return c[x].card_price < c[y].card_price;
    if (*c[x].value != *c[y].value) return *c[x].value < *c[y].value;
    if (c[x].tie_keys != c[y].tie_keys) return c[x].tie_keys < c[y].tie_keys;
    return x < y;
  };
  std::size_t w = out.tied.front();
  for (std::size_t i : out.tied)
    if (better(i, w)) w = i;
  out.winner = w;
  if (out.tied.size() > 1) {
    double noise = 0;
    for (std::size_t i : out.tied) noise = std::max(noise, u(i));
    std::string names;
    for (std::size_t k = 0; k < out.tied.size(); ++k)
      names += (k == 0 ? "" : k + 1 == out.tied.size() ? " and " : ", ") + c[out.tied[k]].name;
    const bool by_format = std::any_of(out.tied.begin(), out.tied.end(), [&](std::size_t i) { return c[i].lossless != c[w].lossless; });
    const bool by_price = std::any_of(out.tied.begin(), out.tied.end(), [&](std::size_t i) {
      return c[i].lossless == c[w].lossless && c[i].card_price != c[w].card_price;
    });
    // Identical in every figure (bf16 beside fp16): the order they were listed in decides, said as such.
    const bool identical = std::all_of(out.tied.begin(), out.tied.end(), [&](std::size_t i) {
      return *c[i].value == *c[w].value && c[i].tie_keys == c[w].tie_keys;
    });
    const std::string plain = identical ? "as the first listed (identical figures)" : std::string(plain_order);
    out.note = "tie within the noise (±" + percent(noise) + ") between " + names + ": " + c[w].name + " wins" +
               (by_format ? " as the lossless format" : "") + (by_format && by_price ? ", then" : "") +
               (by_price ? " as the cheaper card" : "") + (!by_format && !by_price ? " " + plain : "");
  }
  return out;
}

}  // namespace llmsim::analysis
