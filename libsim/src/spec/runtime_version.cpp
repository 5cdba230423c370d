// Engine releases → the runtime llmsim prices. Every boundary below is a change in the engine's own repository (the
// PR or release that moved it); docs/cost-model.md "Runtimes by version" is the same table in prose.
#include "llmsim/spec/runtime_version.hpp"

#include <cctype>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "release_order.hpp"

namespace llmsim::spec {

namespace {

const std::vector<std::string>& modelled_engines() {
  static const std::vector<std::string> e = {"vllm", "sglang", "llama.cpp", "lmdeploy"};
  return e;
}

/// The numeric parts of a version: "0.6.1.post2" -> {0, 6, 1}; "b4000" -> {4000}; "0.11.0rc1" -> {0, 11, 0}.
/// Stops at the first part that does not start with a digit; a part's trailing letters ("0rc1") end the list.
std::vector<int> numeric_parts(std::string v) {
  if (!v.empty() && (v[0] == 'b' || v[0] == 'v') && v.size() > 1 && std::isdigit(static_cast<unsigned char>(v[1])))
    v.erase(0, 1);
  std::vector<int> out;
  std::size_t i = 0;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
    long n = 0;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
      n = n * 10 + (v[i] - '0');
      if (n > 1000000000) return {};  // not a version anyone released
      ++i;
    }
    out.push_back(static_cast<int>(n));
    if (i < v.size() && v[i] == '.' && i + 1 < v.size() && std::isdigit(static_cast<unsigned char>(v[i + 1]))) {
      ++i;
      continue;
    }
    break;
  }
  return out;
}

/// a < b on (major, minor, patch), missing parts = 0 (release_order.hpp).
bool before(const std::vector<int>& a, std::initializer_list<int> b) { return detail::release_before(a, b); }

}  // namespace

bool is_engine_version(const std::string& s) { return s.find("==") != std::string::npos; }

std::string trim_runtime_text(const std::string& s) {
  const auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  std::size_t b = 0, e = s.size();
  while (b < e && blank(s[b])) ++b;
  while (e > b && blank(s[e - 1])) --e;
  return s.substr(b, e - b);
}

std::string release_from_flag(const std::string& given, const std::string& engine, const std::string& path) {
  const std::string t = trim_runtime_text(given);
  if (is_engine_version(t)) return t;
  const auto digit = [&](std::size_t i) { return i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])) != 0; };
  if (digit(0) || (!t.empty() && t[0] == 'v' && digit(1))) return engine + "==" + t;
  throw ConfigError(path, "expected a release: a version (0.7.4, read as " + engine +
                              "'s) or ENGINE==VERSION (vllm==0.8.4, sglang==0.4.9), got '" + given + "'" +
                              (t.empty() ? std::string() : "; a runtime name is not a release: give its version"));
}

EngineVersion parse_engine_version(const std::string& s, const std::string& path) {
  const auto eq = s.find("==");
  if (eq == std::string::npos || eq == 0 || eq + 2 >= s.size()) {
    throw ConfigError(path, "expected ENGINE==VERSION (e.g. vllm==0.5.4, sglang==0.4.9, llama.cpp==b4000), got '" +
                                s + "'");
  }
  EngineVersion v;
  // Blanks around the engine or the version are dropped on both sides alike (trim_runtime_text).
  v.engine = trim_runtime_text(s.substr(0, eq));
  for (char& c : v.engine) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v.engine == "llamacpp" || v.engine == "llama-cpp") v.engine = "llama.cpp";
  v.version = trim_runtime_text(s.substr(eq + 2));
  if (v.engine.empty() || v.version.empty()) {
    throw ConfigError(path, "expected ENGINE==VERSION (e.g. vllm==0.5.4, sglang==0.4.9, llama.cpp==b4000), got '" +
                                s + "'");
  }
  if (v.version[0] == 'v') v.version.erase(0, 1);  // non-empty: checked above
  bool known = false;
  for (const auto& e : modelled_engines()) known = known || e == v.engine;
  if (!known) {
    throw ConfigError(path, unknown_name_message("engine", v.engine, modelled_engines()) +
                                " (TensorRT-LLM and other engines are not modelled)");
  }
  v.numbers = numeric_parts(v.version);
  if (v.numbers.empty()) {
    throw ConfigError(path, "'" + s + "': the version after '==' must start with a number (e.g. 0.5.4" +
                                std::string(v.engine == "llama.cpp" ? ", or a build such as b4000" : "") + ")");
  }
  return v;
}

