#include "llmsim/core/names.hpp"

#include <algorithm>
#include <cctype>

namespace llmsim {

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

namespace {
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
// Edit distance counting a swap of two neighbours as one edit (optimal string alignment): "tp_szie" is one edit
// from "tp_size", as a typist sees it.
std::size_t typo_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}
}  // namespace

std::vector<std::string> close_matches(std::string_view name, const std::vector<std::string>& candidates,
                                       std::size_t max) {
  const std::string n = to_lower(name);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& c : candidates) {
    const std::string lc = to_lower(c);
    std::size_t d = edit_distance(n, lc);
    bool contains = !n.empty() && (lc.find(n) != std::string::npos || n.find(lc) != std::string::npos);
    std::size_t limit = std::max<std::size_t>(2, std::max(n.size(), lc.size()) / 3);
    if (contains) d = std::min<std::size_t>(d, 1);
    if (d <= limit) scored.emplace_back(d, c);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (const auto& [d, c] : scored) {
    if (out.size() >= max) break;
    out.push_back(c);
  }
  return out;
}

std::string misspelling_of(std::string_view name, const std::vector<std::string>& known) {
  const std::string n(name);
  if (std::find(known.begin(), known.end(), n) != known.end()) return "";
  const std::size_t cap = n.size() >= 8 ? 2 : 1;
  for (const auto& k : known) {
    const std::size_t gap = k.size() > n.size() ? k.size() - n.size() : n.size() - k.size();
    if (gap <= cap && typo_distance(n, k) <= cap) return k;
  }
  return "";
}

std::string unknown_name_message(std::string_view kind, std::string_view name,
                                 const std::vector<std::string>& candidates) {
  std::string msg = "unknown " + std::string(kind) + " '" + std::string(name) + "'";
  auto close = close_matches(name, candidates);
  if (!close.empty()) {
    msg += "; did you mean ";
    for (std::size_t i = 0; i < close.size(); ++i) msg += (i ? ", '" : "'") + close[i] + "'";
    msg += "?";
  }
  msg += " (valid: ";
  for (std::size_t i = 0; i < candidates.size(); ++i) msg += (i ? ", " : "") + candidates[i];
  msg += ")";
  return msg;
}

}  // namespace llmsim
