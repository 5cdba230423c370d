// The first vLLM and SGLang release serving each catalogued architecture (spec/architecture_release.hpp). A row's
// release is the first tag whose release notes or maintainers say it serves the architecture; "taken as" marks a
// placement read from a date or a third party rather than the tag itself. A bound (not_before) comes from dates
// alone: a release published before the model cannot have served it. Rows with nothing established refuse nothing.
#include "llmsim/spec/architecture_release.hpp"

#include "llmsim/core/error.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "release_order.hpp"

namespace llmsim::spec {

namespace {

using F = FirstRelease;

constexpr EngineFirst unknown(const char* why) { return {F::not_established, "", why}; }

// A bound shared by the models published in 2026: vLLM 0.13.0 was out by 2025-12-29 (the server log of vllm#31480,
// "vLLM API server version 0.13.0"), before any of them was published.
constexpr const char* kPublished2026 =
    "published in 2026, after vLLM 0.13.0 (out by 2025-12-29: vllm#31480's server log); the first release with it "
    "is not read here";

}  // namespace

const std::vector<ArchitectureRelease>& architecture_releases() {
  static const std::vector<ArchitectureRelease> rows = {
      {"LlamaForCausalLM", "Llama",
       {F::every_release, "", "llama.py is in vLLM's first release (v0.1.0, 2023-06-20), before llmsim's 0.2.0 floor"},
       {F::every_release, "", "SGLang's first releases (January 2024) served Llama"}},
      {"MistralForCausalLM", "Mistral",
       {F::every_release, "",
        "Mistral 7B (2023-09-27) was served by vLLM 0.2.0 (2023-09-28), llmsim's floor (taken as: its notes not read)"},
       {F::every_release, "", "SGLang's first releases (January 2024) served Mistral (taken as)"}},
      {"MixtralForCausalLM", "Mixtral: MoE",
       {F::release, "0.2.4", "vllm#2011 (Mixtral 8x7B support, merged 2023-12-11), first released in 0.2.4"},
       {F::every_release, "", "SGLang's first releases (January 2024) served Mixtral (taken as)"}},
      {"Qwen2ForCausalLM", "Qwen2 / Qwen2.5",
       {F::release, "0.3.0",
        "Qwen1.5's launch (2024-02-05, the first Qwen2ForCausalLM checkpoints) asks for vLLM >= 0.3.0 (taken as the "
        "first release)"},
       unknown("the first SGLang release with Qwen2ForCausalLM is not read here")},
      {"Phi3ForCausalLM", "Phi-3",
       {F::release, "0.4.1", "vllm#4298 (Phi-3-mini, April 2024), in 0.4.1's notes (taken as)"},
       unknown("the first SGLang release with Phi3ForCausalLM is not read here")},
      {"Gemma2ForCausalLM", "Gemma-2: alternating sliding-window attention",
       {F::release, "0.5.1", "vllm#5908 (Gemma 2, merged 2024-06-27), first released in 0.5.1"},
       unknown("the first SGLang release with Gemma2ForCausalLM is not read here")},
      {"DeepseekV3ForCausalLM", "DeepSeek-V3/R1, Kimi-K2: MLA + MoE",
       {F::release, "0.6.6",
        "DeepSeek-V3 (2024-12-26): \"It is supported since v0.6.6\" (a maintainer on vllm#11559, 2024-12-27); "
        "0.6.5 (2024-12-17) predates the model"},
       {F::release, "0.4.1",
        "SGLang v0.4.1's release notes: \"now supports DeepSeek V3\" (quoted on sglang#2585, 2024-12-26)"}},
      {"Gemma3ForConditionalGeneration", "Gemma-3: 5:1 local/global attention",
       {F::release, "0.8.0",
        "Gemma 3 (2025-03-12) arrived with 0.8.0: vllm#14971 (2025-03-17) tags Gemma3 \"given the 0.8.0 release\"; "
        "0.7.3 refuses it (vllm#14696's error; ms-swift#3660)"},
       unknown("the first SGLang release with Gemma3ForConditionalGeneration is not read here")},
      {"Llama4ForConditionalGeneration", "Llama-4: MoE, chunked local attention",
       {F::release, "0.8.3",
        "Llama 4 (2025-04-05) needs vLLM 0.8.3 (kubeai#495 \"Llama 4 support and vLLM 0.8.3\"; clemcore#171)"},
       unknown("the first SGLang release with Llama4ForConditionalGeneration is not read here")},
      {"Qwen3ForCausalLM", "Qwen3",
       {F::release, "0.8.4", "\"vLLM v0.8.4 and higher natively supports all Qwen3 and Qwen3MoE models\" (vllm#17327)"},
       unknown("the first SGLang release with Qwen3ForCausalLM is not read here")},
      {"Qwen3MoeForCausalLM", "Qwen3-MoE",
       {F::release, "0.8.4", "\"vLLM v0.8.4 and higher natively supports all Qwen3 and Qwen3MoE models\" (vllm#17327)"},
       unknown("the first SGLang release with Qwen3MoeForCausalLM is not read here")},
      {"Glm4MoeForCausalLM", "GLM-4.5/4.6/4.7: MoE",
       unknown("the first vLLM release with Glm4MoeForCausalLM is not read here"),
       unknown("the first SGLang release with Glm4MoeForCausalLM is not read here")},
      {"GptOssForCausalLM", "gpt-oss: MoE with MXFP4 experts, sinks, sliding windows",
       {F::release, "0.10.1",
        "gpt-oss (2025-08-05) shipped as the wheel vllm==0.10.1+gptoss, then 0.10.1; 0.10.0 (2025-07-24) predates it"},
       {F::release, "0.5.0",
        "sglang#8833 (gpt-oss day-0 support, 2025-08-05: images lmsysorg/sglang:v0.5.0rc2; model code sglang#8822)"}},
      {"Qwen3NextForCausalLM", "Qwen3-Next: gated DeltaNet + gated attention",
       {F::release, "0.10.2",
        "Qwen3-Next (2025-09-11) with vLLM 0.10.2 (2025-09-13) (taken as); 0.10.1 (2025-08-18) predates it"},
       unknown("the first SGLang release with Qwen3NextForCausalLM is not read here")},
      {"DeepseekV32ForCausalLM", "DeepSeek-V3.2: MLA + DeepSeek sparse attention",
       {F::release, "0.11.0",
        "DeepSeek-V3.2-Exp (2025-09-29, vLLM day-0: DeepSeek-V3.2-Exp#2) first released in 0.11.0 (2025-10-02) "
        "(taken as); 0.10.2 (2025-09-13) predates it"},
       {F::not_before, "0.5.2",
        "DeepSeek-V3.2-Exp was published 2025-09-29, after SGLang 0.5.1 (sglang#9533, August 2025); the first "
        "release with it is not read here"}},
      {"MiniMaxM2ForCausalLM", "MiniMax-M2: MoE",
       {F::not_before, "0.11.1",
        "MiniMax-M2 was published 2025-10-27, after vLLM 0.11.0 (2025-10-02); the first release with it is not read "
        "here"},
       unknown("the first SGLang release with MiniMaxM2ForCausalLM is not read here")},
      {"NemotronHForCausalLM", "Nemotron-H: Mamba-2 + attention (+ MoE)",
       unknown("the first vLLM release with NemotronHForCausalLM (and with its MoE form) is not read here"),
       unknown("the first SGLang release with NemotronHForCausalLM is not read here")},
      {"Glm4MoeLiteForCausalLM", "GLM-4.7-Flash: MLA + MoE", {F::not_before, "0.14.0", kPublished2026},
       unknown("the first SGLang release with Glm4MoeLiteForCausalLM is not read here")},
      {"GlmMoeDsaForCausalLM", "GLM-5: MoE + DeepSeek sparse attention", {F::not_before, "0.14.0", kPublished2026},
       unknown("the first SGLang release with GlmMoeDsaForCausalLM is not read here")},
      {"KimiK25ForConditionalGeneration", "Kimi-K2.5: DeepSeek-V3 text model + vision",
       {F::not_before, "0.14.0", kPublished2026},
       unknown("the first SGLang release with KimiK25ForConditionalGeneration is not read here")},
      {"Qwen3_5ForConditionalGeneration", "Qwen3.5: gated DeltaNet + gated attention",
       {F::not_before, "0.14.0", kPublished2026},
       unknown("the first SGLang release with Qwen3_5ForConditionalGeneration is not read here")},
      {"Qwen3_5MoeForConditionalGeneration", "Qwen3.5-MoE: gated DeltaNet + gated attention + MoE",
       {F::not_before, "0.14.0", kPublished2026},
       unknown("the first SGLang release with Qwen3_5MoeForConditionalGeneration is not read here")},
      {"Gemma4ForConditionalGeneration", "Gemma-4",
       unknown("vllm-metal#250 (2026-04-09) moves to vLLM 0.19.0 for Gemma 4; the first release with it is not read"),
       unknown("the first SGLang release with Gemma4ForConditionalGeneration is not read here")},
  };
  return rows;
}

const ArchitectureRelease* architecture_release(const std::string& architecture) {
  for (const auto& r : architecture_releases())
    if (architecture == r.architecture) return &r;
  return nullptr;
}

std::optional<std::string> check_release_serves(const ModelSpec& model, const std::optional<std::string>& release,
                                                const std::string& path) {
  if (!release || !is_engine_version(*release)) return std::nullopt;
  const EngineVersion v = parse_engine_version(*release, path);
  if (v.engine != "vllm" && v.engine != "sglang") return std::nullopt;
  const ArchitectureRelease* row = architecture_release(model.architecture);
  if (!row) return std::nullopt;
  const EngineFirst& first = v.engine == "vllm" ? row->vllm : row->sglang;
  if (first.kind != F::release && first.kind != F::not_before) return std::nullopt;
  const EngineVersion need = parse_engine_version(v.engine + "==" + first.version, path);
  if (!detail::release_before(v.numbers, need.numbers)) return std::nullopt;
  const std::string engine = v.engine == "vllm" ? "vLLM" : "SGLang";
  const std::string what = "'" + model.id + "' (" + row->architecture + ", " + row->family + ")";
  const std::string since = first.kind == F::release
                                ? engine + " serves it from " + first.version
                                : "no " + engine + " release before " + std::string(first.version) + " serves it";
  const std::string problem = v.engine + "==" + v.version + " predates " + what + ": " + since + " (" +
                              first.source + ")";
  // A local build ("+ppu1.5.0", "+cu121" of a fork) may carry a backport its release number does not say.
  if (v.version.find('+') != std::string::npos)
    return problem + "; simulated as written, since a local build ('+" + v.version.substr(v.version.find('+') + 1) +
           "') may carry the support";
  throw ConfigError(path, problem + "; name a release from " + first.version + " on, or the runtime without a release");
}

}  // namespace llmsim::spec