namespace {
/// The V0 engine's scheduler defaults of a vLLM release (vllm/config.py SchedulerConfig, engine/arg_utils.py).
void set_v0_defaults(RuntimeForVersion& r, const std::vector<int>& n, Runtime v0) {
  r.v0_runtime = v0;
  r.v0_chunked_budget = before(n, {0, 6, 5}) ? 512 : 2048;  // vllm#10544 (2024-11-21), first released in 0.6.5
  r.v0_long_context_chunked = !before(n, {0, 5, 4});        // vllm#6666 (2024-07-23)
  // MLA (vllm#12601, first in 0.7.1) without chunked prefill: forced off by vllm#12642 (0.7.1-0.7.3), then off by
  // default in V0 after vllm#12639 (2025-02-21, after 0.7.3; `_set_default_args_v0` through 0.10).
  r.v0_mla_unchunked = !before(n, {0, 7, 1});
  r.v0_mla_forces_unchunked = !before(n, {0, 7, 1}) && before(n, {0, 7, 4});
  r.v0_running_by_arrival = before(n, {0, 5, 4});           // vllm#6867 (after 0.5.3) dropped the running sort
  // benchmark_latency.py / benchmark_throughput.py before vllm#9529 (opened 2024-10-19, after 0.6.3.post1): their own
  // `--enable-chunked-prefill` store_true flag, passed as LLM(enable_chunked_prefill=args.enable_chunked_prefill).
  r.bench_scripts_pass_chunked_flag = before(n, {0, 6, 4});
  r.v0_multi_step = !before(n, {0, 6, 0}) && before(n, {0, 10, 1});  // vllm#7000 (0.6.0) .. vllm#22138 (after 0.10.0)
  r.v0_multi_step_streams = !before(n, {0, 6, 3});                     // vllm#9047 (2024-10-03), first in 0.6.3
}
}  // namespace

