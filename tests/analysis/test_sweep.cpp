// Grid expansion, deterministic threaded sweeps, and --fail-if on real rows.
#include <catch2/catch.hpp>

#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/fail_if.hpp"
#include "llmsim/analysis/search.hpp"
#include "llmsim/analysis/sweep.hpp"
#include "llmsim/core/error.hpp"
#include "scenarios.hpp"

using namespace llmsim;
using test::chat_json;

namespace {

std::string grid_text(const std::string& grid) {
  Json base = chat_json();
  base["workload"]["num_requests"] = 120;
  base["workload"]["warmup_requests"] = 10;
  return R"({"base": )" + base.dump() + R"(, "grid": )" + grid + "}";
}

}  // namespace

TEST_CASE("a grid is the cartesian product in file order, last path fastest", "[analysis][sweep]") {
  const auto g = analysis::parse_grid(
      grid_text(R"({"workload.arrival.rate": [1, 2, 4], "hardware.gpu": ["rtx4090-24gb", "a100-80gb-sxm"]})"), "t");
  REQUIRE(g.label_paths == std::vector<std::string>{"workload.arrival.rate", "hardware.gpu"});
  REQUIRE(g.points.size() == 6);
  CHECK(g.points[0].labels[0].second == 1);
  CHECK(g.points[0].labels[1].second == "rtx4090-24gb");
  CHECK(g.points[1].labels[1].second == "a100-80gb-sxm");
  CHECK(g.points[2].labels[0].second == 2);
  CHECK(g.points[5].scenario.hardware.gpu == "a100-80gb-sxm");
  CHECK(*spec::offered_rate(g.points[5].scenario.workload) == Approx(4));
}

TEST_CASE("a grid over hardware.gpu bills each card at its own price, not the base's", "[analysis][sweep][price]") {
  // chat_json's base prices its A100 at $2.0/h; a 4090 point must not inherit that price.
  const auto g = analysis::parse_grid(grid_text(R"({"hardware.gpu": ["rtx4090-24gb", "a100-80gb-sxm"]})"), "t");
  REQUIRE(g.points.size() == 2);
  CHECK_FALSE(g.points[0].scenario.hardware.price_per_gpu_hour);  // the 4090's catalogue price applies
  CHECK(g.points[1].scenario.hardware.price_per_gpu_hour == 2.0);  // the base's own card keeps its price
  const auto rows = analysis::run_sweep(g.points, 1);
  REQUIRE(rows[0].summary);
  CHECK(rows[0].summary->cost.per_hour == Approx(spec::Catalog::builtin().gpu("rtx4090-24gb").price_per_hour));
  // A point that prices its card itself keeps that price, in a grid or in per-point overrides.
  const auto priced = analysis::parse_grid(
      grid_text(R"({"hardware.gpu": ["rtx4090-24gb"], "hardware.price_per_gpu_hour": [0.4]})"), "t");
  CHECK(priced.points[0].scenario.hardware.price_per_gpu_hour == 0.4);
  Json base = chat_json();
  const auto list = analysis::parse_grid(
      R"({"base": )" + base.dump() +
          R"(, "scenarios": [{"hardware.gpu": "rtx4090-24gb"}, {"hardware.gpu": "l4-24gb", "hardware.price_per_gpu_hour": 0.3}]})",
      "t");
  CHECK_FALSE(list.points[0].scenario.hardware.price_per_gpu_hour);
  CHECK(list.points[1].scenario.hardware.price_per_gpu_hour == 0.3);
}

