// Speculative decoding's step cost (perf/speculative.hpp, docs/speculative-decoding.md) and its configuration
// errors: the verification of k + 1 tokens costs little more than a decode step at batch 1 (the weights are read
// once) and about k + 1 decode steps' compute at a large batch; the proposer's passes are an op of their own.
#include <catch2/catch.hpp>

#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/speculative.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

using namespace llmsim;

namespace {

spec::ResolvedScenario resolve(const Json& speculative, const Json& workload = Json::object(),
                               const char* model = "llama-3.1-8b", const char* gpu = "rtx4090-24gb") {
  Json j{{"model", model},
         {"hardware", {{"gpu", gpu}}},
         {"engine", {{"max_model_len", 4096}, {"max_num_seqs", 256}, {"max_num_batched_tokens", 8192}}},
         {"workload", workload}};
  if (!speculative.is_null()) j["engine"]["speculative"] = speculative;
  return spec::resolve(spec::scenario_from_json(JsonView(j, "")), spec::Catalog::builtin());
}

perf::BatchShape decodes(std::int64_t n, std::int64_t context, std::int64_t k = 0) {
  perf::BatchShape b;
  b.decode_seqs = n;
  b.decode_context = n * context;
  b.spec_tokens = k;
  return b;
}

std::string error_of(const Json& speculative, const Json& workload = Json::object(), const char* model = "llama-3.1-8b") {
  try {
    resolve(speculative, workload, model);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("verification of k+1 tokens: cheap at batch 1, compute-bound at a large batch", "[speculative]") {
  const auto rs = resolve({{"method", "ngram"}, {"num_speculative_tokens", 4}}, {{"speculative_acceptance_rate", 0.5}});
  const perf::CostModel cm = perf::make_cost_model(rs);
  REQUIRE(cm.proposer() == nullptr);  // n-gram: proposals from the CPU
  // Batch 1: the 16 GB weight stream dominates; 5 query tokens instead of 1 add a little.
  const double d1 = cm.iteration_time(decodes(1, 1000)), v1 = cm.iteration_time(decodes(1, 1000, 4));
  CHECK(v1 > d1);
  CHECK(v1 < 1.15 * d1);
  // Batch 256: 1280 tokens through the linears, compute-bound: several decode steps' worth (the 33 GB of KV the
  // decoders read is the same either way, so the ratio stays below k + 1).
  const double d256 = cm.iteration_time(decodes(256, 1000)), v256 = cm.iteration_time(decodes(256, 1000, 4));
  INFO("decode " << d1 * 1e3 << " / " << d256 * 1e3 << " ms, verify " << v1 * 1e3 << " / " << v256 * 1e3 << " ms");
  CHECK(v256 > 2.0 * d256);
  CHECK(v256 < 5.0 * d256);
  CHECK(v256 / d256 > 1.8 * (v1 / d1));
  // The same tokens as one prefill-like pass: verification is what a 5-token chunk per sequence costs, give or
  // take the decode kernel's KV streaming floor.
  perf::BatchShape chunks;
  for (int i = 0; i < 256; ++i) chunks.add_prefill(5, 1000, true);
  CHECK(v256 == Approx(cm.iteration_time(chunks)).epsilon(0.25));
}

TEST_CASE("the proposer's passes: EAGLE's one layer, a 1B draft, none for n-gram", "[speculative]") {
  const auto eagle = perf::make_cost_model(resolve({{"method", "eagle"}, {"num_speculative_tokens", 4}}));
  const auto draft = perf::make_cost_model(
      resolve({{"method", "draft"}, {"draft_model", "llama-3.2-1b"}, {"num_speculative_tokens", 4}}));
  const auto ngram = perf::make_cost_model(
      resolve({{"method", "ngram"}, {"num_speculative_tokens", 4}}, {{"speculative_acceptance_rate", 0.5}}));
  const auto b = decodes(1, 1000, 4);
  double pe = 0, pd = 0, pn = 0;
  const double te = eagle.iteration_time(b, &pe), td = draft.iteration_time(b, &pd), tn = ngram.iteration_time(b, &pn);
  CHECK(pn == 0);
  CHECK(pe > 0);
  CHECK(pd > pe);  // 16 layers + LM head four times vs one layer + LM head four times
  // The target's part is the same verification whichever proposes.
  CHECK(te - pe == Approx(tn).epsilon(1e-12));
  CHECK(td - pd == Approx(tn).epsilon(1e-12));
  // EAGLE at batch 1: 4 passes of one layer (~0.44 GB) + the LM head (~1.05 GB) on a 1 TB/s card: a few ms.
  CHECK(pe > 4 * 1.4e9 / 1008e9);
  CHECK(pe < 4 * 3.0e9 / 1008e9);
  // The breakdown names it and sums to the same bits.
  const perf::StepCost s = draft.breakdown(b);
  CHECK(s.time_s == td);
  bool named = false;
  for (const auto& o : s.ops) named = named || (o.name == "proposer" && o.time_s == pd);
  CHECK(named);
  CHECK(s.tokens == 5);
}

TEST_CASE("speculative step shapes", "[speculative]") {
  perf::BatchShape b = decodes(3, 100, 2);
  b.add_prefill(50, 0, true);
  const auto v = perf::verification_sums(b);
  CHECK(v.queries == 9);
  CHECK(v.attn_pairs == Approx(3 * 300 + 3 * 3 * 4 / 2.0));  // (k+1)·Σc + d·(k+1)(k+2)/2
  CHECK(v.kv_tokens == 300 + 9);
  CHECK(v.lm_rows == 1 + 9);
  const auto f = perf::proposer_first_pass(b);
  CHECK(f.decode_seqs == 0);
  CHECK(f.prefill_tokens == 50 + 9);
  CHECK(f.prefill_last_chunks == 1 + 3);
  CHECK(perf::proposer_decode_step(b).decode_seqs == 4);
  CHECK(b.tokens() == 59);
  b.spec_tokens = -1;
  CHECK_THROWS_WITH(perf::validate(b), Catch::Contains("batch.spec_tokens"));
}

TEST_CASE("speculative decoding: bad input names the field", "[speculative]") {
  CHECK_THAT(error_of({{"method", "eagle"}}, {{"speculative_acceptance_rate", 1.5}}),
             Catch::Contains("workload.speculative_acceptance_rate") && Catch::Contains("1.5"));
  CHECK_THAT(error_of({{"method", "eagle"}, {"num_speculative_tokens", 0}}),
             Catch::Contains("engine.speculative.num_speculative_tokens"));
  CHECK_THAT(error_of({{"method", "draft"}, {"draft_model", "llama-3.1-70b"}}),
             Catch::Contains("engine.speculative.draft_model") && Catch::Contains("smaller"));
  CHECK_THAT(error_of({{"method", "draft"}, {"draft_model", "qwen2.5-7b"}}),
             Catch::Contains("engine.speculative.draft_model") && Catch::Contains("vocab_size"));
  CHECK_THAT(error_of({{"method", "draft"}}), Catch::Contains("engine.speculative.draft_model"));
  CHECK_THAT(error_of({{"method", "ngram"}, {"draft_model", "llama-3.2-1b"}}),
             Catch::Contains("engine.speculative.draft_model"));
  CHECK_THAT(error_of({{"method", "ngram"}}), Catch::Contains("workload.speculative_acceptance_rate"));
  CHECK_THAT(error_of({{"method", "mtp"}}), Catch::Contains("engine.speculative.method") && Catch::Contains("multi-token"));
  CHECK_THAT(error_of({{"method", "medusa"}}), Catch::Contains("engine.speculative.method"));
  CHECK_THAT(error_of({{"method", "eagle"}, {"num_speculative_tokens", 40}}),
             Catch::Contains("engine.speculative.num_speculative_tokens"));
  CHECK_THAT(error_of({{"method", "eagle"}, {"k", 4}}), Catch::Contains("engine.speculative"));
  // max_num_seqs (256) × (k + 1) must fit the token budget (8192): k = 32 does not.
  CHECK_THAT(error_of({{"method", "eagle"}, {"num_speculative_tokens", 32}}), Catch::Contains("max_num_batched_tokens"));
  // NaN cannot be written in JSON; in C++ the same check refuses it.
  spec::Workload w;
  w.speculative_acceptance_rate = std::nan("");
  CHECK_THROWS_WITH(w.validate(), Catch::Contains("workload.speculative_acceptance_rate"));
  // MTP on a model that has the layers resolves, with the DeepSeek-V3 default acceptance.
  const auto v3 = spec::resolve(
      spec::scenario_from_json(JsonView(Json{{"model", "deepseek-v3"},
                                             {"hardware", {{"gpu", "8xh200-141gb-sxm"}}},
                                             {"engine", {{"max_model_len", 4096}, {"speculative", {{"method", "mtp"}}}}}},
                                        "")),
      spec::Catalog::builtin());
  REQUIRE(v3.speculation);
  CHECK(v3.speculation->acceptance_rate == 0.85);
  CHECK(v3.speculation->proposer->num_layers == 1);
  CHECK(v3.speculation->proposer->is_moe());
}

TEST_CASE("expected tokens per step: (1 - a^(k+1)) / (1 - a)", "[speculative]") {
  CHECK(spec::expected_tokens_per_step(0.0, 4) == 1.0);
  CHECK(spec::expected_tokens_per_step(1.0, 4) == 5.0);
  CHECK(spec::expected_tokens_per_step(0.5, 1) == Approx(1.5));
  CHECK(spec::expected_tokens_per_step(0.8, 4) == Approx(1 + 0.8 + 0.64 + 0.512 + 0.4096));
}
