// A ShareGPT run's result without per-request lengths (analysis/dataset_requests.hpp): the requests are drawn from
// ShareGPT's length distribution at the file's means — the lists keep the totals, respect the client's filters,
// are deterministic, and the check's simulated TPOT spreads where the requests at the means ran in lockstep.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "llmsim/analysis/dataset_requests.hpp"
#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/analysis/vllm_result.hpp"
#include "llmsim/spec/dataset_lengths.hpp"

using namespace llmsim;
using namespace llmsim::analysis;

namespace {

// A vLLM result of n ShareGPT requests sent at once, with totals and a few latency statistics, no lists.
VllmResult sharegpt_result(std::int64_t n, std::int64_t total_in, std::int64_t total_out) {
  VllmResult r;
  r.source = "sharegpt.json";
  r.dataset_name = "sharegpt";
  r.num_prompts = r.completed = n;
  r.total_input_tokens = total_in;
  r.total_output_tokens = total_out;
  r.duration_s = 60;
  for (const char* key : {"mean_tpot_ms", "std_tpot_ms", "mean_ttft_ms"}) {
    auto stat = parse_vllm_latency_key(key);
    REQUIRE(stat);
    stat->key = key;
    stat->value_ms = 20;
    r.latencies.push_back(*stat);
  }
  return r;
}

std::int64_t dataset_sum(const std::vector<std::int64_t>& v) { return std::accumulate(v.begin(), v.end(), std::int64_t{0}); }

}  // namespace

TEST_CASE("a ShareGPT result without lists gets requests drawn at its means", "[dataset_requests]") {
  VllmResult r = sharegpt_result(1000, 302118, 195775);
  REQUIRE(draw_dataset_requests(r));
  REQUIRE(r.input_lens.size() == 1000);
  REQUIRE(r.output_lens.size() == 1000);
  CHECK(r.lists_drawn);
  CHECK_THAT(r.lists_from, Catch::Contains("ShareGPT"));
  // Stratified draws: the totals within 1 % of the file's (independent draws would miss by ~3 %).
  CHECK(static_cast<double>(dataset_sum(r.input_lens)) == Approx(302118.0).epsilon(0.01));
  CHECK(static_cast<double>(dataset_sum(r.output_lens)) == Approx(195775.0).epsilon(0.01));
  for (std::size_t i = 0; i < r.input_lens.size(); ++i) {
    CHECK(r.input_lens[i] >= spec::kShareGptMinLen);
    CHECK(r.input_lens[i] <= spec::kShareGptMaxPrompt);
    CHECK(r.output_lens[i] >= spec::kShareGptMinLen);
    CHECK(r.input_lens[i] + r.output_lens[i] <= spec::kShareGptMaxTotal);
  }
  const auto [lo, hi] = std::minmax_element(r.output_lens.begin(), r.output_lens.end());
  CHECK(*hi > 4 * *lo);  // spread
  // Deterministic.
  VllmResult again = sharegpt_result(1000, 302118, 195775);
  REQUIRE(draw_dataset_requests(again));
  CHECK(again.input_lens == r.input_lens);
  CHECK(again.output_lens == r.output_lens);
  // Left alone: another dataset, lists already there, failures (which requests failed is unknown), means the
  // filters cannot reach.
  VllmResult random = sharegpt_result(100, 30000, 20000);
  random.dataset_name = "random";
  CHECK_FALSE(draw_dataset_requests(random));
  CHECK(random.input_lens.empty());
  VllmResult failed = sharegpt_result(100, 30000, 20000);
  failed.failed = 2;
  CHECK_FALSE(draw_dataset_requests(failed));
  VllmResult too_long = sharegpt_result(100, 150000, 20000);  // 1,500-token prompts: beyond the 1,024 cap
  CHECK_FALSE(draw_dataset_requests(too_long));
  CHECK(too_long.input_lens.empty());
}

TEST_CASE("check: drawn ShareGPT lengths spread TPOT where the means ran in lockstep", "[dataset_requests]") {
  VllmCheckOptions o;
  o.gpu = "a100-80gb-sxm";
  o.model = "llama-3.1-8b";
  // Every prompt fits one step's budget: at the means all 48 requests are prefilled together and decode in lockstep.
  o.vllm_args = "vllm serve MODEL --max-num-batched-tokens 65536";
  const VllmResult means = sharegpt_result(48, 48 * 300, 48 * 200);
  VllmResult drawn = means;
  REQUIRE(draw_dataset_requests(drawn));
  const VllmCheck lockstep = check_vllm_result(means, o);
  const VllmCheck spread = check_vllm_result(drawn, o);
  REQUIRE(spread.fits);
  auto predicted = [](const VllmCheck& c, const std::string& key) {
    for (const auto& row : c.rows)
      if (row.key == key && row.predicted) return *row.predicted;
    return -1.0;
  };
  const double l = predicted(lockstep, "std_tpot_ms"), s = predicted(spread, "std_tpot_ms");
  INFO("std TPOT at the means " << l << " ms, drawn " << s << " ms");
  CHECK(s > 0.2);  // the batch shrinks as replies end: later steps are shorter
  CHECK(l < 0.05 * s);
  bool noted = false;
  for (const auto& n : spread.notes) noted = noted || n.find("drawn from ShareGPT lengths") != std::string::npos;
  CHECK(noted);
}