TEST_CASE("a card moved in any section that prices one is billed at its own price, not the base's",
          "[analysis][sweep][search][price]") {
  // A disaggregated base prices its decode 4090s at $0.40/h: an A100 on a grid axis, a search candidate or a Python
  // keyword must not inherit that price (it did: both decode cards cost the same in `search`).
  Json base = chat_json();
  base.erase("hardware");
  base["workload"]["num_requests"] = 120;
  base["workload"]["warmup_requests"] = 10;
  base["disaggregation"] = Json::parse(R"({
      "prefill": {"gpu": "a100-80gb-sxm", "replicas": 1, "price_per_gpu_hour": 1.8, "purchase_price_per_gpu": 15000},
      "decode": {"gpu": "rtx4090-24gb", "replicas": 1, "price_per_gpu_hour": 0.4, "purchase_price_per_gpu": 1800},
      "link": {"kind": "ethernet", "bandwidth_gbps": 100}})");
  const auto& cat = spec::Catalog::builtin();
  const auto pool_price = [](const spec::Scenario& s) { return s.disaggregation->decode.hardware.price_per_gpu_hour; };
  const auto g = analysis::parse_grid(
      R"({"base": )" + base.dump() + R"(, "grid": {"disaggregation.decode.gpu": ["rtx4090-24gb", "a100-80gb-sxm"]}})",
      "t");
  REQUIRE(g.points.size() == 2);
  CHECK(pool_price(g.points[0].scenario) == 0.4);  // the base's own card keeps its price
  CHECK_FALSE(pool_price(g.points[1].scenario));   // the A100: its catalogue price
  CHECK_FALSE(g.points[1].scenario.disaggregation->decode.hardware.purchase_price_per_gpu);
  CHECK(g.points[1].scenario.disaggregation->prefill.hardware.price_per_gpu_hour == 1.8);  // the other pool: as given
  const auto rows = analysis::run_sweep(g.points, 1);
  REQUIRE(rows[1].summary);
  CHECK(rows[1].summary->cost.per_hour == Approx(1.8 + cat.gpu("a100-80gb-sxm").price_per_hour));
  // A point that prices the moved card itself keeps its price (the field, or a merged pool object holding it).
  const auto priced = analysis::parse_grid(
      R"({"base": )" + base.dump() +
          R"(, "grid": {"disaggregation.decode": [{"gpu": "a100-80gb-sxm", "price_per_gpu_hour": 1.1}]}})",
      "t");
  CHECK(pool_price(priced.points[0].scenario) == 1.1);
  // Search's candidates and Python's keywords price through the same rule (analysis::apply_overrides).
  const Json moved = analysis::apply_overrides(base, {{"disaggregation.decode.gpu", "h100-80gb-sxm"}},
                                               analysis::OverrideRule::merge);
  CHECK_FALSE(moved["disaggregation"]["decode"].contains("price_per_gpu_hour"));
  CHECK(moved["disaggregation"]["prefill"]["price_per_gpu_hour"] == 1.8);
  const Json kept = analysis::apply_overrides(
      base, {{"disaggregation.decode.gpu", "h100-80gb-sxm"}, {"disaggregation.decode.price_per_gpu_hour", 2.2}});
  CHECK(kept["disaggregation"]["decode"]["price_per_gpu_hour"] == 2.2);
  CHECK_FALSE(kept["disaggregation"]["decode"].contains("purchase_price_per_gpu"));  // dropped: it priced the 4090
}

TEST_CASE("bad grids are clear errors", "[analysis][sweep]") {
  auto fails_with = [](const std::string& text, const std::string& needle) {
    try {
      analysis::parse_grid(text, "grid.json");
      FAIL("expected ConfigError for " << text);
    } catch (const ConfigError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(needle) != std::string::npos);
    }
  };
  fails_with(grid_text("{}"), "empty grid");
  fails_with(grid_text(R"({"hardware.gpu": []})"), "empty list");
  fails_with(grid_text(R"({"hardware.gpu": "a100-80gb-sxm"})"), "expected a list");
  fails_with(grid_text(R"({"hardware.gpux": ["a"]})"), "hardware.gpux");
  fails_with(R"({"scenarios": []})", "empty grid");
  fails_with(R"({})", "empty grid");
  fails_with(R"({"grid": {"hardware.gpu": ["a"]}})", "base");
  fails_with(grid_text(R"({"workload.arrival.rate": [1, -2]})"), "grid point 1");
  CHECK_THROWS_AS(analysis::run_sweep({}, 1), ConfigError);
}

