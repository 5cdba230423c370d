// `vllm serve` command lines. Flag names and forms follow vLLM's argument parsers
// (vllm/engine/arg_utils.py: EngineArgs.add_cli_args; vllm/entrypoints/openai/cli_args.py), where
// `--flag-name` is the engine argument flag_name, booleans are bare flags (with `--no-flag` since the
// BooleanOptionalAction switch), and -tp/-pp/-dp/-q are the short names.
#include "llmsim/spec/vllm_args.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/scenario_prepass.hpp"

namespace llmsim::spec {

namespace {

// Server and client-facing options: they do not change how the engine runs a request.
const std::set<std::string>& harmless_valued() {
  static const std::set<std::string> s{
      "host", "port", "uds", "uvicorn_log_level", "api_key", "served_model_name", "chat_template", "response_role",
      "ssl_keyfile", "ssl_certfile", "ssl_ca_certs", "ssl_cert_reqs", "root_path", "middleware", "tokenizer",
      "tokenizer_mode", "revision", "code_revision", "tokenizer_revision", "download_dir", "seed",
      "allowed_origins", "allowed_methods", "allowed_headers", "tool_call_parser", "hf_token", "max_log_len",
      "config_format", "generation_config", "chat_template_content_format", "log_config_file", "hf_config_path",
      "reasoning_parser", "load_format", "worker_cls", "distributed_executor_backend", "max_logprobs"};
  return s;
}
const std::set<std::string>& harmless_flags() {
  static const std::set<std::string> s{
      "trust_remote_code", "disable_log_requests", "disable_log_stats", "enable_log_requests",
      "disable_uvicorn_access_log", "enable_auto_tool_choice", "disable_fastapi_docs", "return_tokens_as_token_ids",
      "enable_request_id_headers", "enable_server_load_tracking", "enable_prompt_tokens_details",
      "disable_frontend_multiprocessing", "enable_force_include_usage", "skip_tokenizer_init"};
  return s;
}
// Booleans that change performance and llmsim does not model (so a following word is not their value).
const std::set<std::string>& unmodelled_flags() {
  static const std::set<std::string> s{
      "disable_custom_all_reduce", "enable_expert_parallel", "disable_sliding_window",
      "disable_async_output_proc", "use_v2_block_manager", "enable_sleep_mode", "enable_eplb",
      "disable_cascade_attn", "enable_dbo"};
  return s;
}

std::string dashed(std::string n) {
  std::replace(n.begin(), n.end(), '_', '-');
  return n;
}

// vLLM's environment variables among the aliases (VLLM_PP_LAYER_PARTITION) are no command-line flags.
bool is_env_alias(const VllmAlias& a) { return a.name.rfind("VLLM_", 0) == 0; }

/// The flag llmsim knows that `name` (not one it knows) is a misspelling of (core/names.hpp's rule).
std::optional<std::string> typo_of(const std::string& name) {
  std::vector<std::string> known;
  for (const auto& a : vllm_aliases())
    if (!is_env_alias(a)) known.push_back(a.name);
  for (const auto* set : {&harmless_valued(), &harmless_flags(), &unmodelled_flags()}) known.insert(known.end(), set->begin(), set->end());
  std::string near = misspelling_of(name, known);
  if (near.empty()) return std::nullopt;
  return near;
}

std::string flag_name(std::string_view token) {
  const auto start = token.find_first_not_of('-');
  std::string n(start == std::string_view::npos ? std::string_view() : token.substr(start));
  const auto eq = n.find('=');
  if (eq != std::string::npos) n = n.substr(0, eq);
  std::replace(n.begin(), n.end(), '-', '_');
  static const std::vector<std::pair<std::string, std::string>> shorts{
      {"tp", "tensor_parallel_size"}, {"pp", "pipeline_parallel_size"}, {"dp", "data_parallel_size"},
      {"q", "quantization"}};
  if (token.size() > 1 && token[0] == '-' && token[1] != '-') {
    for (const auto& [s, l] : shorts)
      if (n == s) return l;
  }
  return n;
}

const VllmAlias* modelled(const std::string& name) {
  for (const auto& a : vllm_aliases()) {
    if (!is_env_alias(a) && a.name == name && std::find(a.sections.begin(), a.sections.end(), "") != a.sections.end()) return &a;
  }
  return nullptr;
}

std::optional<bool> as_bool_word(std::string w) {
  std::transform(w.begin(), w.end(), w.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (w == "true" || w == "1" || w == "yes") return true;
  if (w == "false" || w == "0" || w == "no") return false;
  return std::nullopt;
}

Json typed_value(const VllmAlias& a, const std::string& flag, const std::string& v) {
  auto bad = [&](const char* what) -> ConfigError {
    return ConfigError(flag, std::string("expected ") + what + ", got '" + v + "'");
  };
  switch (a.type) {
    case VllmAlias::Type::integer: {
      errno = 0;
      char* end = nullptr;
      const long long x = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || errno != 0 || end != v.c_str() + v.size()) throw bad("an integer");
      return x;
    }
    case VllmAlias::Type::number: {
      errno = 0;
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (v.empty() || errno != 0 || end != v.c_str() + v.size() || !std::isfinite(x)) throw bad("a number");
      return x;
    }
    case VllmAlias::Type::boolean: {
      const auto b = as_bool_word(v);
      if (!b) throw bad("true or false");
      return *b;
    }
    case VllmAlias::Type::string: return v;
  }
  return v;
}

}  // namespace

std::vector<std::string> split_command_line(std::string_view line, const std::string& what) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\\' && i + 1 < line.size()) {
      ++i;
      if (line[i] != '\n') {
        cur += line[i];
        in_word = true;
      }
    } else if (c == '\'' || c == '"') {
      const auto close = line.find(c, i + 1);
      if (close == std::string_view::npos) {
        throw ConfigError(what, std::string("unterminated ") + c + " quote in '" + std::string(line) + "'");
      }
      cur.append(line.substr(i + 1, close - i - 1));
      in_word = true;
      i = close;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) out.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) out.push_back(std::move(cur));
  return out;
}

