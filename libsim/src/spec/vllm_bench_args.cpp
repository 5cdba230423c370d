// Benchmark command lines. Flag names and defaults follow vllm/benchmarks/{latency,throughput,serve}.py (and
// benchmarks/benchmark_*.py before `vllm bench`, same flags), python/sglang/bench_one_batch.py, bench_serving.py and
// llama.cpp's tools/llama-bench/llama-bench.cpp.
#include "llmsim/spec/vllm_bench_args.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <set>
#include <vector>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/sglang_args.hpp"

namespace llmsim::spec {

namespace {

struct BenchFlags {
  std::set<std::string> valued, boolean;
};

const BenchFlags& flags_of(BenchKind k) {
  static const BenchFlags latency{
      {"input_len", "output_len", "batch_size", "n", "num_iters_warmup", "num_iters", "profile_result_dir",
       "output_json"},
      {"use_beam_search", "profile", "disable_detokenize"}};
  static const BenchFlags throughput{
      {"backend", "dataset", "dataset_name", "dataset_path", "input_len", "output_len", "n", "num_prompts",
       "hf_max_batch_size", "output_json", "lora_path", "prefix_len", "random_range_ratio", "hf_subset", "hf_split"},
      {"use_beam_search", "async_engine", "disable_detokenize", "disable_frontend_multiprocessing"}};
  static const BenchFlags serve{
      {"backend", "base_url", "host", "port", "endpoint", "dataset", "dataset_name", "dataset_path",
       "max_concurrency", "model", "tokenizer", "tokenizer_mode", "best_of", "num_prompts", "logprobs",
       "request_rate", "burstiness", "seed", "metadata", "result_dir", "result_filename", "percentile_metrics",
       "metric_percentiles", "goodput", "sonnet_input_len", "sonnet_output_len", "sonnet_prefix_len",
       "sharegpt_output_len", "random_input_len", "random_output_len", "random_range_ratio", "random_prefix_len",
       "hf_subset", "hf_split", "hf_output_len", "top_p", "top_k", "min_p", "temperature", "served_model_name",
       "lora_modules", "ready_check_timeout_sec", "label"},
      {"use_beam_search", "trust_remote_code", "disable_tqdm", "profile", "save_result", "save_detailed",
       "ignore_eos", "append_result"}};
  static const BenchFlags sglang{
      {"batch_size", "input_len", "output_len", "result_filename", "run_name", "cut_len", "log_decode_step",
       "profile_record_shapes", "model_path", "tp_size", "tp", "dtype", "quantization", "kv_cache_dtype",
       "mem_fraction_static", "context_length", "max_running_requests", "chunked_prefill_size", "cuda_graph_max_bs",
       "attention_backend", "load_format", "port", "host", "random_seed", "trust_remote_code"},
      {"correctness_test", "profile", "disable_cuda_graph", "enable_torch_compile", "disable_radix_cache"}};
  // python/sglang/bench_one_batch_server.py: the same server flags (it may launch the server) and its own client's.
  static const BenchFlags sglang_server = [] {
    BenchFlags f = sglang;
    for (const char* n : {"base_url", "model", "dataset_name", "dataset_path", "client_stream_interval",
                          "profile_steps", "profile_prefix"})
      f.valued.insert(n);
    for (const char* n : {"skip_warmup", "show_report", "profile_by_stage", "no_stream"}) f.boolean.insert(n);
    return f;
  }();
  static const BenchFlags sglang_serving{
      {"backend", "base_url", "host", "port", "dataset_name", "dataset_path", "model", "tokenizer", "num_prompts",
       "sharegpt_output_len", "sharegpt_context_len", "random_input_len", "random_output_len", "random_range_ratio",
       "request_rate", "max_concurrency", "output_file", "seed", "extra_request_body", "lora_name", "prompt_suffix",
       "warmup_requests", "served_model_name", "gsp_num_groups", "gsp_prompts_per_group", "gsp_system_prompt_len",
       "gsp_question_len", "gsp_output_len", "tokenize_prompt", "profile_num_steps", "profile_by_stage"},
      {"multi", "disable_tqdm", "disable_stream", "return_logprob", "disable_ignore_eos", "apply_chat_template",
       "profile", "pd_separated", "flush_cache", "output_details"}};
  static const BenchFlags llama_bench{
      {"m", "model", "p", "n_prompt", "n", "n_gen", "pg", "d", "n_depth", "b", "batch_size", "ub", "ubatch_size",
       "ctk", "cache_type_k", "ctv", "cache_type_v", "t", "threads", "ngl", "n_gpu_layers", "sm", "split_mode", "mg",
       "main_gpu", "nkvo", "no_kv_offload", "fa", "flash_attn", "mmp", "mmap", "embd", "embeddings", "ts",
       "tensor_split", "r", "repetitions", "o", "output", "oe", "output_err", "C", "cpu_mask", "cpu_strict", "poll",
       "numa", "prio", "delay", "dev", "device", "ot", "override_tensors"},
      {"v", "verbose", "progress", "no_warmup"}};
  switch (k) {
    case BenchKind::vllm_latency: return latency;
    case BenchKind::vllm_throughput: return throughput;
    case BenchKind::vllm_serve: return serve;
    case BenchKind::sglang_one_batch: return sglang;
    case BenchKind::sglang_one_batch_server: return sglang_server;
    case BenchKind::sglang_serving: return sglang_serving;
    case BenchKind::llama_bench: return llama_bench;
  }
  return latency;
}

std::string underscored(const std::string& token) {
  std::string n = token.substr(token.find_first_not_of('-'));
  n = n.substr(0, n.find('='));
  std::replace(n.begin(), n.end(), '-', '_');
  if (token.size() > 1 && token[1] != '-' && (n == "tp" || n == "pp" || n == "q")) {
    return n == "tp" ? "tensor_parallel_size" : n == "pp" ? "pipeline_parallel_size" : "quantization";
  }
  return n;
}

std::string quoted(const std::string& w) {
  std::string q = "'";
  for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

[[noreturn]] void unknown_flag(const std::string& what, BenchKind k, const std::string& flag, bool engine_too) {
  std::vector<std::string> known;
  for (const auto& f : flags_of(k).valued) known.push_back(f);
  for (const auto& f : flags_of(k).boolean) known.push_back(f);
  if (engine_too) known.insert(known.end(), known_vllm_engine_flags().begin(), known_vllm_engine_flags().end());
  std::string msg = "unknown flag '" + flag + "' for " + to_string(k);
  const auto close = close_matches(underscored(flag), known, 3);
  for (std::size_t i = 0; i < close.size(); ++i) msg += (i ? ", " : "; did you mean ") + dashed_flag(close[i]);
  if (!close.empty()) msg += "?";
  throw ConfigError(what, msg);
}

/// SGLang server arguments by vLLM's engine-argument names (the scenario pre-pass knows those).
void sglang_engine_args(BenchCommand& c) {
  auto get = [&](const char* n) -> const std::string* {
    const auto it = c.flags.find(n);
    return it == c.flags.end() ? nullptr : &it->second;
  };
  auto integer = [&](const char* n) { return c.integer(n, 0); };
  if (auto* m = get("model_path")) c.engine.model = *m;
  // bench_one_batch_server's `--model None --base-url URL` names no model (the running server has it).
  if (auto* m = get("model"); m && c.engine.model.empty() && *m != "None") c.engine.model = *m;
  // The server flags the benchmark may launch its server with, through SGLang's one alias table (sglang_args.cpp):
  // --tp-size, --context-length, --mem-fraction-static, --chunked-prefill-size, ... by vLLM's names and value rules.
  for (const SglangAlias& a : sglang_aliases()) {
    const std::string* v = get(a.name.c_str());
    if (!v) continue;
    if (a.vllm_name == "enforce_eager" || a.vllm_name == "enable_prefix_caching")
      c.engine.engine_args[a.vllm_name] = !a.negate;  // bare flags: --disable-cuda-graph, --disable-radix-cache
    else
      c.engine.engine_args[a.vllm_name] = engine_arg_value(a.vllm_name, dashed_flag(a.name), *v);
  }
  // bench_one_batch's own short --tp.
  if (!get("tp_size") && get("tp")) c.engine.engine_args["tensor_parallel_size"] = integer("tp");
  for (const char* n : {"attention_backend", "enable_torch_compile"})
    if (auto* v = get(n)) c.engine.not_modelled.push_back(dashed_flag(n) + (v->empty() ? "" : " " + *v));
}

/// Python's argparse takes any unique prefix of a long option (SGLang's scripts run with --random-input 1024).
std::string argparse_prefix(const BenchFlags& own, const std::string& name) {
  if (own.valued.count(name) || own.boolean.count(name)) return name;
  std::string match;
  for (const auto* set : {&own.valued, &own.boolean})
    for (const auto& f : *set)
      if (f.rfind(name, 0) == 0) {
        if (!match.empty()) return name;  // ambiguous: argparse refuses it too
        match = f;
      }
  return match.empty() ? name : match;
}

}  // namespace

std::string to_string(BenchKind k) {
  switch (k) {
    case BenchKind::vllm_latency: return "vllm bench latency";
    case BenchKind::vllm_throughput: return "vllm bench throughput";
    case BenchKind::vllm_serve: return "vllm bench serve";
    case BenchKind::sglang_one_batch: return "sglang.bench_one_batch";
    case BenchKind::sglang_one_batch_server: return "sglang.bench_one_batch_server";
    case BenchKind::sglang_serving: return "sglang.bench_serving";
    case BenchKind::llama_bench: return "llama-bench";
  }
  return "?";
}

std::int64_t BenchCommand::integer(const std::string& name, std::int64_t fallback) const {
  const auto it = flags.find(name);
  if (it == flags.end()) return fallback;
  std::string v = it->second;
  v = v.substr(0, v.find(' '));  // SGLang's --batch-size takes a list: the first
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || errno != 0 || end != v.c_str() + v.size()) {
    throw ConfigError(what, dashed_flag(name) + ": expected an integer, got '" + it->second + "'");
  }
  return x;
}

BenchCommand parse_bench_command(std::string_view command_line, const std::string& what) {
  const auto t = split_command_line(command_line, what);
  BenchCommand c;
  c.what = what;
  std::size_t i = 0;
  while (i < t.size() && t[i].find('=') != std::string::npos && !is_flag_token(t[i])) ++i;  // VAR=value
  std::optional<BenchKind> kind;
  if (i < t.size() && (t[i] == "python" || t[i] == "python3")) {
    ++i;
    if (i + 1 < t.size() && t[i] == "-m") {
      if (t[i + 1] == "sglang.bench_one_batch") kind = BenchKind::sglang_one_batch;
      if (t[i + 1] == "sglang.bench_one_batch_server") kind = BenchKind::sglang_one_batch_server;
      if (t[i + 1] == "sglang.bench_serving") kind = BenchKind::sglang_serving;
      i += 2;
    }
  }
  if (!kind && i < t.size()) {
    const std::string& p = t[i];
    if (p == "llama-bench" || p.ends_with("/llama-bench")) kind = BenchKind::llama_bench;
    else if (p.ends_with("bench_serving.py") && p.find("sglang") != std::string::npos) kind = BenchKind::sglang_serving;
    else if (p.ends_with("benchmark_latency.py")) kind = BenchKind::vllm_latency;
    else if (p.ends_with("benchmark_throughput.py")) kind = BenchKind::vllm_throughput;
    else if (p.ends_with("benchmark_serving.py")) kind = BenchKind::vllm_serve;
    else if ((p == "vllm" || p.ends_with("/vllm")) && i + 2 < t.size() && t[i + 1] == "bench") {
      const std::string& sub = t[i + 2];
      if (sub == "latency") kind = BenchKind::vllm_latency;
      else if (sub == "throughput") kind = BenchKind::vllm_throughput;
      else if (sub == "serve") kind = BenchKind::vllm_serve;
      if (kind) i += 2;
    }
    if (kind) ++i;
  }
  if (!kind) {
    throw ConfigError(what, "'" + std::string(command_line) +
                                "' is not a benchmark command llmsim reads; expected one of: vllm bench latency|"
                                "throughput|serve ..., python benchmarks/benchmark_{latency,throughput,serving}.py "
                                "..., python -m sglang.bench_one_batch|bench_one_batch_server|bench_serving ..., llama-bench ...");
  }
  c.kind = *kind;
  const BenchFlags& own = flags_of(c.kind);
  const bool engine_in_process = c.kind == BenchKind::vllm_latency || c.kind == BenchKind::vllm_throughput;
  std::vector<std::string> engine_tokens{"vllm", "serve"};
  for (; i < t.size(); ++i) {
    const std::string& tok = t[i];
    if (!is_flag_token(tok)) {
      if (!engine_in_process) {
        throw ConfigError(what, "unexpected word '" + tok + "' (not the value of a flag)");
      }
      engine_tokens.push_back(tok);  // a positional model, or a value of an engine flag
      continue;
    }
    std::string name = underscored(tok);
    const auto eq = tok.find('=');
    if (c.kind == BenchKind::sglang_serving) name = argparse_prefix(own, name);
    if (own.boolean.count(name)) {
      c.flags[name] = eq == std::string::npos ? "" : tok.substr(eq + 1);
    } else if (own.valued.count(name) && !(engine_in_process && name == "model")) {
      std::string v;
      if (eq != std::string::npos) {
        v = tok.substr(eq + 1);
      } else {
        // A list (SGLang's --batch-size 1 8 16) runs each value; a value may be negative (not a flag).
        while (i + 1 < t.size() && !is_flag_token(t[i + 1])) v += (v.empty() ? "" : " ") + t[++i];
      }
      if (v.empty()) throw ConfigError(what, tok + ": expected a value");
      c.flags[name] = v;
    } else if (engine_in_process && (name == "model" || std::binary_search(known_vllm_engine_flags().begin(),
                                                                           known_vllm_engine_flags().end(), name) ||
                                     (name.rfind("no_", 0) == 0 &&
                                      std::binary_search(known_vllm_engine_flags().begin(),
                                                         known_vllm_engine_flags().end(), name.substr(3))))) {
      engine_tokens.push_back(tok);
    } else {
      unknown_flag(what, c.kind, tok.substr(0, eq), engine_in_process);
    }
  }
  if (engine_in_process) {
    std::string line;
    for (const auto& w : engine_tokens) line += (line.empty() ? "" : " ") + quoted(w);
    c.engine = parse_vllm_serve_args(line);
  } else if (c.kind == BenchKind::sglang_one_batch || c.kind == BenchKind::sglang_one_batch_server) {
    sglang_engine_args(c);
  } else if (c.kind == BenchKind::llama_bench) {
    if (c.has("m") || c.has("model")) c.engine.model = c.has("m") ? c.flags.at("m") : c.flags.at("model");
  } else if (c.has("model")) {
    c.engine.model = c.flags.at("model");
  }
  return c;
}

}  // namespace llmsim::spec
