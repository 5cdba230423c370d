// Engine releases → runtimes (spec/runtime_version.hpp): each range's bounds, the scheduler a release runs, the
// scenario field, and the errors a user sees for a release llmsim does not model.
#include <catch2/catch.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "llmsim/spec/scenario.hpp"
#include "llmsim/spec/v0_running_order.hpp"

using namespace llmsim;
using namespace llmsim::spec;

namespace {

RuntimeForVersion of(const std::string& s) { return runtime_for_version(parse_engine_version(s)); }

std::string version_error_of(const std::string& s) {
  try {
    of(s);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

Scenario scenario_with_engine(const std::string& engine_json) {
  return scenario_from_text(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm"},
                                "engine": )" + engine_json + "}",
                            "test");
}

}  // namespace

TEST_CASE("vLLM releases map to the runtime of their decode kernel and output processor", "[runtime_version]") {
  // Each boundary on both sides: flash-attn decoding from 0.4.3 (vllm#4907), async output processing from 0.6.0
  // (vllm#7049), the V1 engine by default from 0.8.0.
  CHECK(of("vllm==0.2.7").runtime == Runtime::vllm_v0_paged);
  CHECK(of("vllm==0.4.2").runtime == Runtime::vllm_v0_paged);
  CHECK(of("vllm==0.4.3").runtime == Runtime::vllm_v0_sync);
  CHECK(of("vllm==0.5.4").runtime == Runtime::vllm_v0_sync);
  CHECK(of("vllm==0.5.5").runtime == Runtime::vllm_v0_sync);
  CHECK(of("vllm==0.6.0").runtime == Runtime::vllm_v0);
  CHECK(of("vllm==0.6.1.post2").runtime == Runtime::vllm_v0);
  CHECK(of("vllm==0.7.3").runtime == Runtime::vllm_v0);
  CHECK(of("vllm==0.8.0").runtime == Runtime::vllm_v1);
  CHECK(of("vllm==v0.10.1").runtime == Runtime::vllm_v1);
  CHECK(of("vllm==0.11.0rc1").runtime == Runtime::vllm_v1);
  CHECK(of("vllm==1.0").runtime == Runtime::vllm_v1);
  // The scheduler: V0's prefill-first before 0.8, V1's unified step after.
  CHECK(of("vllm==0.5.4").policy == SchedulerPolicy::vllm_v0);
  CHECK(of("vllm==0.7.3").policy == SchedulerPolicy::vllm_v0);
  CHECK(of("vllm==0.8.0").policy == SchedulerPolicy::vllm);
  CHECK_THAT(of("vllm==0.4.2").why, Catch::Contains("vllm#4907"));
}

TEST_CASE("other engines' releases", "[runtime_version]") {
  CHECK(of("sglang==0.4.9").runtime == Runtime::sglang);
  REQUIRE(of("sglang==0.4.9").policy.has_value());  // SGLang's own scheduler
  CHECK(*of("sglang==0.4.9").policy == SchedulerPolicy::sglang);
  CHECK(*of("sglang==0.3.5").policy == SchedulerPolicy::sglang);
  CHECK(of("llama.cpp==b4000").runtime == Runtime::llama_cpp);
  CHECK(parse_engine_version("llama.cpp==b4000").numbers == std::vector<int>{4000});
  CHECK(of("LLaMA.cpp==b2824").runtime == Runtime::llama_cpp);
  CHECK(of("lmdeploy==0.1.0").runtime == Runtime::lmdeploy_turbomind);
  CHECK(of("lmdeploy==0.0.4").runtime == Runtime::lmdeploy_turbomind);
}