namespace {
/// vLLM's quantised-GEMM kernels by release, each boundary the first release after the change merged.
QuantKernels vllm_quant_kernels(const std::vector<int>& n) {
  QuantKernels k;
  // AWQLinearMethod ran ops.awq_gemm at every M until vllm#2566 (AWQ: up to 2.66x higher throughput, January 2024,
  // first released in 0.3.0) dequantised the weight and ran torch.matmul at >= 256 tokens.
  k.awq_dequant_large_m = !before(n, {0, 3, 0});
  // AWQ checkpoints ran AWQLinearMethod until AWQMarlinConfig.override_quantization_method (vllm#6612, 2024-07-21,
  // first released in 0.5.3) repacked them for Marlin by default.
  k.awq_marlin = !before(n, {0, 5, 3});
  // GPTQ checkpoints ran the exllama kernels (gptq.py, q_gemm.cu) until GPTQMarlinConfig converted them by default
  // (vllm#3922, "Marlin Expansion: Support AutoGPTQ Models with Marlin", first released in 0.4.2).
  k.gptq_marlin = !before(n, {0, 4, 2});
  // The PyPI wheel is built with CUDA 12.1 until vllm#12098 (2025-01-17, first released in 0.7.0) moved it to 12.4;
  // CUTLASS's FP8 GEMM on sm89 needs 12.4 (cutlass_scaled_mm_supports_fp8), so earlier wheels run torch._scaled_mm
  // on Ada (vllm#7777: "The pypi wheel's fp8 layers use torch._scaled_mm").
  k.ada_fp8_cutlass = !before(n, {0, 7, 0});
  // gpt-oss's MXFP4 experts on Hopper: get_mxfp4_backend (quantization/mxfp4.py) picks Triton's matmul_ogs only when
  // `triton_kernels` imports. It was no dependency through 0.11.x (vllm#26582: 0.11.0 could not import the upstream
  // package at all; the requirements pin of vllm#27370 broke installs and was replaced); vllm#28788 (merged
  // 2025-11-18) builds it into the wheel as vllm.third_party.triton_kernels, first released in 0.12.0. Before that,
  // FP4 Marlin. matmul_ogs split K at small M (fp32 partials) until vllm#30528 (2025-12-12, first in 0.13.0).
  k.mxfp4_hopper_triton = !before(n, {0, 12, 0});
  k.mxfp4_triton_split_k = k.mxfp4_hopper_triton && before(n, {0, 13, 0});
  // Per-tensor/token FP8 on Hopper: vLLM 0.14.0's linear layer timed by aiconfigurator pays ~10 us more per call at
  // decode sizes than BF16, 0.19.0's ~3 us (the FP8 linear path changed between them; which release is not
  // established here): releases before 0.15.0 take the 0.14.0 terms (perf/hopper_fp8.hpp).
  k.sm90_fp8_slow_small_m = before(n, {0, 15, 0});
  // Block-FP8 fused MoE (Triton fused_moe_kernel with 128 x 128 block scales): vllm#24700's benchmark_moe of main in
  // September 2025 (Qwen3-30B-A3B-FP8, H100) and aiconfigurator's vLLM 0.14.0 / 0.19.0 tables of the same shape agree
  // at decode sizes and differ 1.8x at 4096 tokens; which change between them (a tuned config, the default configs of
  // vllm#34846) is not established, so releases before 0.14.0 take the earlier reading (perf/moe_kernels.hpp).
  k.block_fp8_moe_slow = before(n, {0, 14, 0});
  // FlashAttention-3 on Hopper: vllm#12093 ("[Kernel] Flash Attention 3 Support", opened 2025-01-15, after 0.6.6.post1
  // of 2024-12-27) made vllm-flash-attn's FA3 the FlashAttention backend's kernel on sm90 (fa_version 3), first
  // released in 0.7.0; 0.4.3-0.6.x ran FA2 there as on every other card (split-KV decode, varlen prefill).
  k.hopper_flash_attn3 = !before(n, {0, 7, 0});
  // FA3's decode on one MMA warp group: vllm#16864 ("[Attention] FA3 decode perf improvement - single mma warp group
  // support for head dim 128", merged 2025-04-24, four days before v0.8.5) bumped vllm-flash-attn to
  // vllm-project/flash-attention#63; 0.8.5 is taken as its first release (the tag itself not read here).
  k.hopper_fa3_one_mma_wg = !before(n, {0, 8, 5});
  // FlashMLA on Hopper for MLA decode: DeepSeek released the kernel on 2025-02-24 (FlashMLA's first commit and README,
  // Open Source Week day 1), four days after vLLM 0.7.3 (2025-02-20); vllm#13747 integrated it (LucasWilkinson's
  // 8 x H200 DeepSeek-R1 numbers of 2025-02-25: offline 3000/1000 x 100, TRITON_MLA 2539.6 against FLASHMLA 2769.4
  // total tokens/s), so the 0.7.4 nightlies after it and 0.8.0 on run it; 0.7.1-0.7.3 decode with Triton MLA.
  k.hopper_flash_mla = !before(n, {0, 7, 4});
  return k;
}
}  // namespace

QuantKernels quant_kernels_for(const std::optional<std::string>& release, const std::string& path) {
  if (!release || !is_engine_version(*release)) return {};
  return runtime_for_version(parse_engine_version(*release, path), path).quant_kernels;
}

bool bench_scripts_pass_chunked_flag(const std::optional<std::string>& release, const std::string& path) {
  if (!release || !is_engine_version(*release)) return false;
  return runtime_for_version(parse_engine_version(*release, path), path).bench_scripts_pass_chunked_flag;
}

bool release_has_cuda_graphs(const std::optional<std::string>& release, const std::string& path) {
  if (!release || !is_engine_version(*release)) return true;
  return runtime_for_version(parse_engine_version(*release, path), path).cuda_graphs;
}

