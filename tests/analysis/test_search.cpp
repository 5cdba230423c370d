// analysis::search: enumeration, pruning (memory, throughput bound, budget, branch-and-bound), the Pareto front.
#include <catch2/catch.hpp>

#include <optional>
#include <set>

#include "llmsim/analysis/search.hpp"
#include "scenarios.hpp"

using namespace llmsim;
using Catch::Contains;

namespace {

analysis::SearchOptions small_options(double target) {
  analysis::SearchOptions o;
  o.target_qps = target;
  o.axes = {{"hardware.gpu", {"rtx4090-24gb", "a100-80gb-sxm", "2xrtx4090-24gb"}},
            {"quant.weights", {"fp16", "awq-int4"}},
            {"engine.max_num_seqs", {32, 128}}};
  o.screen.num_requests = 200;
  o.screen.warmup_requests = 20;
  o.screen.replications = 1;
  o.final_check = o.screen;  // the same settings: the re-check reproduces the first pass exactly
  o.wave = 2;                // small waves so the bound prunes within this small space
  o.front_cost_ratio = 1.0;  // the tightest branch-and-bound: only a cheaper winner is looked for
  return o;
}

Json base() {
  Json j = test::chat_json();
  j["hardware"].erase("price_per_gpu_hour");
  return j;
}

}  // namespace

// The front by brute force: every candidate of the plan evaluated in full (no bound, no screening), then the
// search's own definition: feasible, within front_cost_ratio of the cheapest bill, not dominated (ties: the first
// in enumeration order). Returns enumeration indices.
std::set<std::int64_t> brute_front(const analysis::SearchPlan& plan, const analysis::SearchOptions& opt,
                                   std::vector<std::optional<analysis::SearchEvaluation>>& all) {
  all.clear();
  for (const auto& c : plan.candidates) all.push_back(analysis::evaluate_candidate(c, opt.screen, spec::Catalog::builtin()));
  std::set<std::int64_t> out;
  double best = 1e300;
  for (const auto& e : all)
    if (e->meets_slo) best = std::min(best, e->monthly_cost);
  std::vector<std::size_t> in_window;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i]->meets_slo && all[i]->monthly_cost <= opt.front_cost_ratio * best * (1 + 1e-9)) in_window.push_back(i);
  for (const auto i : in_window) {
    const auto& b = *all[i];
    bool dominated = false;
    for (const auto j : in_window) {
      if (j == i) continue;
      const auto& a = *all[j];
      const bool le = a.monthly_cost <= b.monthly_cost && a.ttft_p95_ms <= b.ttft_p95_ms && a.tpot_p95_ms <= b.tpot_p95_ms;
      const bool lt = a.monthly_cost < b.monthly_cost || a.ttft_p95_ms < b.ttft_p95_ms || a.tpot_p95_ms < b.tpot_p95_ms;
      const bool same = le && !lt;
      dominated = dominated || (le && lt) || (same && plan.candidates[j].index < plan.candidates[i].index);
    }
    if (!dominated) out.insert(plan.candidates[i].index);
  }
  return out;
}

