// vLLM's --max-model-len auto (the planner's default): the model's context when its KV fits, else the largest that
// does; a number set by the user keeps the strict check. Checked over the catalogue's models, cards and formats.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "llmsim/spec/scenario.hpp"
#include "memory_test_util.hpp"

using namespace llmsim;

namespace {

memory::MemoryPlan plan_context_case(const std::string& model, const std::string& gpu, const std::string& weights,
                                     memory::ContextRequest context) {
  const auto& cat = test::cat();
  const auto g = cat.gpu(gpu);
  const auto m = cat.model(model);
  spec::Quantization q;
  q.weights = spec::format_for_gpu(spec::weight_format(weights), g);
  const spec::EngineConfig e = spec::effective_engine(spec::EngineConfig{}, g, false);
  if (context.tokens == 0) context.tokens = spec::default_max_model_len(m, e);
  return memory::plan_memory(m, q, g, spec::ParallelConfig{1, 1}, e, context);
}

}  // namespace

TEST_CASE("auto context: the model's limit when it fits, else the largest that does (every model x card x format)") {
  int lowered = 0, kept = 0;
  for (const std::string model : {"llama-3.1-8b", "qwen2.5-14b", "qwen2.5-32b", "llama-3.1-70b"})
    for (const std::string gpu : {"rtx4090-24gb", "rtx4090-48gb", "a100-80gb-sxm"})
      for (const std::string w : {"fp16", "awq-int4"}) {
        INFO(model << " " << w << " on " << gpu);
        const auto strict = plan_context_case(model, gpu, w, {0, false});
        const auto autofit = plan_context_case(model, gpu, w, {0, true});
        CHECK(autofit.max_model_len_auto);
        CHECK(autofit.max_model_len_wanted == strict.max_model_len);
        if (strict.fits) {  // nothing to lower: the same plan
          ++kept;
          CHECK(autofit.fits);
          CHECK(autofit.max_model_len == strict.max_model_len);
          CHECK(memory::context_note(autofit) == "auto: the model's limit");
          continue;
        }
        if (!autofit.fits) {  // weights or activations overflow: auto cannot help, and says the same
          CHECK(autofit.reason == strict.reason);
          CHECK(strict.longest_context_tokens == 0);
          continue;
        }
        ++lowered;
        CHECK(autofit.max_model_len < strict.max_model_len);
        // The largest: that length passes the strict check, one block more does not.
        const auto at = plan_context_case(model, gpu, w, {autofit.max_model_len, false});
        CHECK(at.fits);
        const auto above = plan_context_case(model, gpu, w, {autofit.max_model_len + 16, false});
        CHECK_FALSE(above.fits);
        CHECK(at.kv_capacity_tokens == autofit.kv_capacity_tokens);  // the same pool, only the context differs
        CHECK(memory::context_note(autofit).find("does not fit") != std::string::npos);
      }
  CHECK(lowered > 0);  // the class is exercised both ways
  CHECK(kept > 0);
}

TEST_CASE("auto context is reported in one form everywhere") {
  const auto p = plan_context_case("llama-3.1-8b", "rtx4090-24gb", "fp16", {0, true});
  REQUIRE(p.fits);
  const std::string text = memory::describe_context(p);
  CHECK(text.rfind("max_model_len ", 0) == 0);
  CHECK(text.find("(auto: the model's 131,072 does not fit)") != std::string::npos);
  CHECK(memory::describe_context(p.max_model_len, memory::context_note(p)) == text);
  CHECK(memory::to_json(p)["max_model_len_note"] == memory::context_note(p));
  // A number the user set carries no note.
  const auto set = plan_context_case("llama-3.1-8b", "rtx4090-24gb", "fp16", {4096, false});
  CHECK(memory::describe_context(set) == "max_model_len 4,096");
}