TEST_CASE("a scenario given where a grid is expected says so, not only its first unknown field", "[analysis][sweep]") {
  // attack9: `llmsim sweep SCENARIO.json` said "disaggregation: unknown field (valid: base, grid, ...)".
  for (const char* text : {R"({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm"}, "workload": {}})",
                           R"({"name": "x", "disaggregation": {}})"}) {
    INFO(text);
    CHECK_THROWS_WITH(analysis::parse_grid(text, "grid.json"),
                      Catch::StartsWith("grid: this looks like a scenario, not a grid") &&
                          Catch::Contains("llmsim simulate FILE") && Catch::Contains("wrap it as the grid's base"));
  }
  // A grid with a stray key is still refused by that key.
  CHECK_THROWS_WITH(analysis::parse_grid(R"({"base": {}, "grid": {"workload.seed": [1]}, "model": "x"})", "grid.json"),
                    Catch::Contains("model") && !Catch::Contains("looks like a scenario"));
}

TEST_CASE("explicit scenario lists and per-point overrides", "[analysis][sweep]") {
  Json base = chat_json();
  Json list = Json::object();
  list["base"] = base;
  list["scenarios"] = Json::parse(R"([{"hardware.gpu": "rtx4090-24gb"}, {"engine.max_num_seqs": 32}])");
  const auto g = analysis::expand_grid(JsonView(list, ""));
  REQUIRE(g.points.size() == 2);
  CHECK(g.points[0].scenario.hardware.gpu == "rtx4090-24gb");
  CHECK(g.points[1].scenario.engine.max_num_seqs == 32);
  CHECK(g.points[1].labels.size() == 2);  // every point has every label (null where not set)
  CHECK(g.points[1].labels[0].second.is_null());

  Json plain = Json::array({base, base});
  plain[1]["name"] = "second";
  const auto h = analysis::expand_grid(JsonView(plain, ""));
  REQUIRE(h.points.size() == 2);
  CHECK(h.points[1].labels[0].second == "second");
}

TEST_CASE("sweep rows come back in grid order, identical for any thread count", "[analysis][sweep][engine]") {
  const auto g = analysis::parse_grid(
      grid_text(R"({"hardware.gpu": ["rtx4090-24gb", "a100-80gb-sxm"], "model": ["llama-3.1-8b", "llama-3.1-70b"],
                    "workload.arrival.rate": [0.5, 2]})"),
      "t");
  REQUIRE(g.points.size() == 8);
  std::vector<std::size_t> seen;
  const auto one = analysis::run_sweep(g.points, 1);
  const auto two = analysis::run_sweep(g.points, 2, [&](std::size_t done, std::size_t) { seen.push_back(done); });
  REQUIRE(one.size() == 8);
  REQUIRE(two.size() == 8);
  for (std::size_t i = 0; i < 8; ++i) CHECK(analysis::to_json(one[i]).dump() == analysis::to_json(two[i]).dump());
  CHECK(seen.back() == 8);
  // 70B fp16 does not fit one 24 GB card: a row with its reason and no numbers.
  CHECK_FALSE(one[2].fits);
  CHECK_FALSE(one[2].reason.empty());
  CHECK_FALSE(one[2].summary);
  CHECK(one[0].fits);
  CHECK(one[0].labels[0].second == "rtx4090-24gb");
  // Columns: grid labels first, the same for every row.
  const auto cols = analysis::row_columns(g.label_paths);
  CHECK(cols[0] == "hardware.gpu");
  CHECK(cols[1] == "model");
  CHECK(cols[2] == "workload.arrival.rate");
  for (const auto& r : one) {
    const auto flat = analysis::flatten(r);
    REQUIRE(flat.size() == cols.size());
    for (std::size_t k = 0; k < cols.size(); ++k) CHECK(flat[k].first == cols[k]);
  }
}