TEST_CASE("search: the bound, the screening and branch-and-bound never drop a front member or the winner (brute force)",
          "[search]") {
  for (const double ratio : {1.0, 2.0}) {
    auto opt = small_options(6.0);
    opt.axes[0].values.push_back("2xrtx4090-24gb@pp");  // pipeline parallel: batches in flight (the bound's x k)
    opt.front_cost_ratio = ratio;
    const auto& cat = spec::Catalog::builtin();
    const auto plan = analysis::plan_search(base(), opt, cat);
    CHECK(plan.enumerated == 16);
    CHECK(plan.invalid + plan.pruned_memory + plan.pruned_budget + static_cast<std::int64_t>(plan.candidates.size()) == 16);
    const auto result = analysis::search(base(), opt, cat);
    REQUIRE(result.winner);
    INFO("front_cost_ratio " << ratio);
    CHECK(result.pruned_bound + result.screened > 0);  // something was cut short in this space
    std::vector<std::optional<analysis::SearchEvaluation>> all;
    const auto brute = brute_front(plan, opt, all);
    // The re-check runs at the same settings here, so the searched front is the brute-force front exactly.
    std::set<std::int64_t> searched;
    for (const auto& m : result.front) searched.insert(m.candidate.index);
    CHECK(searched == brute);
    double brute_best = 1e300;
    for (std::size_t i = 0; i < plan.candidates.size(); ++i) {
      const auto& c = plan.candidates[i];
      const auto& e = *all[i];
      INFO(c.name);
      // The analytic bound is above what the simulation finds, and the cost bound below the bill.
      CHECK(e.capacity_qps <= c.qps_bound_per_replica);
      if (e.meets_slo) {
        CHECK(e.monthly_cost >= c.monthly_lower_bound * (1 - 1e-9));
        brute_best = std::min(brute_best, e.monthly_cost);
      }
    }
    CHECK(result.front[*result.winner].evaluation.monthly_cost == brute_best);
  }
}

TEST_CASE("search: a screened evaluation is one whose bill is over the cutoff; below it the evaluation is unchanged",
          "[search]") {
  const auto& cat = spec::Catalog::builtin();
  auto opt = small_options(6.0);
  opt.axes = {{"hardware.gpu", {"rtx4090-24gb", "2xa100-80gb-sxm"}}};
  const auto plan = analysis::plan_search(base(), opt, cat);
  REQUIRE(plan.candidates.size() == 2);
  for (const auto& c : plan.candidates) {
    INFO(c.name);
    const auto full = analysis::evaluate_candidate(c, opt.screen, cat);
    REQUIRE(full.meets_slo);
    CHECK_FALSE(full.screened);
    // A cutoff at the bill (or above) changes nothing: the same numbers, bit for bit.
    const auto at = analysis::evaluate_candidate(c, opt.screen, cat, nullptr, full.monthly_cost);
    CHECK(analysis::to_json(at) == analysis::to_json(full));
    // A cutoff below the bill of fewer replicas than it needs screens it out (after fewer simulations).
    if (full.replicas >= 2) {
      const double fewer = full.monthly_cost * (full.replicas - 1) / full.replicas * 0.999;
      const auto cut = analysis::evaluate_candidate(c, opt.screen, cat, nullptr, fewer);
      CHECK(cut.screened);
      CHECK_FALSE(cut.meets_slo);
      CHECK_THAT(cut.reason, Contains("cutoff"));
    }
  }
}