TEST_CASE("a scenario without max_model_len plans auto; \"auto\" and -1 say the same; a number stays strict") {
  const auto& cat = test::cat();
  auto resolved = [&](const std::string& engine) {
    return spec::resolve(spec::scenario_from_text(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "rtx4090-24gb"},
                                                      "engine": )" + engine + "}", "test"),
                         cat);
  };
  for (const std::string e : {"{}", R"({"max_model_len": "auto"})", R"({"max_model_len": -1})", R"({"max_model_len": "AUTO"})"}) {
    INFO(e);
    auto rs = resolved(e);
    CHECK(rs.max_model_len_auto);
    const auto before = memory::plan_memory(rs);
    CHECK(before.fits);
    CHECK(before.max_model_len < 131072);
    memory::fit_context(rs);  // what the simulator runs
    CHECK(rs.max_model_len == before.max_model_len);
    CHECK(memory::plan_memory(rs).max_model_len == before.max_model_len);  // idempotent, note kept
    CHECK(memory::context_note(memory::plan_memory(rs)) == memory::context_note(before));
  }
  auto strict = resolved(R"({"max_model_len": 131072})");
  CHECK_FALSE(strict.max_model_len_auto);
  const auto p = memory::plan_memory(strict);
  CHECK_FALSE(p.fits);
  CHECK(p.reason.find("lower max_model_len") != std::string::npos);
  memory::fit_context(strict);
  CHECK(strict.max_model_len == 131072);
  CHECK_THROWS_WITH(resolved(R"({"max_model_len": "big"})"), Catch::Contains("engine.max_model_len"));
  CHECK_THROWS_WITH(resolved(R"({"max_model_len": -2})"), Catch::Contains("engine.max_model_len"));
}

TEST_CASE("auto context of a fleet: each member fits its own, and requests are cut to the smallest") {
  auto rs = spec::resolve(spec::scenario_from_text(R"({"model": "llama-3.1-8b", "hardware": {"router": "round_robin",
      "fleet": [{"gpu": "a100-80gb-sxm", "replicas": 1}, {"gpu": "rtx4090-24gb", "replicas": 1}]}})", "test"),
                          test::cat());
  REQUIRE(rs.fleet.size() == 2);
  memory::fit_context(rs);
  const int a100 = rs.fleet[0].max_model_len, rtx = rs.fleet[1].max_model_len;
  CHECK(a100 == 131072);  // the A100 holds the model's whole context
  CHECK(rtx < 131072);    // the 4090 the largest it can
  CHECK(rs.max_model_len == rtx);
  CHECK(memory::context_note(rs) == "auto: the model's 131,072 does not fit");  // said of what the fleet runs
}

TEST_CASE("auto context: the pool's concurrency at shorter contexts is what a strict plan at that length says") {
  // Guide 003: 8B FP16 on a 4090 leaves ~8 GB of KV — auto plans one sequence of ~50k tokens, which alone reads as
  // one user; the same pool holds several chats of 8,192 tokens, exactly as `--max-model-len 8192` plans them.
  for (const std::string model : {"llama-3.1-8b", "gemma-2-9b", "qwen2.5-14b"})
    for (const std::string gpu : {"rtx4090-24gb", "a100-80gb-sxm"}) {
      INFO(model << " on " << gpu);
      const auto autofit = plan_context_case(model, gpu, model == "qwen2.5-14b" ? "awq-int4" : "fp16", {0, true});
      REQUIRE(autofit.fits);
      int listed = 0;
      for (const auto& [tokens, seqs] : autofit.concurrent_seqs_at) {
        CHECK(tokens < autofit.max_model_len);
        const auto strict = plan_context_case(model, gpu, model == "qwen2.5-14b" ? "awq-int4" : "fp16", {tokens, false});
        REQUIRE(strict.fits);
        CHECK(seqs == strict.max_concurrent_seqs);
        CHECK(seqs >= autofit.max_concurrent_seqs);
        ++listed;
      }
      CHECK(listed == (autofit.max_model_len > 32768 ? 3 : autofit.max_model_len > 8192 ? 2 : autofit.max_model_len > 2048 ? 1 : 0));
      CHECK(memory::to_json(autofit)["concurrent_seqs_at"].size() == autofit.concurrent_seqs_at.size());
    }
  const auto p = plan_context_case("llama-3.1-8b", "rtx4090-24gb", "fp16", {0, true});
  CHECK(p.max_concurrent_seqs == 1);  // the longest context that fits: one sequence by construction
  REQUIRE(p.concurrent_seqs_at.size() == 3);
  CHECK(p.concurrent_seqs_at[1].first == 8192);
  CHECK(p.concurrent_seqs_at[1].second >= 5);  // ~6.6 GB of KV at 128 KiB/token: ~6 chats of 8,192
}