TEST_CASE("--fail-if flags exactly the rows that violate it", "[analysis][sweep][fail_if][engine]") {
  const auto g = analysis::parse_grid(grid_text(R"({"workload.arrival.rate": [0.5, 1, 2, 4, 8]})"), "t");
  const auto rows = analysis::run_sweep(g.points, 2);
  const auto cols = analysis::row_columns(g.label_paths);
  // A bound between two rows' values splits them.
  std::vector<double> p95;
  for (const auto& r : rows) {
    REQUIRE(r.summary);
    p95.push_back(r.summary->ttft_ms.p95);
  }
  std::vector<double> sorted = p95;
  std::sort(sorted.begin(), sorted.end());
  const double bound = 0.5 * (sorted[1] + sorted[2]);
  const auto cond = analysis::parse_fail_if("ttft_ms.p95 > " + std::to_string(bound), cols);
  int flagged = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const bool hit = !analysis::violations({cond}, analysis::flatten(rows[i])).empty();
    CHECK(hit == (p95[i] > bound));
    flagged += hit;
  }
  CHECK(flagged == 3);
  const auto none = analysis::parse_fail_if("ttft_ms.p95 > " + std::to_string(sorted.back() + 1), cols);
  for (const auto& r : rows) CHECK(analysis::violations({none}, analysis::flatten(r)).empty());
  CHECK_THROWS_AS(analysis::parse_fail_if("ttft.p95 > 1", cols), ConfigError);
}

TEST_CASE("options of a capacity search that does not run are refused, named as the caller gave them", "[analysis][sweep]") {
  // The rule of `llmsim sweep --rel-tol` without --capacity and of Python's sweep(rel_tol=...) without capacity=True.
  CHECK_NOTHROW(analysis::refuse_capacity_options_without_capacity(true, {"--rel-tol"}, "--capacity"));
  CHECK_NOTHROW(analysis::refuse_capacity_options_without_capacity(false, {}, "--capacity"));
  try {
    analysis::refuse_capacity_options_without_capacity(false, {"rel_tol", "replications"}, "capacity=True");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("rel_tol, replications") &&
                                          Catch::Contains("given without capacity=True") &&
                                          Catch::Contains("they configure the per-point capacity search"));
  }
}