TEST_CASE("search: the bound is above the simulated capacity across cards, TP, PP, formats, chunk sizes and "
          "speculative decoding",
          "[search]") {
  const auto& cat = spec::Catalog::builtin();
  struct Case {
    std::vector<std::pair<std::string, Json>> set;
  };
  const std::vector<Case> cases{
      {{{"hardware.gpu", "rtx4090-24gb"}, {"quant.weights", "awq-int4"}, {"engine.max_num_batched_tokens", 2048}}},
      {{{"hardware.gpu", "h100-80gb-sxm"}, {"quant.weights", "fp8"}, {"quant.kv_cache", "fp8"}}},
      {{{"hardware.gpu", "2xl40s-48gb"}, {"engine.max_num_batched_tokens", 16384}, {"engine.max_num_seqs", 512}}},
      {{{"hardware.gpu", "4xa100-80gb-pcie@pp"}, {"quant.weights", "int8"}}},
      {{{"hardware.gpu", "2xh100-80gb-sxm@pp"}, {"quant.weights", "fp8"}, {"engine.max_num_seqs", 64}}},
      {{{"hardware.gpu", "a100-80gb-sxm"},
        {"engine.speculative", {{"method", "ngram"}, {"num_speculative_tokens", 3}}},
        {"workload.speculative_acceptance_rate", 0.9}}},
  };
  for (const auto& k : cases) {
    auto opt = small_options(4.0);
    opt.axes.clear();
    for (const auto& [path, value] : k.set) opt.axes.push_back({path, {value}});
    const auto plan = analysis::plan_search(base(), opt, cat);
    REQUIRE(plan.candidates.size() == 1);
    const auto& c = plan.candidates[0];
    INFO(c.name);
    analysis::CapacityOptions cap;  // the capacity defaults (600 requests): the re-check's settings, one seed
    cap.replications = 1;
    for (const auto& settings : {opt.screen, cap}) {
      const auto e = analysis::evaluate_candidate(c, settings, cat);
      REQUIRE(e.fits);
      CHECK(e.capacity_qps > 0);
      CHECK(e.capacity_qps <= c.qps_bound_per_replica);
    }
  }
  // Cost models are shared between configurations that differ only in max_num_seqs / max_num_batched_tokens: the
  // bound of one is the same whether its model was built for it or for a neighbour first.
  auto opt = small_options(4.0);
  opt.axes = {{"engine.max_num_batched_tokens", {2048, 8192}}, {"engine.max_num_seqs", {64, 256}}};
  const auto shared = analysis::plan_search(base(), opt, cat);
  opt.axes = {{"engine.max_num_batched_tokens", {8192}}, {"engine.max_num_seqs", {256}}};
  const auto alone = analysis::plan_search(base(), opt, cat);
  REQUIRE(alone.candidates.size() == 1);
  bool seen = false;
  for (const auto& c : shared.candidates) {
    if (c.name != alone.candidates[0].name) continue;
    seen = true;
    CHECK(c.qps_bound_per_replica == alone.candidates[0].qps_bound_per_replica);
  }
  CHECK(seen);
}

TEST_CASE("search: the front is Pareto, sorted by cost, and the same for any thread count", "[search]") {
  auto opt = small_options(4.0);
  opt.front_cost_ratio = 3.0;
  const auto& cat = spec::Catalog::builtin();
  const auto one = analysis::search(base(), opt, cat);
  opt.jobs = 2;
  const auto two = analysis::search(base(), opt, cat);
  CHECK(analysis::to_json(one) == analysis::to_json(two));
  REQUIRE_FALSE(one.front.empty());
  for (std::size_t i = 0; i < one.front.size(); ++i) {
    const auto& a = one.front[i].evaluation;
    CHECK(a.meets_slo);
    if (i > 0) CHECK(one.front[i - 1].evaluation.monthly_cost <= a.monthly_cost);
    for (std::size_t j = 0; j < one.front.size(); ++j) {
      const auto& b = one.front[j].evaluation;
      const bool dominated = b.monthly_cost <= a.monthly_cost && b.ttft_p95_ms <= a.ttft_p95_ms &&
                             b.tpot_p95_ms <= a.tpot_p95_ms &&
                             (b.monthly_cost < a.monthly_cost || b.ttft_p95_ms < a.ttft_p95_ms || b.tpot_p95_ms < a.tpot_p95_ms);
      CHECK_FALSE(dominated);
    }
  }
  // The winner's line and the runner-up's, and the tie rule's note between them when bills tie (test_search_ties.cpp).
  CHECK(one.reasons.size() == (one.tie_note.empty() ? 2u : 3u));
  if (!one.tie_note.empty()) CHECK(one.reasons[1] == one.tie_note);
  CHECK_THAT(one.reasons[0], Contains("cheapest"));
}