TEST_CASE("auto context named under a vLLM release without it: planned, and the note says what to pass instead") {
  // --max-model-len auto / -1 came with vllm#29431 and works from 0.14.0 (vllm#31260); 0.8.4 refuses it. llmsim plans
  // it all the same (its default) and says which number that release needs: the fitted context, which passes the
  // strict check (a number is planned strictly).
  CHECK(spec::vllm_release_without_auto_context(std::string("vllm==0.8.4")) == std::optional<std::string>("0.8.4"));
  CHECK(spec::vllm_release_without_auto_context(std::string("vllm==0.13.0")) == std::optional<std::string>("0.13.0"));
  CHECK_FALSE(spec::vllm_release_without_auto_context(std::string("vllm==0.14.0")));
  CHECK_FALSE(spec::vllm_release_without_auto_context(std::nullopt));
  CHECK_FALSE(spec::vllm_release_without_auto_context(std::string("sglang==0.4.9")));

  const auto& cat = test::cat();
  const auto g = cat.gpu("rtx4090-24gb");
  const auto m = cat.model("llama-3.1-8b");  // 131,072 tokens do not fit beside 16 GB of weights
  spec::Quantization q;
  q.weights = spec::format_for_gpu(spec::weight_format("fp16"), g);
  auto plan_at = [&](const char* release, int max_model_len, memory::ContextRequest context) {
    spec::EngineConfig e = spec::effective_engine(spec::EngineConfig{}, g, false);
    e.runtime_release = release;
    e.max_model_len = max_model_len;
    return memory::plan_memory(m, q, g, spec::ParallelConfig{1, 1}, e, context);
  };
  const memory::ContextRequest wanted{m.max_position_embeddings, true};
  const auto old = plan_at("vllm==0.8.4", spec::kMaxModelLenAuto, wanted);
  REQUIRE(old.fits);
  REQUIRE(old.max_model_len < m.max_position_embeddings);
  CHECK(old.auto_context_refused_by == "0.8.4");
  const std::string note = memory::context_note(old);
  CHECK_THAT(note, Catch::StartsWith("auto: the model's 131,072 does not fit"));
  CHECK_THAT(note, Catch::Contains("vLLM 0.8.4 has no --max-model-len auto (from 0.14.0) and would refuse it: pass "
                                   "--max-model-len " + std::to_string(old.max_model_len)));
  // That number is what the release needs: planned strictly, it fits, with the same pool.
  const auto strict = plan_at("vllm==0.8.4", old.max_model_len, {old.max_model_len, false});
  CHECK(strict.fits);
  CHECK(strict.kv_capacity_tokens == old.kv_capacity_tokens);
  // A release with auto, or auto left unset (the planner's default, not a flag vLLM sees): no such note.
  CHECK(plan_at("vllm==0.14.0", spec::kMaxModelLenAuto, wanted).auto_context_refused_by.empty());
  const auto unset = plan_at("vllm==0.8.4", 0, wanted);
  CHECK(unset.auto_context_refused_by.empty());
  CHECK(memory::context_note(unset).find("refuse") == std::string::npos);
  CHECK(memory::context_note(unset) == memory::context_note(plan_at("vllm==0.14.0", spec::kMaxModelLenAuto, wanted)));

  // Through a scenario, as simulate reports it (the fitted scenario's note).
  Json doc = {{"model", "llama-3.1-8b"},
              {"hardware", {{"gpu", "rtx4090-24gb"}}},
              {"engine", {{"runtime", "vllm==0.8.4"}, {"max_model_len", "auto"}}},
              {"workload", {{"arrival", {{"process", "poisson"}, {"rate", 1.0}}}, {"num_requests", 10}}}};
  spec::ResolvedScenario rs = spec::resolve(spec::scenario_from_json(JsonView(doc, "")), cat);
  memory::fit_context(rs);
  CHECK_THAT(memory::context_note(rs), Catch::Contains("pass --max-model-len " + std::to_string(rs.max_model_len)));
  doc["engine"]["runtime"] = "vllm==0.14.0";
  rs = spec::resolve(spec::scenario_from_json(JsonView(doc, "")), cat);
  memory::fit_context(rs);
  CHECK(memory::context_note(rs).find("refuse") == std::string::npos);
}