bool is_flag_token(const std::string& t) {
  if (t.size() < 2 || t[0] != '-') return false;
  // A negative number is a value, not a flag.
  return !(std::isdigit(static_cast<unsigned char>(t[1])) || t[1] == '.');
}

std::string dashed_flag(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  return "--" + name;
}

VllmServeArgs parse_vllm_serve_args(std::string_view command_line) {
  const auto t = split_command_line(command_line);
  VllmServeArgs out;
  std::size_t i = 0;
  // Leading environment assignments and the program: VAR=x ... vllm serve | python -m <module>. The variables that
  // change what vLLM runs become scenario keys by their own name (scenario_prepass: VLLM_PP_LAYER_PARTITION); the
  // rest are the shell's.
  for (; i < t.size() && t[i].find('=') != std::string::npos && !is_flag_token(t[i]); ++i) {
    const std::string var = t[i].substr(0, t[i].find('='));
    if (var == "VLLM_PP_LAYER_PARTITION") {
      out.engine_args[var] = t[i].substr(var.size() + 1);
      out.flags[var] = var;
    }
  }
  if (i < t.size() && (t[i] == "python" || t[i] == "python3")) {
    ++i;
    if (i + 1 < t.size() && t[i] == "-m") {
      if (t[i + 1].rfind("sglang", 0) == 0)
        throw ConfigError("--vllm-args", "'" + t[i + 1] + "' is an SGLang server: give its command line as --sglang-args");
      i += 2;
    }
  }
  if (i < t.size() && t[i] == "sglang")
    throw ConfigError("--vllm-args", "'sglang' is an SGLang server: give its command line as --sglang-args");
  if (i < t.size() && (t[i] == "vllm" || t[i].ends_with("/vllm"))) ++i;
  if (i < t.size() && t[i] == "serve") ++i;
  auto set_model = [&](const std::string& m, const std::string& where) {
    if (!out.model.empty() && out.model != m) {
      throw ConfigError(where, "names model '" + m + "' but the command already named '" + out.model + "'");
    }
    out.model = m;
  };
  for (; i < t.size(); ++i) {
    const std::string& tok = t[i];
    if (!is_flag_token(tok)) {
      set_model(tok, "--vllm-args");  // `vllm serve MODEL`
      continue;
    }
    const auto eq = tok.find('=');
    std::string name = flag_name(tok);
    const std::string flag = tok.substr(0, eq);
    std::optional<std::string> value;
    if (eq != std::string::npos) value = tok.substr(eq + 1);
    bool negated = false;
    if (name.rfind("no_", 0) == 0 && (modelled(name.substr(3)) || harmless_flags().count(name.substr(3)) ||
                                      unmodelled_flags().count(name.substr(3)))) {
      name = name.substr(3);
      negated = true;
    }
    const VllmAlias* a = modelled(name);
    const bool boolean = (a && a->type == VllmAlias::Type::boolean) || harmless_flags().count(name) ||
                         unmodelled_flags().count(name);
    const bool next_is_value = i + 1 < t.size() && !is_flag_token(t[i + 1]);
    if (!value && !negated) {
      if (boolean) {
        // `--enable-chunked-prefill` or (older vLLM) `--enable-chunked-prefill True`.
        if (next_is_value && as_bool_word(t[i + 1])) value = t[++i];
      } else if (next_is_value) {
        value = t[++i];
      }
    }
    if (name == "model") {
      if (!value) throw ConfigError(flag, "expected a model name");
      set_model(*value, flag);
    } else if (a) {
      if (boolean) {
        bool b = true;
        if (value) {
          const auto w = as_bool_word(*value);
          if (!w) throw ConfigError(flag, "expected true or false, got '" + *value + "'");
          b = *w;
        }
        out.engine_args[name] = negated ? !b : b;
        out.flags[name] = flag;
      } else {
        if (!value) throw ConfigError(flag, "expected a value");
        out.engine_args[name] = typed_value(*a, flag, *value);
        out.flags[name] = flag;
      }
    } else {
      const std::string shown = flag + (value ? " " + *value : "");
      if (harmless_valued().count(name) || harmless_flags().count(name)) {
        out.ignored.push_back(shown);
      } else {
        // A flag llmsim does not know that is one or two edits from one it knows is a typo, and a typo in a
        // pasted command line would otherwise change nothing silently (--gpu-memory-utilisation).
        if (const auto near = typo_of(name)) {
          throw ConfigError(flag, "unknown vLLM flag; did you mean --" + dashed(*near) + "?");
        }
        out.not_modelled.push_back(shown);
      }
    }
  }
  return out;
}