RuntimeForVersion runtime_for_version(const EngineVersion& v, const std::string& path) {
  RuntimeForVersion r;
  const auto& n = v.numbers;
  if (v.engine == "vllm") r.quant_kernels = vllm_quant_kernels(n);
  if (v.engine == "vllm") {
    if (before(n, {0, 2, 0})) {
      throw ConfigError(path, "vllm==" + v.version + " predates the runtimes llmsim models (vLLM 0.2.0 and later)");
    }
    // No CUDA graphs before vllm#1926 (2023-12-16), first released in 0.2.6: 0.2.0-0.2.5 run every step eagerly.
    r.cuda_graphs = !before(n, {0, 2, 6});
    if (before(n, {0, 4, 3})) {
      // Decode ran vLLM's own PagedAttention v1/v2 kernels (one CTA per query head) until flash-attn decoding
      // re-landed on 2024-05-19 (vllm#4907, re-landing #3648 after the revert #4820), first released in 0.4.3.
      r.runtime = Runtime::vllm_v0_paged;
      r.why = "vLLM 0.2.0-0.4.2: V0 scheduler, PagedAttention decode kernels (flash-attn decoding arrived in 0.4.3, "
              "vllm#4907), outputs processed synchronously after every step (until 0.6.0, vllm#7049)";
    } else if (before(n, {0, 6, 0})) {
      r.runtime = Runtime::vllm_v0_sync;
      r.why = "vLLM 0.4.3-0.5.x: V0 scheduler, flash-attn decoding (vllm#4907), outputs processed synchronously "
              "after every step (the asynchronous output processor arrived in 0.6.0, vllm#7049)";
    } else if (before(n, {0, 8, 0})) {
      r.runtime = Runtime::vllm_v0;
      r.why = "vLLM 0.6.0-0.7.x: V0 scheduler with the asynchronous output processor (vllm#7049); V1 was opt-in "
              "(VLLM_USE_V1=1)";
    } else {
      r.runtime = Runtime::vllm_v1;
      r.why = "vLLM 0.8.0 and later: the V1 engine is the default (unified prefill/decode steps, prefix caching on, "
              "piecewise CUDA graphs)";
      r.policy = SchedulerPolicy::vllm;
      // 0.8-0.10 still ship V0 behind VLLM_USE_V1=0 (asynchronous output processor); 0.11 removed it.
      if (before(n, {0, 11, 0})) set_v0_defaults(r, n, Runtime::vllm_v0);
      return r;
    }
    r.policy = SchedulerPolicy::vllm_v0;
    set_v0_defaults(r, n, r.runtime);
    return r;
  }
  if (v.engine == "sglang") {
    r.runtime = Runtime::sglang;
    r.why = "SGLang: FlashInfer decode attention, decode-only CUDA graphs up to cuda_graph_max_bs 160, the Python "
            "step loop; SGLang's own scheduler (policy 'sglang': a prefill batch runs alone, decodes otherwise; "
            "admission reserves future output by new_token_ratio; chunked_prefill_size by GPU memory and release); the "
            "overlap scheduler from 0.3.6 (sglang#2067); mem_fraction_static by release (0.88 at TP 1 up to 0.4.7, "
            "a reserve by GPU memory from 0.4.7.post1, sglang#7054, by the chunk and graph sizes from 0.5.3, "
            "sglang#10975)";
    r.policy = SchedulerPolicy::sglang;
    return r;
  }
  if (v.engine == "llama.cpp") {
    r.runtime = Runtime::llama_cpp;
    r.why = "llama.cpp CUDA backend as of builds ~2800 (May 2024): batch-1 decode graphs (#6766), flash attention off "
            "(prefill scores materialised); later builds' flash-attention default is not modelled";
    return r;
  }
  // lmdeploy
  if (!(n.size() >= 2 && n[0] == 0 && n[1] <= 1)) {
    throw ConfigError(path, "lmdeploy==" + v.version + " is not modelled: llmsim prices LMDeploy's TurboMind engine "
                                                       "as of v0.1 only (lmdeploy==0.1.x)");
  }
  r.runtime = Runtime::lmdeploy_turbomind;
  r.why = "LMDeploy 0.0.x-0.1.x: the TurboMind C++ engine (no CUDA graphs, NCCL all-reduce, its own decoder attention)";
  return r;
}