TEST_CASE("search: a budget excludes costlier configurations", "[search]") {
  auto opt = small_options(6.0);
  opt.front_cost_ratio = 3.0;
  const auto& cat = spec::Catalog::builtin();
  const auto free = analysis::search(base(), opt, cat);
  REQUIRE(free.front.size() >= 1);
  const double cheapest = free.front.front().evaluation.monthly_cost;
  opt.budget_per_month = cheapest * 1.01;
  const auto capped = analysis::search(base(), opt, cat);
  REQUIRE_FALSE(capped.front.empty());
  for (const auto& m : capped.front) CHECK(m.evaluation.monthly_cost <= *opt.budget_per_month);
  CHECK(capped.pruned_budget + capped.pruned_bound > free.pruned_budget + free.pruned_bound);
  opt.budget_per_month = cheapest * 0.5;  // nothing meets the SLO that cheaply
  const auto none = analysis::search(base(), opt, cat);
  CHECK(none.front.empty());
  CHECK_FALSE(none.winner);
  CHECK_THAT(none.reasons.at(0), Contains("no configuration"));
}

TEST_CASE("search: a configuration that cannot hold the model is pruned by memory, not simulated", "[search]") {
  analysis::SearchOptions o = small_options(1.0);
  o.axes = {{"hardware.gpu", {"rtx4090-24gb", "8xa100-80gb-sxm"}}};
  Json j = base();
  j["model"] = "llama-3.1-70b";
  const auto plan = analysis::plan_search(j, o, spec::Catalog::builtin());
  CHECK(plan.pruned_memory == 1);
  REQUIRE(plan.candidates.size() == 1);
  CHECK(plan.candidates[0].gpus_per_replica == 8);
}

TEST_CASE("search: bad inputs name the field", "[search]") {
  const auto& cat = spec::Catalog::builtin();
  auto o = small_options(0);
  CHECK_THROWS_WITH(analysis::plan_search(base(), o, cat), Contains("search.target_qps"));
  o = small_options(-2);
  CHECK_THROWS_AS(analysis::plan_search(base(), o, cat), ConfigError);
  o = small_options(1);
  o.axes[1].values.clear();
  CHECK_THROWS_WITH(analysis::plan_search(base(), o, cat), Contains("search.axes[1]"));
  o = small_options(1);
  o.axes[2].path = "engine.max_num_sequences";
  CHECK_THROWS_WITH(analysis::plan_search(base(), o, cat), Contains("search.axes[2].path"));
  o = small_options(1);
  o.axes = {{"hardware.gpu", {"nope-gpu"}}};  // every configuration invalid: an error, not an empty answer
  CHECK_THROWS_WITH(analysis::plan_search(base(), o, cat), Contains("nope-gpu"));
  Json closed = base();
  closed["workload"]["arrival"] = {{"process", "closed"}, {"concurrency", 8}};
  CHECK_THROWS_WITH(analysis::plan_search(closed, small_options(1), cat), Contains("workload.arrival"));
  o = small_options(1);
  o.budget_per_month = 0;
  CHECK_THROWS_WITH(analysis::plan_search(base(), o, cat), Contains("search.budget_per_month"));
}

TEST_CASE("search: candidates and evaluations round-trip through JSON (what a Dask worker receives and returns)", "[search]") {
  const auto& cat = spec::Catalog::builtin();
  const auto plan = analysis::plan_search(base(), small_options(2.0), cat);
  REQUIRE_FALSE(plan.candidates.empty());
  const auto& c = plan.candidates.front();
  const auto back = analysis::candidate_from_json(JsonView(analysis::to_json(c), ""));
  CHECK(analysis::to_json(back) == analysis::to_json(c));
  analysis::SearchEvaluation e;
  e.index = 3;
  e.meets_slo = true;
  e.monthly_cost = 1234.5;
  e.cost_per_mtok_output = 0.7;
  CHECK(analysis::to_json(analysis::evaluation_from_json(JsonView(analysis::to_json(e), ""))) == analysis::to_json(e));
}