TEST_CASE("a release llmsim does not model is refused with what is modelled", "[runtime_version]") {
  CHECK_THAT(version_error_of("tensorrt-llm==0.12"), Catch::Contains("engine.runtime") && Catch::Contains("vllm") &&
                                                 Catch::Contains("not modelled"));
  CHECK_THAT(version_error_of("vllm==latest"), Catch::Contains("must start with a number"));
  CHECK_THAT(version_error_of("vllm=="), Catch::Contains("ENGINE==VERSION"));
  CHECK_THAT(version_error_of("==0.5.4"), Catch::Contains("ENGINE==VERSION"));
  CHECK_THAT(version_error_of("vllm==0.1.7"), Catch::Contains("0.2.0"));
  CHECK_THAT(version_error_of("lmdeploy==0.6.2"), Catch::Contains("v0.1 only"));
  CHECK(version_error_of("vllm==0.5.4").empty());
  // A plain runtime name still works, and an unknown one lists both forms.
  CHECK(parse_runtime("vllm-v0.5") == Runtime::vllm_v0_sync);
  CHECK(parse_runtime("vllm==0.5.4") == Runtime::vllm_v0_sync);
  try {
    parse_runtime("vllm-v9", "engine.runtime");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("vllm-v0.5") && Catch::Contains("vllm==0.5.4"));
  }
}

TEST_CASE("engine.runtime takes a release in a scenario: runtime, default scheduler, round trip", "[runtime_version]") {
  const Scenario old = scenario_with_engine(R"({"runtime": "vllm==0.5.4"})");
  CHECK(old.engine.runtime == Runtime::vllm_v0_sync);
  CHECK(old.engine.policy == SchedulerPolicy::vllm_v0);
  CHECK(old.engine.runtime_release == std::string("vllm==0.5.4"));
  const Json j = to_json(old);
  CHECK(j["engine"]["runtime"] == "vllm==0.5.4");
  const Scenario again = scenario_from_json(JsonView(j, ""));
  CHECK(again.engine.runtime == Runtime::vllm_v0_sync);
  CHECK(again.engine.policy == SchedulerPolicy::vllm_v0);
  // A policy the scenario names wins over the release's default (V1 was opt-in on 0.7).
  const Scenario opt_in = scenario_with_engine(R"({"runtime": "vllm==0.7.3", "policy": "vllm"})");
  CHECK(opt_in.engine.policy == SchedulerPolicy::vllm);
  CHECK(opt_in.engine.runtime == Runtime::vllm_v0);
  const Scenario current = scenario_with_engine(R"({"runtime": "vllm==0.10.1"})");
  CHECK(current.engine.policy == SchedulerPolicy::vllm);
  CHECK(current.engine.runtime == Runtime::vllm_v1);
  try {
    scenario_with_engine(R"({"runtime": "vllm==x"})");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("engine.runtime"));
  }
}