bool async_scheduling_by_default(const std::optional<std::string>& release) {
  if (!release || !is_engine_version(*release)) return false;
  const EngineVersion v = parse_engine_version(*release, "engine.runtime");
  // vllm#27614 (VllmConfig: async_scheduling None -> True unless pooling, an unsupported proposer or executor),
  // first released in 0.14.0.
  return v.engine == "vllm" && !before(v.numbers, {0, 14, 0});
}

double hybrid_kv_group_ratio(const std::optional<std::string>& release) {
  constexpr double kToday = 1.5;  // vllm#36684 (merged 2026-03-10; from 0.18.0)
  if (!release || !is_engine_version(*release)) return kToday;
  const EngineVersion v = parse_engine_version(*release, "engine.runtime");
  if (v.engine != "vllm") return kToday;
  if (before(v.numbers, {0, 12, 0})) return 0.0;  // the smallest type's count, always
  if (before(v.numbers, {0, 18, 0})) return 1.25;  // vllm#29303 (opened 2025-11-24, after 0.11.2)
  return kToday;
}

namespace {
// The vLLM release of engine.runtime, or nothing for a runtime name or another engine.
std::optional<std::vector<int>> vllm_release_numbers(const std::optional<std::string>& release) {
  if (!release || !is_engine_version(*release)) return std::nullopt;
  const EngineVersion v = parse_engine_version(*release, "engine.runtime");
  if (v.engine != "vllm") return std::nullopt;
  return v.numbers;
}
}  // namespace

bool mla_absorbed_weights(const std::optional<std::string>& release) {
  const auto n = vllm_release_numbers(release);
  // vllm#12528 (committed 2025-01-30, first in 0.7.1) .. vllm#14770 (committed 2025-03-13, first in 0.8.0).
  return n && !before(*n, {0, 7, 1}) && before(*n, {0, 8, 0});
}

bool mla_kv_entries_aligned(const std::optional<std::string>& release) {
  const auto n = vllm_release_numbers(release);
  // vllm#12676 (committed 2025-02-04, first in 0.7.2) .. vllm#14842 (committed 2025-03-15, first in 0.8.0).
  return n && !before(*n, {0, 7, 2}) && before(*n, {0, 8, 0});
}

bool kv_groups_whole_model(const std::optional<std::string>& release) {
  if (!release || !is_engine_version(*release)) return true;
  const EngineVersion v = parse_engine_version(*release, "engine.runtime");
  return v.engine != "vllm" || !before(v.numbers, {0, 11, 0});  // vllm#23974
}

std::optional<HybridPrefixCachingOff> vllm_release_without_hybrid_prefix_caching(
    const std::optional<std::string>& release, bool mamba2) {
  if (!release || !is_engine_version(*release)) return std::nullopt;
  const EngineVersion v = parse_engine_version(*release, "engine.runtime");
  const bool off = mamba2 ? before(v.numbers, {0, 11, 1})   // vllm#25752
                          : before(v.numbers, {0, 14, 0});  // vllm#30877
  if (v.engine != "vllm" || !off) return std::nullopt;
  return HybridPrefixCachingOff{v.version, mamba2 ? "0.11.1" : "0.14.0"};
}

std::optional<HybridPrefixCachingOff> sglang_release_without_hybrid_radix_cache(const std::optional<std::string>& release,
                                                                               bool mamba2) {
  if (!release || !is_engine_version(*release)) return std::nullopt;
  const EngineVersion v = parse_engine_version(*release, "engine.runtime");
  const bool off = mamba2 ? before(v.numbers, {0, 5, 6})   // sglang#13584
                          : before(v.numbers, {0, 5, 4});  // sglang#11214
  if (v.engine != "sglang" || !off) return std::nullopt;
  return HybridPrefixCachingOff{v.version, mamba2 ? "0.5.6" : "0.5.4"};
}

