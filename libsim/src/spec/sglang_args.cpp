// SGLang server command lines. Flag names and forms follow SGLang's parser (python/sglang/srt/server_args.py:
// ServerArgs.add_cli_args): `--flag-name` is the field flag_name, booleans are bare `store_true` flags, argparse
// accepts a unique prefix of a flag (`--tp 2` is `--tp-size 2`), and the model is `--model-path` (or `--model`).
#include "llmsim/spec/sglang_args.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"

namespace llmsim::spec {

namespace {

constexpr const char* kSglangWhere = "--sglang-args";

/// Where a problem with `flag` is reported: at the flag itself on the command line (`what` empty), else at the file
/// field the line came from, then the flag (runs[0] (a.json).server_command: --tp-size: ...).
std::string located(const std::string& what, const std::string& flag) {
  return what.empty() ? flag : what + ": " + flag;
}
[[noreturn]] void fail(const std::string& what, const std::string& flag, const std::string& problem) {
  throw ConfigError(located(what, flag), problem);
}

// Server and client-facing options: they do not change how the engine runs a request.
const std::set<std::string>& sglang_harmless_valued() {
  static const std::set<std::string> s{
      "host", "port", "api_key", "admin_api_key", "served_model_name", "tokenizer_path", "tokenizer_mode",
      "chat_template", "completion_template", "log_level", "log_level_http", "log_requests_level", "random_seed",
      "revision", "download_dir", "load_format", "reasoning_parser", "tool_call_parser", "watchdog_timeout",
      "file_storage_path", "decode_log_interval", "crash_dump_folder", "warmups", "nccl_port", "dist_init_addr",
      "nnodes", "node_rank", "base_gpu_id", "gpu_id_step", "device", "model_loader_extra_config",
      "json_model_override_args", "tokenizer_worker_num", "dist_timeout", "constrained_json_whitespace_pattern",
      "hf_chat_template_name", "tool_server", "api_key_file"};
  return s;
}
const std::set<std::string>& sglang_harmless_flags() {
  static const std::set<std::string> s{
      "trust_remote_code", "skip_tokenizer_init", "enable_metrics", "show_time_cost", "log_requests",
      "enable_cache_report", "skip_server_warmup", "enable_p2p_check", "disable_outlines_disk_cache",
      "enable_return_hidden_states", "enable_custom_logit_processor", "allow_auto_truncate",
      "enable_request_time_stats_logging", "delete_ckpt_after_loading", "enable_metrics_for_all_schedulers",
      "bucket_time_to_first_token", "enable_tokenizer_batch_encode"};
  return s;
}
// Booleans that change performance and llmsim does not model (so a following word is not their value).
const std::set<std::string>& sglang_unmodelled_flags() {
  static const std::set<std::string> s{
      "enable_dp_attention", "enable_mixed_chunk", "enable_torch_compile",
      "enable_two_batch_overlap", "enable_ep_moe", "enable_deepep_moe", "disable_custom_all_reduce",
      "enable_nccl_nvls", "disable_chunked_prefix_cache", "enable_hierarchical_cache",
      "enable_deterministic_inference", "enable_dp_lm_head", "enable_eplb", "enable_lora", "disable_cuda_graph_padding",
      "enable_flashinfer_mla", "enable_nan_detection", "enable_memory_saver", "enable_double_sparsity",
      "disable_shared_experts_fusion", "enable_symm_mem", "enable_single_batch_overlap", "enable_multimodal",
      "disable_fast_image_processor", "enable_pdmux", "enable_dynamic_batch_tokenizer"};
  return s;
}
// Valued options that change performance and llmsim does not model. Where SGLang's meaning is close to an llmsim
// field but not the same, the reason says what differs (and which field to set instead).
const std::map<std::string, std::string>& sglang_unmodelled_valued() {
  static const std::map<std::string, std::string> m{
      {"schedule_conservativeness", ""}, {"max_prefill_tokens", ""}, {"max_total_tokens", ""},
      {"ep_size", ""}, {"expert_parallel_size", ""},
      {"speculative_algorithm", ""}, {"speculative_draft_model_path", ""}, {"speculative_num_steps", ""},
      {"speculative_eagle_topk", ""}, {"speculative_num_draft_tokens", ""}, {"attention_backend", ""},
      {"prefill_attention_backend", ""}, {"decode_attention_backend", ""}, {"sampling_backend", ""},
      {"grammar_backend", ""}, {"torch_compile_max_bs", ""}, {"stream_interval", ""},
      {"num_continuous_decode_steps", ""}, {"lora_paths", ""}, {"max_loras_per_batch", ""},
      {"hicache_ratio",
       "HiCache's host pool is this ratio of the device KV pool: set engine.kv_offload_gb (GiB over the replica's "
       "GPUs, docs/engine.md \"Host KV tier\") yourself"},
      {"hicache_size",
       "HiCache's host pool in GiB per rank: set engine.kv_offload_gb (GiB over the replica's GPUs, the ranks summed) "
       "yourself"}, {"moe_a2a_backend", ""}, {"moe_runner_backend", ""}, {"disaggregation_mode", ""},
      {"max_queued_requests", ""}, {"load_balance_method", ""}, {"kv_cache_memory", ""}};
  return m;
}

// The overlap scheduler's switches (engine.async_scheduling, perf/sglang_overlap.hpp): 0.3.6+'s opt-out and the
// opt-in of 0.3.x before sglang#2067 made it the default.
const std::set<std::string>& sglang_overlap_flags() {
  static const std::set<std::string> s{"disable_overlap_schedule", "enable_overlap_schedule"};
  return s;
}

const std::vector<std::string>& sglang_known_names() {
  static const std::vector<std::string> v = [] {
    std::set<std::string> s{"model_path", "model", "schedule_policy", "cuda_graph_bs"};
    s.insert(sglang_overlap_flags().begin(), sglang_overlap_flags().end());
    for (const auto& a : sglang_aliases()) s.insert(a.name);
    s.insert(sglang_harmless_valued().begin(), sglang_harmless_valued().end());
    s.insert(sglang_harmless_flags().begin(), sglang_harmless_flags().end());
    s.insert(sglang_unmodelled_flags().begin(), sglang_unmodelled_flags().end());
    for (const auto& [k, why] : sglang_unmodelled_valued()) s.insert(k);
    return std::vector<std::string>(s.begin(), s.end());
  }();
  return v;
}

const SglangAlias* alias_of(const std::string& name) {
  for (const auto& a : sglang_aliases())
    if (a.name == name) return &a;
  return nullptr;
}

bool is_bare_flag(const std::string& name) {
  const SglangAlias* a = alias_of(name);
  return (a && (a->vllm_name == "enforce_eager" || a->vllm_name == "enable_prefix_caching")) ||
         sglang_harmless_flags().count(name) || sglang_unmodelled_flags().count(name) ||
         sglang_overlap_flags().count(name);
}

/// The known flag `name` stands for: itself, or the one known flag it is a prefix of (argparse's abbreviations).
/// ConfigError for an ambiguous prefix or a misspelling; "" for a flag llmsim does not know.
std::string resolve_name(const std::string& name, const std::string& flag, const std::string& what) {
  const auto& known = sglang_known_names();
  if (std::find(known.begin(), known.end(), name) != known.end()) return name;
  std::vector<std::string> longer;
  for (const auto& k : known)
    if (k.rfind(name, 0) == 0) longer.push_back(k);
  if (longer.size() == 1) return longer.front();
  if (longer.size() > 1) {
    std::string list;
    for (const auto& k : longer) list += (list.empty() ? "" : ", ") + dashed_flag(k);
    fail(what, flag, "ambiguous SGLang flag: it abbreviates " + list);
  }
  if (const std::string near = misspelling_of(name, known); !near.empty())
    fail(what, flag, "unknown SGLang flag; did you mean " + dashed_flag(near) + "?");
  return "";
}

}  // namespace

const std::vector<SglangAlias>& sglang_aliases() {
  static const std::vector<SglangAlias> v{
      {"tp_size", "tensor_parallel_size"},     {"tensor_parallel_size", "tensor_parallel_size"},
      {"pp_size", "pipeline_parallel_size"},   {"pipeline_parallel_size", "pipeline_parallel_size"},
      {"dp_size", "data_parallel_size"},       {"data_parallel_size", "data_parallel_size"},
      {"max_running_requests", "max_num_seqs"}, {"context_length", "max_model_len"},
      {"kv_cache_dtype", "kv_cache_dtype"},    {"quantization", "quantization"},
      {"dtype", "dtype"},                      {"page_size", "block_size"},
      {"disable_radix_cache", "enable_prefix_caching", true}, {"disable_cuda_graph", "enforce_eager"},
      // The SGLang line sets the SGLang runtime, whose scheduler (policy sglang) spends max_num_batched_tokens as
      // SGLang's chunk: on prefill-only steps, decodes stalled (engine/schedule_sglang.cpp); and whose KV pool is
      // gpu_memory_utilization x total - weights - what is in use at start, with no activation peak taken out
      // (memory/engine_memory.cpp): SGLang's mem_fraction_static.
      {"chunked_prefill_size", "max_num_batched_tokens"}, {"mem_fraction_static", "gpu_memory_utilization"},
      // The largest decode batch replayed from a CUDA graph (engine.cuda_graph_max_bs; spec::sglang_cuda_graph_max_bs
      // says how each release honours it); --cuda-graph-bs (a list of sizes) sets it to its largest size.
      {"cuda_graph_max_bs", "cuda_graph_max_bs"}};
  return v;
}

VllmServeArgs parse_sglang_server_args(std::string_view command_line, const std::string& what) {
  const std::string where = what.empty() ? kSglangWhere : what;
  // A vLLM line: on the command line it belongs in --vllm-args; in a file, the benchmark names an SGLang server.
  const std::string vllm_hint = what.empty() ? ": give its command line as --vllm-args" : ", not SGLang's";
  const auto t = split_command_line(command_line, where);
  VllmServeArgs out;
  out.runtime = "sglang";
  std::size_t i = 0;
  // Leading environment assignments and the program: VAR=x ... python -m sglang.launch_server | sglang serve.
  while (i < t.size() && t[i].find('=') != std::string::npos && !is_flag_token(t[i])) ++i;
  if (i < t.size() && (t[i] == "python" || t[i] == "python3")) {
    ++i;
    if (i + 1 < t.size() && t[i] == "-m") {
      if (t[i + 1].rfind("vllm", 0) == 0)
        throw ConfigError(where, "'" + t[i + 1] + "' is a vLLM server" + vllm_hint);
      i += 2;
    }
  }
  if (i < t.size() && (t[i] == "vllm" || t[i].ends_with("/vllm")))
    throw ConfigError(where, "'" + t[i] + "' is a vLLM server" + vllm_hint);
  if (i < t.size() && t[i] == "sglang") {
    ++i;
    if (i < t.size() && t[i] == "serve") ++i;
  }
  bool radix_disabled = false, dp_attention = false;
  std::optional<std::string> dp_shown;
  std::optional<long long> graph_bs_max;  // the largest size of --cuda-graph-bs
  std::string graph_bs_flag;               // as typed
  std::string last_bare;  // the bare flag just read: a word after it is a value it does not take
  for (; i < t.size(); ++i) {
    const std::string& tok = t[i];
    if (!is_flag_token(tok)) {
      if (!last_bare.empty())
        fail(what, last_bare, "is a bare flag and takes no value, got '" + tok + "'");
      throw ConfigError(where, "unexpected word '" + tok + "' (SGLang takes the model as --model-path MODEL)");
    }
    last_bare.clear();
    const auto eq = tok.find('=');
    const std::string flag = tok.substr(0, eq);
    std::string raw = flag.substr(flag.find_first_not_of('-'));
    std::replace(raw.begin(), raw.end(), '-', '_');
    std::optional<std::string> value;
    if (eq != std::string::npos) value = tok.substr(eq + 1);
    const std::string name = resolve_name(raw, flag, what);
    const bool bare = !name.empty() && is_bare_flag(name);
    if (!value && !bare && i + 1 < t.size() && !is_flag_token(t[i + 1])) value = t[++i];
    if (bare && value) fail(what, flag, "is a bare flag and takes no value, got '" + *value + "'");
    if (bare) last_bare = flag;
    const std::string shown = flag + (value ? " " + *value : "");
    if (name == "model_path" || name == "model") {
      if (!value) fail(what, flag, "expected a model name");
      if (!out.model.empty() && out.model != *value)
        fail(what, flag, "names model '" + *value + "' but the command already named '" + out.model + "'");
      out.model = *value;
    } else if (name == "schedule_policy") {
      if (!value) fail(what, flag, "expected a value");
      // llmsim's SGLang scheduler takes the waiting queue in arrival order: SGLang's fcfs (its default since
      // 0.4.3.post3). The other orders sort the queue by prefix match or tree weight, or at random.
      if (*value != "fcfs")
        fail(what, flag, "'" + *value + "' is not modelled: llmsim's SGLang scheduler takes the queue first "
                                "come, first served (fcfs); SGLang's lpm, dfs-weight, lof, random and priority orders "
                                "are not. Give --schedule-policy fcfs or leave the flag out");
      out.ignored.push_back(shown);  // what llmsim simulates anyway
    } else if (name == "cuda_graph_bs") {
      // nargs="+": the sizes to capture, as separate words (1 2 4 8) or, as SGLang's docs write them, 1,2,4,8.
      if (!value) fail(what, flag, "expected one or more batch sizes");
      graph_bs_flag = flag;
      std::vector<std::string> words{*value};
      while (i + 1 < t.size() && !is_flag_token(t[i + 1])) words.push_back(t[++i]);
      for (const auto& w : words) {
        std::size_t from = 0;
        while (from <= w.size()) {
          const std::size_t comma = std::min(w.find(',', from), w.size());
          const std::string item = w.substr(from, comma - from);
          from = comma + 1;
          if (item.empty() && comma == w.size()) break;
          const long long n = engine_arg_value("cuda_graph_max_bs", located(what, flag), item).get<long long>();
          if (n < 1) fail(what, flag, "batch sizes must be >= 1, got '" + item + "'");
          graph_bs_max = std::max(graph_bs_max.value_or(0), n);
        }
      }
    } else if (sglang_overlap_flags().count(name)) {
      out.engine_args["async_scheduling"] = name == "enable_overlap_schedule";
      out.flags["async_scheduling"] = flag;
    } else if (const SglangAlias* a = name.empty() ? nullptr : alias_of(name)) {
      if (a->vllm_name == "enable_prefix_caching") {
        radix_disabled = true;
        out.flags[a->vllm_name] = flag;  // typed: a note or a problem names it, the implied default has none
      } else if (a->vllm_name == "enforce_eager") {
        out.engine_args["enforce_eager"] = true;
        out.flags[a->vllm_name] = flag;
      } else {
        if (!value) fail(what, flag, "expected a value");
        out.engine_args[a->vllm_name] = engine_arg_value(a->vllm_name, located(what, flag), *value);
        out.flags[a->vllm_name] = flag;
        // SGLang's -1 turns chunked prefill off (a prompt waits for a batch it fits whole); llmsim always chunks.
        if (a->name == "chunked_prefill_size" && out.engine_args[a->vllm_name].get<long long>() <= 0)
          fail(what, flag, "'" + *value + "' turns chunked prefill off, which llmsim's SGLang scheduler does "
                                  "not model (it cuts a prompt to the chunk budget): give a size in tokens or leave "
                                  "the flag out");
        if (a->name == "cuda_graph_max_bs" && out.engine_args[a->vllm_name].get<long long>() < 1)
          fail(what, flag, "must be >= 1 (the largest decode batch replayed from a CUDA graph), got '" + *value +
                               "'; --disable-cuda-graph runs every step eagerly");
        if (a->vllm_name == "data_parallel_size") dp_shown = shown;
      }
    } else if (sglang_harmless_valued().count(name) || sglang_harmless_flags().count(name)) {
      out.ignored.push_back(shown);
    } else {
      if (name == "enable_dp_attention") dp_attention = true;
      const auto why = sglang_unmodelled_valued().find(name);
      out.not_modelled.push_back(why != sglang_unmodelled_valued().end() && !why->second.empty() ? shown + " (" + why->second + ")"
                                                                                         : shown);
    }
  }
  // --cuda-graph-bs captures exactly its sizes (at most --cuda-graph-max-bs where both are given).
  if (graph_bs_max) {
    const auto asked = out.engine_args.find("cuda_graph_max_bs");
    out.engine_args["cuda_graph_max_bs"] =
        asked == out.engine_args.end() ? *graph_bs_max : std::min(*graph_bs_max, asked->get<long long>());
    if (!out.flags.count("cuda_graph_max_bs")) out.flags["cuda_graph_max_bs"] = graph_bs_flag;
  }
  // SGLang's radix cache is on unless disabled: prefix caching, as llmsim models it.
  out.engine_args["enable_prefix_caching"] = !radix_disabled;
  // With DP attention, --dp-size splits attention inside the tensor-parallel group: not replicas.
  if (dp_attention && dp_shown) {
    out.engine_args.erase("data_parallel_size");
    out.not_modelled.push_back(*dp_shown + " (with --enable-dp-attention it is attention data parallelism inside "
                                           "the tensor-parallel group, not replicas)");
  }
  return out;
}

}  // namespace llmsim::spec
