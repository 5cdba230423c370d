// A scenario resolved against the catalogue: its model, card and split, weight format, prices, the engine's
// defaults for them, and the checks that need them (context lengths, token budgets, LoRA slots).
#include "llmsim/spec/scenario.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/architecture_release.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/fleet.hpp"
#include "llmsim/spec/gpu_option.hpp"
#include "llmsim/spec/multi_step.hpp"
#include "llmsim/spec/pool.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "scenario_checks.hpp"

namespace llmsim::spec {

int default_max_model_len(const ModelSpec& m, const EngineConfig& e) {
  // vLLM refuses max_num_batched_tokens < max_model_len without chunked prefill.
  return e.chunked_prefill() ? m.max_position_embeddings : std::min(m.max_position_embeddings, e.max_num_batched_tokens);
}

namespace {

// Each pool resolved as its own scenario; resolve()'s "hardware.tp" / "engine.max_num_seqs" become the pool's
// "disaggregation.decode.tp" / "disaggregation.decode.engine.max_num_seqs".
std::vector<ResolvedScenario> resolve_disaggregation(const Scenario& s, const Catalog& catalog) {
  std::vector<ResolvedScenario> pools;
  Problems p;
  for (const char* role : {"prefill", "decode"}) {
    const PoolSpec& pool = std::string(role) == "prefill" ? s.disaggregation->prefill : s.disaggregation->decode;
    const std::string at = std::string("disaggregation.") + role;
    try {
      pools.push_back(resolve_pool(s, pool.hardware, &pool.engine, catalog));
    } catch (const ConfigError& e) {
      for (auto x : e.problems()) {
        if (x.rfind("hardware.", 0) == 0) x = at + x.substr(8);
        else if (x.rfind("engine.", 0) == 0) x = at + "." + x;
        else if (x.rfind("hardware:", 0) == 0) x = at + x.substr(8);
        p.add("", x);
      }
    }
  }
  p.throw_if_any();
  return pools;
}

}  // namespace

ResolvedScenario resolve(const Scenario& s, const Catalog& catalog) {
  s.validate();
  if (!s.hardware.fleet.empty()) return resolve_fleet(s, catalog);
  ResolvedScenario r;
  r.scenario = s;
  Problems p;
  auto collect = [&](auto&& fn) { p.collect(fn); };
  collect([&] { r.model = catalog.model(s.model, "model"); });
  collect([&] {
    const GpuOption option = parse_gpu_option(s.hardware.gpu, "hardware.gpu");
    r.scenario.hardware.parallel = split_for(option, s.hardware.parallel, "hardware.tp");
    r.gpu = gpu_for(option, r.scenario.hardware.parallel.gpus(), catalog, "hardware.gpu");
    r.interconnect = interconnect(r.gpu, r.scenario.hardware.parallel.gpus(), option.nvlink_bridge);
    if (option.kv_offload_gb > 0) {  // "+offload<G>": the option's host KV tier (the engine field says the same)
      if (s.engine.kv_offload_gb > 0 && s.engine.kv_offload_gb != option.kv_offload_gb)
        throw ConfigError("hardware.gpu", "'" + s.hardware.gpu + "' gives a " + std::to_string(option.kv_offload_gb) +
                                              " GiB host KV tier but engine.kv_offload_gb is " +
                                              format_given(s.engine.kv_offload_gb) + " (give one of them)");
      r.scenario.engine.kv_offload_gb = option.kv_offload_gb;
      r.scenario.engine.validate();  // the tier needs prefix caching
    }
  });
  p.throw_if_any();
  r.notes = r.model.notes;
  // A release before the model's architecture could not have loaded it (spec/architecture_release.hpp).
  if (auto note = check_release_serves(r.model, s.engine.runtime_release, "engine.runtime")) r.notes.push_back(*note);
  const WeightFormat format = weight_format_for_model(r.model, s.weights, "quant.weights", r.notes);
  // The resolved scenario names the format it runs (an "auto" resolves to the checkpoint's), so resolving it again
  // gives the same plan and every output shows the format used.
  r.scenario.weights = format.id;
  r.quant.weights = format_for_gpu(format, r.gpu, "quant.weights");
  r.quant.kv_dtype = parse_kv_dtype(s.kv_cache, "quant.kv_cache");
  // A named release ("vllm==0.4.1") runs that release's quantised kernels (pre-Marlin AWQ/GPTQ, FP8 on Ada).
  r.quant.kernels = quant_kernels_for(s.engine.runtime_release, "engine.runtime");
  // An FP8/INT8/INT4 KV cache needs no tensor path: vLLM stores FP8 KV on Ampere too and dequantises it in
  // the attention kernel [quantization.md §7], so any GPU accepts any KV dtype.
  // Catalogue prices are USD; in another currency only the user's own figures can be used (no exchange rates).
  const bool usd = s.cost.currency == "USD";
  if (s.hardware.price_per_gpu_hour) {
    r.price_per_gpu_hour = *s.hardware.price_per_gpu_hour;
    r.price_is_placeholder = false;
  } else if (usd && !(r.gpu.price_per_hour > 0)) {
    // A GPU spec file without a price would be billed nothing and win every comparison on cost.
    p.add("hardware.price_per_gpu_hour", "the GPU spec of " + r.gpu.id +
                                             " has no price_per_hour: give the price per GPU-hour here (or --price / "
                                             "--prices), or add price_per_hour to the spec file (0 only when set here)");
  } else if (usd) {
    r.price_per_gpu_hour = r.gpu.price_per_hour;
    r.price_is_placeholder = r.gpu.price_is_placeholder;
  } else {
    p.add("hardware.price_per_gpu_hour",
          "cost.currency is " + s.cost.currency + " but the catalogue's price of " + r.gpu.id + " ($" +
              format_value(r.gpu.price_per_hour) + "/h) is in USD; give the price per GPU-hour in " + s.cost.currency +
              " (llmsim assumes no exchange rate)");
  }
  if (s.hardware.purchase_price_per_gpu) {
    r.purchase_price_per_gpu = s.hardware.purchase_price_per_gpu;
    r.purchase_price_is_placeholder = false;
  } else if (usd && r.gpu.purchase_price > 0) {
    r.purchase_price_per_gpu = r.gpu.purchase_price;
    r.purchase_price_is_placeholder = r.gpu.purchase_price_is_placeholder;
  }
  detail::check_monthly_bill(r.scenario, r.price_per_gpu_hour);

  const auto& m = r.model;
  const int tp = r.scenario.hardware.parallel.tp, pp = r.scenario.hardware.parallel.pp;
  m.check_tensor_parallel(tp, p, "hardware.tp");
  // VLLM_PP_LAYER_PARTITION: one stage count per stage, each > 0, summing to the model's layers (get_pp_indices).
  check_layer_partition(r.scenario.hardware.parallel.layer_partition, pp, m.num_layers, "hardware.pp_layer_partition", p);
  // pp need not divide the layers: an uneven split is vLLM's (pp_stage_layers: get_pp_indices), priced at its
  // slowest stage and sized at its largest.
  // Knobs left unset take the defaults of the engine the policy models (vLLM V1: by GPU and entry point).
  {
    const double kv_offload_gb = r.scenario.engine.kv_offload_gb;  // the GPU option's "+offload<G>", if any
    r.scenario.engine = effective_engine(s.engine, r.gpu, offline_workload(s.workload), &r.model);
    r.scenario.engine.kv_offload_gb = kv_offload_gb;
    // SGLang's decode CUDA-graph limit: the release's default for this card and TP, or the scenario's own
    // (--cuda-graph-max-bs), as the release honours it (perf: larger decode batches run eagerly).
    if (r.scenario.engine.resolved_runtime() == Runtime::sglang)
      r.scenario.engine.cuda_graph_max_bs =
          sglang_cuda_graph_max_bs(r.gpu, s.engine.runtime_release, tp, s.engine.cuda_graph_max_bs);
    // An SGLang release's own mem_fraction_static, unless the scenario set the fraction (memory/engine_memory);
    // from 0.5.3 it follows the chunk and graph sizes resolved above.
    if (!s.engine.gpu_memory_utilization_given && r.scenario.engine.resolved_runtime() == Runtime::sglang) {
      if (const auto f = sglang_mem_fraction_static(r.gpu, s.engine.runtime_release, tp * pp,
                                                    s.engine.speculative.has_value(),
                                                    r.scenario.engine.max_num_batched_tokens,
                                                    r.scenario.engine.cuda_graph_max_bs.value_or(0)))
        r.scenario.engine.gpu_memory_utilization = *f;
    }
  }
  // A vLLM release before hybrid prefix caching turns it off for this model (spec::
  // vllm_release_without_hybrid_prefix_caching): the run has no hits, and says so.
  if (m.has_linear_attention() && r.scenario.engine.prefix_caching() &&
      r.scenario.engine.resolved_runtime() != Runtime::sglang) {
    if (const auto off = vllm_release_without_hybrid_prefix_caching(s.engine.runtime_release, m.linear_mamba2)) {
      r.scenario.engine.enable_prefix_caching = false;
      const std::string why = "vLLM " + off->release + " disables prefix caching for a hybrid model (from " +
                              off->first_with + " it has it)";
      if (r.scenario.engine.kv_offload_gb > 0)
        p.add("engine.kv_offload_gb", "a host KV tier holds prefix-cache blocks, and " + why);
      if (s.workload.warm_cache) p.add("workload.warm_cache", "a warm cache is the prefix cache's content, and " + why);
      r.prefix_caching_off = "prefix caching is off: vLLM " + off->release + " disables it for a hybrid (" +
                             (m.linear_mamba2 ? "Mamba-2" : "gated DeltaNet") + ") model; from vLLM " +
                             off->first_with + " it caches whole hybrid blocks";
      r.notes.push_back(r.prefix_caching_off);
    }
  }
  // An SGLang release that forces the radix cache off for a hybrid model (spec::
  // sglang_release_without_hybrid_radix_cache): no hits, and its Mamba pool is sized by max_running_requests.
  if (m.has_linear_attention() && r.scenario.engine.prefix_caching() &&
      r.scenario.engine.resolved_runtime() == Runtime::sglang) {
    if (const auto off = sglang_release_without_hybrid_radix_cache(s.engine.runtime_release, m.linear_mamba2)) {
      r.scenario.engine.enable_prefix_caching = false;
      if (s.workload.warm_cache)
        p.add("workload.warm_cache", "a warm cache is the radix cache's content, and SGLang " + off->release +
                                         " disables it for a hybrid model (from " + off->first_with + " it has it)");
      r.prefix_caching_off = "the radix cache is off: SGLang " + off->release + " disables it for a hybrid (" +
                             (m.linear_mamba2 ? "Mamba-2" : "gated DeltaNet") + ") model; from SGLang " +
                             off->first_with + " its Mamba radix cache keeps states beside the tree";
      r.notes.push_back(r.prefix_caching_off);
    }
  }
  const auto& e = r.scenario.engine;
  (void)multi_step_for(e);  // --num-scheduler-steps on an engine without it: refused here, naming the field
  if (e.max_model_len > m.max_position_embeddings) {
    p.add("engine.max_model_len", "must be <= the model's max_position_embeddings (" +
                                      std::to_string(m.max_position_embeddings) + "), got " +
                                      std::to_string(e.max_model_len));
  }
  r.max_model_len = e.max_model_len > 0 ? e.max_model_len : default_max_model_len(m, e);
  r.max_model_len_auto = e.max_model_len_auto();
  r.max_model_len_wanted = r.max_model_len_auto ? r.max_model_len : 0;
  if (!e.chunked_prefill() && e.max_model_len > 0 && e.max_num_batched_tokens < e.max_model_len) {
    p.add("engine.max_num_batched_tokens",
          "must be >= max_model_len (" + std::to_string(e.max_model_len) + ") unless prefills are chunked (policy "
          "'vllm' or 'chunked'), got " +
              std::to_string(e.max_num_batched_tokens));
  }
  if (e.max_num_seqs > e.max_num_batched_tokens) {
    p.add("engine.max_num_seqs", "must be <= max_num_batched_tokens (" + std::to_string(e.max_num_batched_tokens) +
                                     ") so every running sequence can decode, got " + std::to_string(e.max_num_seqs));
  }
  // The adapters the requests name run in vLLM's LoRA slots: without slots they name nothing vLLM serves, and more
  // than the slots would be swapped in from host memory (max_cpu_loras), which llmsim does not model.
  if (const auto& a = s.workload.lora_adapters) {
    if (!e.enable_lora)
      p.add("workload.lora_adapters", "takes effect only with engine.enable_lora true (vLLM's --enable-lora); set it or "
                                      "leave this out");
    else if (*a > e.max_loras)
      p.add("workload.lora_adapters", "must be <= engine.max_loras (" + std::to_string(e.max_loras) +
                                          "): more adapters than GPU slots are swapped in from host memory "
                                          "(vLLM's max_cpu_loras), which llmsim does not model; got " +
                                          std::to_string(*a));
  }
  if (e.speculative) {
    collect([&] { r.speculation = resolve_speculation(*e.speculative, s.workload.speculative_acceptance_rate, m, catalog); });
    // Every decoder verifies k + 1 tokens per step; the engine runs all of them in every step (as without
    // speculation), so the token budget must hold them (vLLM would shorten some proposals instead).
    const std::int64_t need = static_cast<std::int64_t>(e.max_num_seqs) * (e.speculative->num_speculative_tokens + 1);
    if (need > e.max_num_batched_tokens)
      p.add("engine.speculative.num_speculative_tokens",
            "max_num_seqs (" + std::to_string(e.max_num_seqs) + ") x (k + 1) = " + std::to_string(need) +
                " verified tokens exceed max_num_batched_tokens (" + std::to_string(e.max_num_batched_tokens) +
                "); lower k or max_num_seqs, or raise max_num_batched_tokens");
  }
  // Lengths that can never fit the context.
  const auto classes = s.workload.effective_classes();
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const auto& c = classes[i];
    const std::string cp = s.workload.classes.empty() ? "workload" : "workload.classes[" + std::to_string(i) + "]";
    auto min_len = [](const LengthDist& d) -> std::int64_t {
      if (auto* f = std::get_if<FixedLength>(&d)) return f->value;
      if (auto* u = std::get_if<UniformLength>(&d)) return u->min;
      if (auto* n = std::get_if<NormalLength>(&d)) return n->min;
      return 1;
    };
    const auto in_min = min_len(c.input_tokens), out_min = min_len(c.output_tokens);
    if (in_min >= r.max_model_len) {
      p.add(cp + ".input_tokens", "every prompt is at least " + std::to_string(in_min) +
                                      " tokens, leaving no room to generate within max_model_len " +
                                      std::to_string(r.max_model_len));
    } else if (in_min + out_min > r.max_model_len && s.workload.too_long == TooLongPolicy::reject) {
      p.add(cp + ".output_tokens", "every request needs at least " + std::to_string(in_min + out_min) +
                                       " tokens > max_model_len " + std::to_string(r.max_model_len) +
                                       " and workload.too_long is 'reject'");
    }
    if (c.prefix_tokens >= r.max_model_len) {
      p.add(cp + ".prefix_tokens", "must be < max_model_len (" + std::to_string(r.max_model_len) + "), got " +
                                       std::to_string(c.prefix_tokens));
    }
  }
  p.throw_if_any();
  if (s.disaggregation) r.disagg_pools = resolve_disaggregation(s, catalog);
  return r;
}

ResolvedScenario resolve_unbilled(Scenario s, const Catalog& catalog) {
  if (!s.hardware.price_per_gpu_hour) s.hardware.price_per_gpu_hour = 0.0;
  return resolve(s, catalog);
}

}  // namespace llmsim::spec