TEST_CASE("search: the default card axis stays only where hardware.gpu places the cards", "[search]") {
  // The class: a search over a pool's or a fleet's cards was handed the default hardware.gpu axis too, and was
  // refused with "set disaggregation.<pool>.gpu instead" — the axis it had been given.
  const Json plain = {{"model", "llama-3.1-8b"}, {"hardware", {{"gpu", "a100-80gb-sxm"}}}};
  Json disagg = plain;
  disagg.erase("hardware");  // the pools are the deployment
  disagg["disaggregation"] = {{"prefill", {{"gpu", "h100-80gb-sxm"}}}, {"decode", {{"gpu", "a100-80gb-sxm"}}}};
  Json fleet = plain;
  fleet["hardware"] = {{"fleet", Json::array({{{"gpu", "rtx4090-24gb"}, {"replicas", 1}}})}};
  const analysis::SearchAxis seqs{"engine.max_num_seqs", {64, 128}};
  const analysis::SearchAxis decode{"disaggregation.decode.gpu", {"a100-80gb-sxm", "h100-80gb-sxm"}};
  const auto paths = [](const std::vector<analysis::SearchAxis>& axes) {
    std::vector<std::string> p;
    for (const auto& a : axes) p.push_back(a.path);
    return p;
  };
  using V = std::vector<std::string>;
  CHECK(paths(analysis::with_default_gpu_axis({seqs}, {"l40s-48gb"}, plain)) == V{"hardware.gpu", "engine.max_num_seqs"});
  CHECK(analysis::with_default_gpu_axis({seqs}, {"l40s-48gb"}, plain).front().values == std::vector<Json>{"l40s-48gb"});
  CHECK(paths(analysis::with_default_gpu_axis({{"hardware.gpu", {"h100-80gb-sxm"}}, seqs}, {}, plain)) ==
        V{"hardware.gpu", "engine.max_num_seqs"});
  CHECK(paths(analysis::with_default_gpu_axis({decode, seqs}, {}, plain)) == V{"disaggregation.decode.gpu", "engine.max_num_seqs"});
  CHECK(paths(analysis::with_default_gpu_axis({seqs}, {}, fleet)) == V{"engine.max_num_seqs"});
  // A disaggregated base: its sizing axes (the pools' split) stay unless an axis places or sizes a pool.
  const V split{"disaggregation.prefill.replicas", "disaggregation.decode.replicas"};
  CHECK(paths(analysis::with_default_gpu_axis({seqs}, {}, disagg)) == V{split[0], split[1], "engine.max_num_seqs"});
  CHECK(paths(analysis::with_default_gpu_axis({decode, seqs}, {}, disagg)) == V{"disaggregation.decode.gpu", "engine.max_num_seqs"});
  CHECK(paths(analysis::default_search_axes_for(disagg)) ==
        V{split[0], split[1], "engine.max_num_seqs", "engine.max_num_batched_tokens"});
  CHECK(paths(analysis::default_search_axes_for(plain)) ==
        V{"hardware.gpu", "engine.max_num_seqs", "engine.max_num_batched_tokens"});
  // An axis over the whole hardware section places the cards: the default card axis beside it would overwrite its
  // gpu and name members by cards they did not run ("2xrtx4090-24gb hardware={gpu: rtx4090-24gb}", 1 GPU).
  const analysis::SearchAxis hw{"hardware", {Json{{"gpu", "rtx4090-24gb"}, {"price_per_gpu_hour", 3.9}}}};
  CHECK(paths(analysis::with_default_gpu_axis({hw, seqs}, {}, plain)) == V{"hardware", "engine.max_num_seqs"});
  // --gpus on pools would be ignored: an error naming it, from either entry.
  CHECK_THROWS_WITH(analysis::default_search_axes_for(disagg, {"l40s-48gb"}), Contains("--gpus") && Contains("disaggregation.decode.gpu"));
  CHECK_THROWS_WITH(analysis::with_default_gpu_axis({seqs}, {"l40s-48gb"}, disagg), Contains("--gpus"));
  // A card axis on a disaggregated base names the axis and where its cards are.
  analysis::SearchOptions o;
  o.target_qps = 1;
  o.axes = {{"hardware.gpu", {"l40s-48gb"}}};
  CHECK_THROWS_WITH(analysis::plan_search(disagg, o, spec::Catalog::builtin()),
                    Contains("search.axes[0] (hardware.gpu)") && Contains("disaggregation.prefill.gpu"));
}