TEST_CASE("a vLLM release's V0 scheduler defaults: budgets, long-context chunking, the V0 engine of 0.8-0.10",
          "[runtime_version]") {
  // Chunked budget 512 until vllm#10544 (first released in 0.6.5), 2048 after; chunked prefill turned on for long
  // contexts from vllm#6666 (0.5.4); V0 behind VLLM_USE_V1=0 until 0.11 removed it.
  CHECK(of("vllm==0.5.5").v0_chunked_budget == 512);
  CHECK(of("vllm==0.6.4").v0_chunked_budget == 512);
  CHECK(of("vllm==0.6.5").v0_chunked_budget == 2048);
  CHECK(of("vllm==0.9.1").v0_chunked_budget == 2048);
  CHECK_FALSE(of("vllm==0.5.3").v0_long_context_chunked);
  CHECK(of("vllm==0.5.4").v0_long_context_chunked);
  // The running queue sorted by arrival (the preemption victim the latest arrival) until vllm#6867 (0.5.4).
  CHECK(of("vllm==0.4.1").v0_running_by_arrival);
  CHECK(of("vllm==0.5.3").v0_running_by_arrival);
  CHECK_FALSE(of("vllm==0.5.4").v0_running_by_arrival);
  CHECK_FALSE(of("vllm==0.9.1").v0_running_by_arrival);
  // vllm#6867 (0.5.4) .. vllm#7874 (0.6.0): chunked prefill's new prompts ahead of the running decodes.
  CHECK_FALSE(v0_prefills_ahead_of_decodes(std::string("vllm==0.5.3")));
  CHECK(v0_prefills_ahead_of_decodes(std::string("vllm==0.5.4")));
  CHECK(v0_prefills_ahead_of_decodes(std::string("vllm==0.5.5")));
  CHECK_FALSE(v0_prefills_ahead_of_decodes(std::string("vllm==0.6.0")));
  CHECK_FALSE(v0_prefills_ahead_of_decodes(std::string("vllm==0.6.3.post2.dev308+gb489fc3c")));
  CHECK_FALSE(v0_prefills_ahead_of_decodes(std::string("sglang==0.5.4")));
  CHECK_FALSE(v0_prefills_ahead_of_decodes(std::nullopt));
  CHECK(of("vllm==0.6.3").v0_runtime == Runtime::vllm_v0);
  CHECK(of("vllm==0.5.5").v0_runtime == Runtime::vllm_v0_sync);
  CHECK(of("vllm==0.9.1").v0_runtime == Runtime::vllm_v0);
  CHECK_FALSE(of("vllm==0.11.0").v0_runtime.has_value());
  CHECK(of("vllm==0.11.0").v0_chunked_budget == 0);
  CHECK(of("sglang==0.4.9").v0_chunked_budget == 0);

  auto resolved = [](const std::string& model, const std::string& engine) {
    const Scenario s = scenario_from_text(R"({"model": ")" + model + R"(", "hardware": {"gpu": "h100-80gb-sxm"},
                                             "engine": )" + engine + "}",
                                          "test");
    return resolve(s, Catalog::builtin()).scenario.engine;
  };
  // Prefill-first: every prompt fits one step, so the budget is the context limit (at least 2048).
  const auto llama2 = resolved("llama-2-7b", R"({"runtime": "vllm==0.6.3"})");
  CHECK(llama2.policy == SchedulerPolicy::vllm_v0);
  CHECK(llama2.max_num_batched_tokens == 4096);
  const auto short_ctx = resolved("llama-2-7b", R"({"runtime": "vllm==0.6.3", "max_model_len": 1024})");
  CHECK(short_ctx.max_num_batched_tokens == 2048);
  // Mistral-7B v0.1: 32K context, sliding window: no automatic chunking, a 32K budget (was 8192).
  const auto mistral = resolved("mistral-7b", R"({"runtime": "vllm==0.6.3"})");
  CHECK(mistral.policy == SchedulerPolicy::vllm_v0);
  CHECK(mistral.max_num_batched_tokens == 32768);
  // Llama-3.1's 128K context turns chunked prefill on, at the release's budget.
  const auto llama31_old = resolved("llama-3.1-8b", R"({"runtime": "vllm==0.6.3"})");
  CHECK(llama31_old.policy == SchedulerPolicy::chunked);
  CHECK(llama31_old.max_num_batched_tokens == 512);
  const auto llama31_new = resolved("llama-3.1-8b", R"({"runtime": "vllm==0.7.3"})");
  CHECK(llama31_new.policy == SchedulerPolicy::chunked);
  CHECK(llama31_new.max_num_batched_tokens == 2048);
  CHECK(resolved("llama-3.1-8b", R"({"runtime": "vllm==0.5.3"})").policy == SchedulerPolicy::vllm_v0);
  // LoRA keeps the automatic chunking off in every release with the rule (EngineArgs: `not self.enable_lora`):
  // prefill-first, the budget the context limit, as vLLM 0.6.3 runs Llama-3.1 with --enable-lora.
  for (const std::string release : {"vllm==0.5.4", "vllm==0.6.0", "vllm==0.6.3", "vllm==0.7.3"}) {
    INFO(release);
    const auto lora = resolved("llama-3.1-8b", R"({"runtime": ")" + release + R"(", "enable_lora": true})");
    CHECK(lora.policy == SchedulerPolicy::vllm_v0);
    CHECK(lora.max_num_batched_tokens == 131072);
    CHECK(resolved("llama-3.1-8b", R"({"runtime": ")" + release + R"(", "enable_lora": false})").policy ==
          SchedulerPolicy::chunked);
  }
  CHECK(resolved("llama-3.1-8b", R"({"runtime": "vllm==0.6.3", "max_model_len": 32768})").policy ==
        SchedulerPolicy::vllm_v0);
  // Chunked prefill the scenario sets off stays off above 32K (vllm#6666 turns on an unset flag only): prefill-first,
  // every prompt in one step, so the budget is the context limit.
  const auto named_off = resolved("llama-3.1-8b", R"({"runtime": "vllm==0.6.3", "policy": "vllm-v0"})");
  CHECK(named_off.policy == SchedulerPolicy::vllm_v0);
  CHECK(named_off.max_num_batched_tokens == 131072);
  const Scenario flag_off = scenario_from_text(R"({"model": "llama-3.1-8b", "enable_chunked_prefill": false,
                                                  "engine": {"runtime": "vllm==0.6.3", "max_model_len": 91680}})",
                                               "test");
  const auto off = resolve(flag_off, Catalog::builtin()).scenario.engine;
  CHECK(off.policy == SchedulerPolicy::vllm_v0);
  CHECK(off.max_num_batched_tokens == 91680);
  // A scenario written out and read back keeps the release's rule where the release chose the scheduler.
  const Scenario unset = scenario_from_text(R"({"model": "llama-3.1-8b", "engine": {"runtime": "vllm==0.6.3"}})", "t");
  CHECK(resolve(scenario_from_json(JsonView(to_json(unset), "")), Catalog::builtin()).scenario.engine.policy ==
        SchedulerPolicy::chunked);
  CHECK(resolve(scenario_from_json(JsonView(to_json(flag_off), "")), Catalog::builtin()).scenario.engine.policy ==
        SchedulerPolicy::vllm_v0);
  // A budget the scenario sets is kept.
  CHECK(resolved("llama-3.1-8b", R"({"runtime": "vllm==0.6.3", "max_num_batched_tokens": 4096})")
            .max_num_batched_tokens == 4096);
  // Without a release the long-standing defaults stay (policy vllm-v0: 8192, no automatic chunking).
  const auto no_release = resolved("llama-3.1-8b", R"({"policy": "vllm-v0"})");
  CHECK(no_release.policy == SchedulerPolicy::vllm_v0);
  CHECK(no_release.max_num_batched_tokens == 8192);
  // V1 releases keep V1's rule.
  CHECK(resolved("llama-3.1-8b", R"({"runtime": "vllm==0.9.1"})").max_num_batched_tokens == 8192);

  // A V0 scheduler named with 0.8-0.10 runs V0's engine (VLLM_USE_V1=0); 0.11 has none.
  CHECK(scenario_with_engine(R"({"runtime": "vllm==0.9.1", "policy": "vllm-v0"})").engine.runtime ==
        Runtime::vllm_v0);
  CHECK(scenario_with_engine(R"({"runtime": "vllm==0.9.1", "policy": "chunked"})").engine.runtime ==
        Runtime::vllm_v0);
  CHECK(scenario_with_engine(R"({"runtime": "vllm==0.9.1", "policy": "vllm"})").engine.runtime == Runtime::vllm_v1);
  CHECK(scenario_with_engine(R"({"runtime": "vllm==0.11.0", "policy": "vllm-v0"})").engine.runtime ==
        Runtime::vllm_v1);
  // ... and keeps it through a round trip.
  const Scenario v0 = scenario_with_engine(R"({"runtime": "vllm==0.9.1", "policy": "vllm-v0"})");
  CHECK(scenario_from_json(JsonView(to_json(v0), "")).engine.runtime == Runtime::vllm_v0);
}