Json engine_arg_value(const std::string& name, const std::string& flag, const std::string& value) {
  const VllmAlias* a = modelled(name);
  if (!a) throw ConfigError(flag, "'" + name + "' is not an engine argument llmsim models");
  return typed_value(*a, flag, value);
}

const std::vector<std::string>& known_vllm_engine_flags() {
  // Common EngineArgs that change performance but are neither modelled nor in the sets above (vLLM 0.4 to 0.11).
  static const std::vector<std::string> kOther{
      "swap_space", "cpu_offload_gb", "num_gpu_blocks_override", "max_seq_len_to_capture", "num_lookahead_slots",
      "scheduler_delay_factor", "preemption_mode", "guided_decoding_backend", "speculative_model",
      "num_speculative_tokens", "speculative_config", "compilation_config", "override_generation_config",
      "max_num_partial_prefills", "long_prefill_token_threshold", "scheduling_policy", "device", "rope_scaling",
      "rope_theta", "max_cpu_loras", "max_lora_rank", "max_loras", "lora_modules", "limit_mm_per_prompt",
      "mm_processor_kwargs", "override_neuron_config", "qlora_adapter_name_or_path", "ray_workers_use_nsight",
      "enable_chunked_prefill", "enable_prefix_caching", "num_scheduler_steps", "calculate_kv_scales",
      "kv_transfer_config", "data_parallel_size", "pipeline_parallel_size", "tensor_parallel_size",
      "kv_cache_memory_bytes", "block_size", "gpu_memory_utilization", "max_num_seqs", "max_num_batched_tokens",
      "max_model_len", "dtype", "quantization", "kv_cache_dtype", "enforce_eager", "model", "tokenizer_pool_size"};
  static const std::vector<std::string> all = [] {
    std::set<std::string> s(kOther.begin(), kOther.end());
    for (const auto& a : vllm_aliases())
      if (!is_env_alias(a) && std::find(a.sections.begin(), a.sections.end(), "") != a.sections.end()) s.insert(a.name);
    s.insert(harmless_valued().begin(), harmless_valued().end());
    s.insert(harmless_flags().begin(), harmless_flags().end());
    s.insert(unmodelled_flags().begin(), unmodelled_flags().end());
    return std::vector<std::string>(s.begin(), s.end());
  }();
  return all;
}

Json scenario_patch(const VllmServeArgs& args) {
  Json j = args.engine_args;
  if (!args.model.empty()) j["model"] = args.model;
  return j;
}

}  // namespace llmsim::spec