std::optional<std::string> vllm_release_without_auto_context(const std::optional<std::string>& release) {
  if (!release || !is_engine_version(*release)) return std::nullopt;
  const EngineVersion v = parse_engine_version(*release, "engine.runtime");
  if (v.engine != "vllm" || !before(v.numbers, {0, 14, 0})) return std::nullopt;  // vllm#29431, vllm#31260
  return v.version;
}

ChatTemplateParse chat_template_parse(const std::optional<std::string>& release) {
  if (!release || !is_engine_version(*release)) return ChatTemplateParse::none;
  const EngineVersion v = parse_engine_version(*release, "engine.runtime");
  if (v.engine != "vllm") return ChatTemplateParse::none;
  const auto& n = v.numbers;
  // vllm#9919's per-request detection (V1 from 0.8.0) until vllm#20065 (0.9.2); vllm#25794 (0.11.0), cached by 0.13.
  if (!before(n, {0, 8, 0}) && before(n, {0, 9, 2})) return ChatTemplateParse::content_format_detection;
  if (!before(n, {0, 11, 0}) && before(n, {0, 12, 0})) return ChatTemplateParse::template_kwargs_filter;
  return ChatTemplateParse::none;
}

bool chat_template_parsed_per_request(const std::optional<std::string>& release) {
  return chat_template_parse(release) != ChatTemplateParse::none;
}

bool api_server_tokenises_on_loop(const std::optional<std::string>& release) {
  if (!release || !is_engine_version(*release)) return false;
  const EngineVersion v = parse_engine_version(*release, "engine.runtime");
  // vllm#10635 (opened 2024-11-25, after 0.6.4.post1): the prompt's tokenisation moved off the event loop in 0.6.5.
  return v.engine == "vllm" && before(v.numbers, {0, 6, 5});
}

bool vllm_rpc_frontend(const std::optional<std::string>& release) {
  if (!release || !is_engine_version(*release)) return false;
  const EngineVersion v = parse_engine_version(*release, "engine.runtime");
  // vllm#6883's RPC frontend from 0.6.0 (the V0 runtime's first release) until vllm#8157's MQLLMEngine (0.6.2).
  return v.engine == "vllm" && !before(v.numbers, {0, 6, 0}) && before(v.numbers, {0, 6, 2});
}

bool sglang_overlap_by_default(const std::optional<std::string>& release) {
  if (!release || !is_engine_version(*release)) return true;
  const EngineVersion v = parse_engine_version(*release, "engine.runtime");
  // sglang#2067 (merged 2024-11-19, after 0.3.5.post2): --enable-overlap-schedule became the default
  // (disable_overlap_schedule = False in server_args.py), first released in 0.3.6.
  return v.engine == "sglang" && !before(v.numbers, {0, 3, 6});
}

std::vector<std::string> runtime_version_ranges() {
  return {"vllm 0.2.0-0.4.2: vllm-v0-paged (V0 scheduler, PagedAttention decode, synchronous output processing; "
          "no CUDA graphs before 0.2.6, vllm#1926)",
          "vllm 0.4.3-0.5.x: vllm-v0.5 (V0 scheduler, flash-attn decode, synchronous output processing)",
          "vllm 0.6.0-0.7.x: vllm-v0 (V0 scheduler, asynchronous output processing)",
          "vllm 0.8.0+: vllm-v1 (V1 engine); from 0.14.0 with async scheduling on by default (vllm#27614)",
          "sglang (any): sglang (policy sglang; chunked_prefill_size and cuda_graph_max_bs by release, card and TP: "
          "0.3-0.4.7 / 0.4.7.post1-0.5.2 / 0.5.3+); the overlap scheduler from 0.3.6 (sglang#2067)",
          "llama.cpp (any build): llama.cpp (as of builds ~2800)",
          "lmdeploy 0.0.x-0.1.x: lmdeploy-turbomind"};
}

}  // namespace llmsim::spec