TEST_CASE("a knob the scenario left unset never refuses it: a prefill-first budget rises to the context set",
          "[runtime_version]") {
  // The class: a default that turns a yes into a no. Without chunked prefill a whole prompt must fit one step;
  // vLLM V0's unset budget is max(max_model_len, 2048) in every release, so with or without engine.runtime a
  // max_model_len above llmsim's 8192 default runs with a budget of max_model_len instead of an error blaming
  // engine.max_num_batched_tokens, which the user never set. A budget the user set keeps the strict check.
  for (const char* policy : {"vllm-v0", "static"}) {
    INFO(policy);
    const std::string engine = std::string(R"({"policy": ")") + policy + R"(", "max_model_len": 16384)";
    const Scenario unset = scenario_from_text(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm"},
                                                "engine": )" + engine + "}}", "test");
    const auto e = resolve(unset, Catalog::builtin()).scenario.engine;
    CHECK(e.max_num_batched_tokens == 16384);
    const Scenario set = scenario_from_text(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm"},
                                              "engine": )" + engine + R"(, "max_num_batched_tokens": 8192}})", "test");
    CHECK_THROWS_WITH(resolve(set, Catalog::builtin()), Catch::Contains("engine.max_num_batched_tokens"));
  }
  // Shorter contexts keep the default budget (outputs that ran before are unchanged).
  const Scenario short_ctx = scenario_from_text(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm"},
                                                  "engine": {"policy": "vllm-v0", "max_model_len": 4096}})", "test");
  CHECK(resolve(short_ctx, Catalog::builtin()).scenario.engine.max_num_batched_tokens == 8192);
}

