// analysis::assemble_search picks its winner by compare's rule (analysis/ranking.hpp): bills within the noise are a
// tie, reported as one and broken by the lossless format, then the cheaper card, then the lower bill and P95 TTFT.
// Before, equal bills went silently to the lower P95 TTFT however small the difference (676 against 694 ms).
#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "llmsim/analysis/ranking.hpp"
#include "llmsim/analysis/search.hpp"
#include "scenarios.hpp"

using namespace llmsim;
using Catch::Contains;

namespace {

struct TieOption {
  std::string name;
  double bill, ttft, tpot, price;
  bool lossy = false;
};

// The search's assembly over hand-made evaluations: no simulation, every number chosen by the test.
analysis::SearchResult assemble_ties(const std::vector<TieOption>& options) {
  analysis::SearchPlan plan;
  std::vector<std::optional<analysis::SearchEvaluation>> first;
  for (std::size_t i = 0; i < options.size(); ++i) {
    const auto& o = options[i];
    analysis::SearchCandidate c;
    c.index = static_cast<std::int64_t>(i);
    c.name = o.name;
    c.scenario = test::chat_json();
    c.scenario["cost"] = {{"target_qps", 4.0}};
    c.price_per_gpu_hour = o.price;
    c.monthly_lower_bound = o.bill / 2;
    plan.candidates.push_back(c);
    analysis::SearchEvaluation e;
    e.index = c.index;
    e.meets_slo = true;
    e.capacity_qps = 2;
    e.replicas = 2;
    e.monthly_cost = o.bill;
    e.ttft_p95_ms = o.ttft;
    e.tpot_p95_ms = o.tpot;
    if (o.lossy) e.quality_caveat = "4-bit weights: quality not modelled";
    first.push_back(e);
  }
  analysis::SearchOptions opt;
  opt.target_qps = 4;
  std::vector<analysis::SearchEvaluation> finals;
  for (const auto k : analysis::pareto_positions(first, opt)) finals.push_back(*first[k]);
  return analysis::assemble_search(plan, first, finals, opt);
}

const analysis::SearchFrontMember& winner_of(const analysis::SearchResult& r) {
  REQUIRE(r.winner);
  return r.front[*r.winner];
}

bool has_reason(const analysis::SearchResult& r, const std::string& text) {
  return std::any_of(r.reasons.begin(), r.reasons.end(), [&](const std::string& s) { return s.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("search: equal bills are a tie, said, and go to the lower P95 TTFT only as its stated last rule", "[search][ties]") {
  // Four 4090 options at one bill (the chat-8b front at 20 req/s), latencies trading off so all are on the front.
  const auto r = assemble_ties({{"seqs=256", 2190, 676, 49.5, 0.5},
                                {"seqs=128", 2190, 694, 47.9, 0.5},
                                {"seqs=64", 2190, 699, 47.8, 0.5},
                                {"seqs=512", 2190, 767, 47.7, 0.5}});
  REQUIRE(r.front.size() == 4);
  CHECK(winner_of(r).candidate.name == "seqs=256");
  CHECK_THAT(r.reasons[0], Contains("seqs=256 is the cheapest at $2190/month"));  // the bill is the cheapest: said so
  CHECK(r.tied.size() == 4);
  CHECK_THAT(r.tie_note, Contains("tie within the noise (±2%) between") && Contains("seqs=512") &&
                             Contains("seqs=256 wins on the lower P95 TTFT"));
  CHECK(has_reason(r, r.tie_note));
  CHECK(has_reason(r, "is tied with the winner"));  // the runner-up line does not present 676 vs 694 ms as decisive
  CHECK_FALSE(has_reason(r, "ties on the bill and the tie goes"));
  const Json j = analysis::to_json(r);
  CHECK(j["tied"].size() == 4);
  CHECK(j["tie_note"] == r.tie_note);
}

TEST_CASE("search: inside a tie the lossless format wins, then the cheaper card, whatever the TTFT order", "[search][ties]") {
  SECTION("a 4-bit option at the same bill and a lower TTFT loses the tie to 16-bit weights") {
    const auto r = assemble_ties({{"awq", 1000, 500, 40, 0.5, true}, {"fp16", 1000, 520, 39, 0.5}});
    CHECK(winner_of(r).candidate.name == "fp16");
    CHECK(*r.winner == 1);  // not the front's first row: the tie rule, not the sort order, picks
    CHECK_THAT(r.tie_note, Contains("fp16 wins as the lossless format"));
    CHECK(winner_of(r).evaluation.quality_caveat.empty());
  }
  SECTION("bills 1% apart are a tie: the cheaper card per GPU-hour wins it") {
    const auto r = assemble_ties({{"two-dear", 990, 500, 40, 2.0}, {"four-cheap", 1000, 520, 39, 1.0}});
    CHECK(winner_of(r).candidate.name == "four-cheap");
    CHECK_THAT(r.tie_note, Contains("as the cheaper card"));
    CHECK(has_reason(r, "runner-up two-dear costs $990/month (-1%"));
    CHECK_THAT(r.reasons[0], Contains("four-cheap wins at $1000/month, tied within the noise with the cheapest bill "
                                      "(two-dear, $990"));
    CHECK_FALSE(has_reason(r, "four-cheap is the cheapest"));
  }
  SECTION("bills 5% apart are no tie: the cheaper bill wins and nothing is said of a tie") {
    const auto r = assemble_ties({{"cheap", 1000, 900, 40, 2.0}, {"dear", 1050, 500, 39, 1.0}});
    CHECK(winner_of(r).candidate.name == "cheap");
    CHECK(r.tied.empty());
    CHECK(r.tie_note.empty());
    CHECK(analysis::to_json(r)["tied"].empty());
    CHECK(has_reason(r, "it buys lower latency"));
  }
}

TEST_CASE("pick_winner names what broke a tie: the format, the card, the caller's plain-order key, or the listing",
          "[ranking][ties]") {
  auto cand = [](const std::string& name, double v, double key, bool lossless, double price) {
    analysis::RankCandidate c;
    c.value = v;
    c.tie_keys = {key};
    c.lossless = lossless;
    c.card_price = price;
    c.name = name;
    return c;
  };
  const std::string plain = "on the lower cost per token at the target load, the bill being equal";
  // Same format, same card price, equal bills, different token costs: the caller's words for its key.
  auto p = analysis::pick_winner({cand("a", 730, 0.354, true, 0.5), cand("b", 730, 0.353, true, 0.5)}, plain);
  REQUIRE(p.winner);
  CHECK(*p.winner == 1);
  CHECK_THAT(p.note, Contains("b wins " + plain));
  // Identical figures: the listing decides, and the note says so rather than naming a key that did not differ.
  p = analysis::pick_winner({cand("fp16", 730, 0.353, true, 0.5), cand("bf16", 730, 0.353, true, 0.5)}, plain);
  CHECK(*p.winner == 0);
  CHECK_THAT(p.note, Contains("fp16 wins as the first listed (identical figures)"));
  // The format, then the card price, come before any of those.
  p = analysis::pick_winner({cand("awq", 725, 0.30, false, 0.5), cand("fp16", 730, 0.35, true, 0.5)}, plain);
  CHECK(*p.winner == 1);
  CHECK_THAT(p.note, Contains("fp16 wins as the lossless format"));
  CHECK(p.note.find("plain order") == std::string::npos);
}