TEST_CASE("search: a disaggregated base is sized by its pools' split, as capacity sizes a unit", "[search]") {
  // Issue 29's leftover: a disaggregated base was refused. Now the unit (prefill + decode pools) is searched over
  // its split and replicated to the target; each member's bill is its units' GPUs at their pools' prices.
  Json j = base();
  j.erase("hardware");
  j["disaggregation"] = {{"prefill", {{"gpu", "a100-80gb-sxm"}, {"replicas", 1}, {"price_per_gpu_hour", 1.8}}},
                         {"decode", {{"gpu", "rtx4090-24gb"}, {"replicas", 2}, {"price_per_gpu_hour", 0.4}}},
                         {"link", {{"kind", "ethernet"}, {"bandwidth_gbps", 100}}}};
  j["workload"]["num_requests"] = 300;
  j["workload"]["warmup_requests"] = 30;
  analysis::SearchOptions o;
  o.target_qps = 6;
  o.axes = analysis::with_default_gpu_axis({{"engine.max_num_seqs", {128}}}, {}, j);
  o.screen.num_requests = 200;
  o.screen.warmup_requests = 20;
  o.screen.replications = 1;
  o.final_check = o.screen;
  o.jobs = 2;
  const auto r = analysis::search(j, o, spec::Catalog::builtin());
  CHECK(r.enumerated == 2 * 4);  // prefill {1, 2} x decode {1, 2, 3, 4}
  REQUIRE(r.winner);
  const auto& w = r.front[*r.winner];
  CHECK(w.evaluation.meets_slo);
  std::int64_t prefill = 0, decode = 0;
  for (const auto& [path, v] : w.candidate.point) {
    if (path == "disaggregation.prefill.replicas") prefill = v.get<std::int64_t>();
    if (path == "disaggregation.decode.replicas") decode = v.get<std::int64_t>();
  }
  REQUIRE(prefill >= 1);
  REQUIRE(decode >= 1);
  CHECK(w.candidate.gpus_per_replica == prefill + decode);
  // The bill prices what was sized: units x (prefill A100s at 1.80 + decode 4090s at 0.40) x 730 h.
  CHECK(w.evaluation.monthly_cost ==
        Approx(w.evaluation.replicas * (prefill * 1.8 + decode * 0.4) * 730).epsilon(1e-9));
  CHECK(w.evaluation.capacity_qps * w.evaluation.replicas >= o.target_qps * (1 - 1e-9));
  for (const auto& m : r.front) CHECK(m.evaluation.monthly_cost >= w.evaluation.monthly_cost);
}