TEST_CASE("engine.runtime: blanks around a release or a name are one rule, leading and trailing alike",
          "[runtime_version]") {
  // The attack of session 40 found " vllm==0.5.4" refused while "vllm==0.5.4 " was kept (spec::trim_runtime_text).
  for (const std::string text : {" vllm==0.5.4", "vllm==0.5.4 ", "  vllm == 0.5.4\t", "VLLM==v0.5.4 "}) {
    INFO(text);
    const std::string in_json = text.back() == '\t' ? text.substr(0, text.size() - 1) + "\\t" : text;  // JSON escape
    const Scenario sc = scenario_with_engine(R"({"runtime": ")" + in_json + "\"}");
    CHECK(sc.engine.runtime == Runtime::vllm_v0_sync);
    CHECK(sc.engine.policy == SchedulerPolicy::vllm_v0);
    CHECK(sc.engine.runtime_release == std::string("vllm==0.5.4"));  // canonical, without the blanks
    CHECK(parse_runtime(text) == Runtime::vllm_v0_sync);
  }
  CHECK(parse_runtime(" sglang") == parse_runtime("sglang "));
  CHECK(parse_runtime(" sglang") == Runtime::sglang);
  // Blanks alone on either side of '==' are no engine or version: the form is named, not an unknown engine " ".
  CHECK_THAT(version_error_of(" ==0.5.4"), Catch::Contains("ENGINE==VERSION"));
  CHECK_THAT(version_error_of("vllm==  "), Catch::Contains("ENGINE==VERSION"));
}

TEST_CASE("vLLM's offline benchmark scripts before 0.6.4 pass enable_chunked_prefill themselves", "[runtime_version]") {
  // benchmark_latency.py / benchmark_throughput.py declared `--enable-chunked-prefill` as a store_true flag and called
  // LLM(enable_chunked_prefill=args.enable_chunked_prefill) until vllm#9529 made them take EngineArgs' arguments.
  CHECK(of("vllm==0.5.4").bench_scripts_pass_chunked_flag);
  CHECK(of("vllm==0.6.3").bench_scripts_pass_chunked_flag);
  CHECK(of("vllm==0.6.3.post2.dev308+gb489fc3c").bench_scripts_pass_chunked_flag);  // dstack's nightly
  CHECK_FALSE(of("vllm==0.6.4").bench_scripts_pass_chunked_flag);
  CHECK_FALSE(of("vllm==0.9.1").bench_scripts_pass_chunked_flag);
  CHECK_FALSE(of("vllm==0.11.0").bench_scripts_pass_chunked_flag);  // V1 only: EngineArgs
  CHECK_FALSE(of("sglang==0.4.9").bench_scripts_pass_chunked_flag);
  CHECK(bench_scripts_pass_chunked_flag(std::string("vllm==0.6.3")));
  CHECK_FALSE(bench_scripts_pass_chunked_flag(std::string("vllm==0.6.4")));
  CHECK_FALSE(bench_scripts_pass_chunked_flag(std::nullopt));
  CHECK_FALSE(bench_scripts_pass_chunked_flag(std::string("vllm-v0")));  // a runtime name: no release
  CHECK_THROWS_WITH(bench_scripts_pass_chunked_flag(std::string("vllm==x"), "runs[0].engine_version"),
                    Catch::Contains("runs[0].engine_version"));
}