TEST_CASE("an axis value over a whole section merges into the base's section, in grids, overrides and searches",
          "[analysis][sweep][search]") {
  // Issue 29: `engine=[{"max_num_seqs": 64}]` replaced the section and silently dropped the base's LoRA slots and
  // context (a 4090 of two replicas became one); then it was refused. Now a value merges field by field
  // (spec::merge_json_path): what it gives replaces, what it leaves out stays, null clears.
  Json base = chat_json("rtx4090-24gb");
  base["engine"]["enable_lora"] = true;
  base["engine"]["max_loras"] = 2;
  base["hardware"]["replicas"] = 2;
  auto grid = [&](const std::string& axis) {
    return analysis::parse_grid(R"({"base": )" + base.dump() + R"(, "grid": )" + axis + "}", "t");
  };
  const auto seqs = grid(R"({"engine": [{"max_num_seqs": 64}, {"max_num_seqs": 128}]})");
  REQUIRE(seqs.points.size() == 2);
  for (const auto& p : seqs.points) {
    CHECK(p.scenario.engine.enable_lora);
    CHECK(p.scenario.engine.max_loras == 2);
    CHECK(p.scenario.engine.max_model_len == 8192);
    CHECK(p.scenario.hardware.replicas == 2);
  }
  CHECK(seqs.points[0].scenario.engine.max_num_seqs == 64);
  CHECK(seqs.points[1].scenario.engine.max_num_seqs == 128);
  // The same points as the fields' own paths: one rule.
  const auto paths = grid(R"({"engine.max_num_seqs": [64, 128]})");
  CHECK(spec::to_json(paths.points[1].scenario) == spec::to_json(seqs.points[1].scenario));
  // hardware: the replicas stay; the base's price priced its own card, so another card is billed at its own.
  const auto moved = grid(R"({"hardware": [{"gpu": "a100-80gb-sxm"}, {"gpu": "rtx4090-24gb"},
                                            {"gpu": "a100-80gb-sxm", "price_per_gpu_hour": 3.5}]})");
  CHECK(moved.points[0].scenario.hardware.replicas == 2);
  CHECK(moved.points[0].scenario.hardware.gpu == "a100-80gb-sxm");
  CHECK_FALSE(moved.points[0].scenario.hardware.price_per_gpu_hour.has_value());
  CHECK(moved.points[1].scenario.hardware.price_per_gpu_hour == 2.0);  // same card: its price stays
  CHECK(moved.points[2].scenario.hardware.price_per_gpu_hour == 3.5);
  // Nested sections merge too; null clears a field (back to its default: no TPOT target).
  const auto slo = grid(R"({"slo": [{"ttft_ms": {"p95": 500}}, {"tpot_ms": null}]})");
  CHECK(slo.points[0].scenario.slo.targets.size() == 2);
  CHECK(slo.points[1].scenario.slo.targets.size() == 1);
  const auto cleared = grid(R"({"engine": [{"enable_lora": null, "max_loras": null}]})");
  CHECK_FALSE(cleared.points[0].scenario.engine.enable_lora);
  CHECK(cleared.points[0].scenario.engine.max_model_len == 8192);
  // A null field is still checked against the schema; an unknown one named as any path is.
  CHECK_THROWS_WITH(grid(R"({"engine": [{"max_num_seq": null}]})"), Catch::Contains("max_num_seq"));
  CHECK_THROWS_WITH(grid(R"({"engine": [{"max_num_seq": 64}]})"), Catch::Contains("did you mean"));
  // Ambiguous: a variant's kind changes and the base sets fields beside it; a merge cannot tell whether they carry
  // over. Refused naming them and the two ways out; giving them (or null) runs.
  CHECK_THROWS_WITH(grid(R"({"workload": [{"input_tokens": {"dist": "fixed", "value": 500}}]})"),
                    Catch::Contains("workload.input_tokens.dist") && Catch::Contains("\"lognormal\"") &&
                        Catch::Contains("mean = 800") && Catch::Contains("sigma = 0.8") &&
                        Catch::Contains("null to clear them"));
  CHECK_THROWS_WITH(grid(R"({"workload.arrival": [{"process": "gamma", "cv": 2}]})"),
                    Catch::Contains("workload.arrival.process") && Catch::Contains("rate = 2.0"));
  const auto gamma = grid(R"({"workload.arrival": [{"process": "gamma", "cv": 2, "rate": 2}]})");
  CHECK(std::get<spec::GammaArrivals>(gamma.points[0].scenario.workload.arrival).cv == 2);
  const auto fixed = grid(R"({"workload": [{"input_tokens": {"dist": "fixed", "value": 500, "mean": null,
                                                             "sigma": null}}]})");
  CHECK(std::get<spec::FixedLength>(fixed.points[0].scenario.workload.input_tokens).value == 500);
  CHECK(fixed.points[0].scenario.workload.num_requests == 400);  // the rest of the workload kept
  // A sweep's --set meets the fields a merged value writes, not its whole section: engine.block_size beside
  // engine=[{"max_num_seqs": ...}] runs, engine.max_num_seqs is refused as before.
  CHECK_NOTHROW(analysis::refuse_sets_on_axes(seqs, {{"engine.block_size", 32}}));
  CHECK_THROWS_WITH(analysis::refuse_sets_on_axes(seqs, {{"engine.max_num_seqs", 32}}),
                    Catch::Contains("overlaps the grid axis 'engine'"));
  CHECK_THROWS_WITH(analysis::refuse_sets_on_axes(seqs, {{"engine", Json::object()}}),
                    Catch::Contains("is an axis of this grid"));
  // A list of per-point overrides over a base: the same rule.
  const auto listed = analysis::parse_grid(R"({"base": )" + base.dump() +
                                               R"(, "scenarios": [{"engine": {"max_num_seqs": 64}}]})", "t");
  CHECK(listed.points.at(0).scenario.engine.max_loras == 2);
  CHECK(listed.points.at(0).scenario.engine.max_num_seqs == 64);
  // search: each candidate is the base with its values merged (the base's replicas are search's to size).
  analysis::SearchOptions opt;
  opt.target_qps = 1;
  opt.axes = {{"engine", {Json::parse(R"({"max_num_seqs": 64})")}}, {"hardware.gpu", {"rtx4090-24gb"}}};
  const auto plan = analysis::plan_search(base, opt, spec::Catalog::builtin());
  REQUIRE_FALSE(plan.candidates.empty());
  CHECK(plan.candidates[0].scenario["engine"]["max_loras"] == 2);
  CHECK(plan.candidates[0].scenario["engine"]["enable_lora"] == true);
  CHECK(plan.candidates[0].scenario["engine"]["max_num_seqs"] == 64);
  opt.axes = {{"workload", {Json::parse(R"({"input_tokens": {"dist": "fixed", "value": 500}})")}},
              {"hardware.gpu", {"rtx4090-24gb"}}};
  CHECK_THROWS_WITH(analysis::plan_search(base, opt, spec::Catalog::builtin()),
                    Catch::Contains("search.axes[0] (workload) value 1") && Catch::Contains("mean = 800"));
}