TEST_CASE("search: an axis never overrides a field the caller set on top of the scenario", "[search]") {
  // Attack (issue 29): `search --vllm-args "... --max-num-seqs 32"` and `--set hardware.tp=2` searched 64..512
  // sequences and 1..8 GPUs anyway, the setting dropped without a word. A default axis over a field set yields to it
  // (noted); the card axis with the split set, and a given axis over a field set, are refused naming both.
  const auto defaults = analysis::default_search_axes({"a100-80gb-sxm", "2xa100-80gb-sxm"});
  auto paths = [](const std::vector<analysis::SearchAxis>& axes) {
    std::vector<std::string> out;
    for (const auto& a : axes) out.push_back(a.path);
    return out;
  };
  std::vector<std::string> notes;
  CHECK(paths(analysis::search_axes_for_sets(defaults, {}, {}, notes)) == paths(defaults));
  CHECK(notes.empty());
  // A vLLM name (from a server line) meets its field.
  for (const auto& set : {std::pair<std::string, Json>{"max_num_seqs", 32}, {"engine.max_num_seqs", 32}}) {
    notes.clear();
    const auto kept = analysis::search_axes_for_sets(defaults, {}, {set}, notes);
    INFO(set.first);
    CHECK(paths(kept) == std::vector<std::string>{"hardware.gpu", "engine.max_num_batched_tokens"});
    REQUIRE(notes.size() == 1);
    CHECK_THAT(notes[0], Contains("engine.max_num_seqs is not searched") && Contains("32"));
  }
  // A section set whole holds every field of it: both engine axes yield.
  notes.clear();
  CHECK(paths(analysis::search_axes_for_sets(defaults, {}, {{"engine", Json{{"max_num_seqs", 32}}}}, notes)) ==
        std::vector<std::string>{"hardware.gpu"});
  CHECK(notes.size() == 2);
  // The card axis writes the split: a split set with it is refused, naming the way to give it.
  CHECK_THROWS_WITH(analysis::search_axes_for_sets(defaults, {}, {{"hardware.tp", 2}}, notes),
                    Contains("hardware.gpu") && Contains("hardware.tp = 2") && Contains("--gpus 2x"));
  CHECK_THROWS_WITH(analysis::search_axes_for_sets(defaults, {}, {{"tensor_parallel_size", 2}}, notes),
                    Contains("hardware.gpu"));
  // The card set by the caller: the default card axis yields.
  notes.clear();
  CHECK(paths(analysis::search_axes_for_sets(defaults, {}, {{"hardware.gpu", "h100-80gb-sxm"}}, notes)) ==
        std::vector<std::string>{"engine.max_num_seqs", "engine.max_num_batched_tokens"});
  // An axis the caller gave over a field set is refused, as a sweep refuses --set on its grid axis.
  const std::vector<analysis::SearchAxis> given{{"engine.max_num_seqs", {Json(16), Json(32)}}};
  CHECK_THROWS_WITH(analysis::search_axes_for_sets(given, {"engine.max_num_seqs"}, {{"engine.max_num_seqs", 64}}, notes),
                    Contains("search.axes[0] (engine.max_num_seqs)") && Contains("engine.max_num_seqs = 64"));
  // Fields no axis touches pass through.
  notes.clear();
  CHECK(paths(analysis::search_axes_for_sets(defaults, {}, {{"model", "llama-3.1-8b"}, {"quant.kv_cache", "fp8"}}, notes)) ==
        paths(defaults));
  CHECK(notes.empty());
}

TEST_CASE("search: two axes over one field are refused, not run under labels they did not set", "[search]") {
  // The class: an axis beside one of its own fields (engine beside engine.max_num_seqs, hardware beside
  // hardware.gpu) or the same path twice; the later overwrote the earlier, and the member "engine={max_num_seqs:
  // 32} seqs=64" ran at 64. The sweep's rule (analysis::refuse_overlapping_paths), named at search.axes.
  const Json base = {{"model", "llama-3.1-8b"}, {"hardware", {{"gpu", "a100-80gb-sxm"}}}};
  analysis::SearchOptions o;
  o.target_qps = 1;
  o.axes = {{"engine", {Json{{"max_num_seqs", 32}}}}, {"engine.max_num_seqs", {64}}};
  CHECK_THROWS_WITH(analysis::plan_search(base, o, spec::Catalog::builtin()),
                    Contains("search.axes") && Contains("'engine' and 'engine.max_num_seqs' overlap"));
  o.axes = {{"engine.max_num_seqs", {32}}, {"engine.max_num_seqs", {64}}};
  CHECK_THROWS_WITH(analysis::plan_search(base, o, spec::Catalog::builtin()),
                    Contains("search.axes") && Contains("'engine.max_num_seqs' is given twice"));
  o.axes = {{"hardware.gpu", {"a100-80gb-sxm"}}, {"engine.max_num_seqs", {32, 64}}};
  CHECK_NOTHROW(analysis::plan_search(base, o, spec::Catalog::builtin()));
}