TEST_CASE("FlashAttention-3 on Hopper from vLLM 0.7.0: earlier releases run FA2 there", "[runtime_version]") {
  // vllm#12093 ("Flash Attention 3 Support"), first released in 0.7.0; a runtime name prices today's kernels.
  CHECK_FALSE(of("vllm==0.5.4").quant_kernels.hopper_flash_attn3);
  CHECK_FALSE(of("vllm==0.6.3").quant_kernels.hopper_flash_attn3);
  CHECK_FALSE(of("vllm==0.6.6.post1").quant_kernels.hopper_flash_attn3);
  CHECK(of("vllm==0.7.0").quant_kernels.hopper_flash_attn3);
  CHECK(of("vllm==0.9.1").quant_kernels.hopper_flash_attn3);
  CHECK(quant_kernels_for(std::string("vllm-v0")).hopper_flash_attn3);
  CHECK(of("sglang==0.4.9").quant_kernels.hopper_flash_attn3);
}

TEST_CASE("FlashMLA from the 0.7.4 nightlies: vLLM 0.7.1-0.7.3 predate it and decode MLA with Triton", "[runtime_version]") {
  // DeepSeek released FlashMLA on 2025-02-24, after 0.7.3 (2025-02-20); vllm#13747 brought it to the 0.7.4 nightlies
  // (dstack's 0.7.4.dev181 ran it) and 0.8.0. A runtime name prices today's kernels.
  CHECK_FALSE(of("vllm==0.7.1").quant_kernels.hopper_flash_mla);
  CHECK_FALSE(of("vllm==0.7.3").quant_kernels.hopper_flash_mla);
  CHECK(of("vllm==0.7.4.dev181+gf35f8e22").quant_kernels.hopper_flash_mla);
  CHECK(of("vllm==0.8.0").quant_kernels.hopper_flash_mla);
  CHECK(of("vllm==0.8.4").quant_kernels.hopper_flash_mla);
  CHECK(quant_kernels_for(std::string("vllm-v0")).hopper_flash_mla);
  CHECK(of("sglang==0.4.3.post2").quant_kernels.hopper_flash_mla);
}

TEST_CASE("--engine-version: a bare version is the engine's, ENGINE==VERSION as written, a runtime name refused naming it",
          "[runtime_version]") {
  // One rule for `memory --engine-version`, `check --engine-version` and Python's engine_version= (attack11: a runtime
  // name such as "sglang" became "vllm==sglang" and was refused at engine.runtime quoting text nobody wrote).
  CHECK(release_from_flag("0.7.4", "vllm", "--engine-version") == "vllm==0.7.4");
  CHECK(release_from_flag(" v0.6.3 ", "vllm", "--engine-version") == "vllm==v0.6.3");
  CHECK(release_from_flag("0.4.9", "sglang", "--engine-version") == "sglang==0.4.9");
  CHECK(release_from_flag("sglang==0.5.3", "vllm", "--engine-version") == "sglang==0.5.3");
  CHECK(runtime_for_version(parse_engine_version(release_from_flag("v0.6.3", "vllm", "x"))).runtime == Runtime::vllm_v0);
  for (const std::string bad : {"sglang", "vllm-v0", "abc", "", "v"}) {
    INFO(bad);
    try {
      (void)release_from_flag(bad, "vllm", "--engine-version");
      FAIL("accepted");
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      CHECK(e.path() == "--engine-version");
      CHECK_THAT(what, Catch::Contains("got '" + bad + "'"));
      CHECK_THAT(what, !Catch::Contains("'vllm==" + bad + "'"));  // not the text it was turned into
      CHECK_THAT(what, Catch::Contains("ENGINE==VERSION"));
    }
  }
}