TEST_CASE("a point whose values contradict each other is a row that cannot run; a value bad everywhere is an error",
          "[analysis][sweep]") {
  // "2x...@pp" is a pipeline of two cards (tp 2 would need four); "2x..." is tp 2 (tp 1 would need one card). Each
  // value runs in another point, so only those two rows cannot run, with the reason; the grid does not fail.
  Json base = chat_json();
  base["model"] = "llama-3.1-8b";
  base["workload"]["num_requests"] = 30;
  base["workload"]["warmup_requests"] = 0;
  const std::string cards = R"(["rtx4090-24gb", "2xrtx4090-24gb@pp", "2xrtx4090-24gb"])";
  const auto g = analysis::parse_grid(
      R"({"base": )" + base.dump() + R"(, "grid": {"hardware.gpu": )" + cards + R"(, "hardware.tp": [1, 2]}})", "t");
  REQUIRE(g.points.size() == 6);
  const auto rows = analysis::run_sweep(g.points, 2);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const bool impossible = i == 3 || i == 4;
    INFO("point " << i << ": " << rows[i].reason);
    CHECK(rows[i].fits == !impossible);
    CHECK(rows[i].labels == g.points[i].labels);
    if (impossible) {
      CHECK(rows[i].reason.rfind("cannot run: hardware.tp: tp ", 0) == 0);
      CHECK(rows[i].reason.find("contradicts gpu '" + rows[i].labels[0].second.get<std::string>() + "'") != std::string::npos);
      CHECK_FALSE(rows[i].summary);
    } else {
      CHECK(rows[i].summary);
    }
  }
  // The whole grid's verdicts, as a part of it run elsewhere carries them (Python's Dask chunks, a resumed sweep).
  const auto verdicts = analysis::screen_points(g.points);
  CHECK(verdicts[3] == rows[3].reason);
  CHECK(verdicts[0].empty());
  // A value no point can run with is an error naming the first point that carries it, before anything runs.
  const auto typo = analysis::parse_grid(
      R"({"base": )" + base.dump() + R"(, "grid": {"hardware.gpu": ["rtx4090-24gb", "nope-gpu"], "hardware.tp": [1, 2]}})", "t");
  CHECK_THROWS_WITH(analysis::run_sweep(typo.points, 1),
                    Catch::Contains("grid point 2 (hardware.gpu=\"nope-gpu\", hardware.tp=1)") &&
                        Catch::Contains("unknown GPU"));
  // What is set on top of every point (--set hardware.tp=2): the card that cannot take it is refused, not the grid.
  auto on_top = analysis::parse_grid(R"({"base": )" + base.dump() + R"(, "grid": {"hardware.gpu": )" + cards + "}}", "t");
  std::vector<bool> read_before;
  for (auto& p : on_top.points) {
    read_before.push_back(p.problem.empty());
    Json doc = spec::to_json(p.scenario);
    spec::set_json_path(doc, "hardware.tp", 2);
    p = analysis::sweep_point(doc, p.labels);
  }
  analysis::judge_sets(on_top, read_before);
  CHECK(on_top.points[0].cannot_run.empty());
  CHECK(on_top.points[1].cannot_run.find("contradicts gpu '2xrtx4090-24gb@pp'") != std::string::npos);
  CHECK(on_top.points[2].cannot_run.empty());
}
