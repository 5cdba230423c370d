// `llmsim memory`: does the model fit this GPU, and how much KV cache is left?
#include <cmath>
#include <iostream>

#include "common.hpp"
#include "server_options.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/core/number.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/gpu_option.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::cli {

namespace {

// What a server command line sets that the memory plan reads: the model, the split, the formats and the engine's
// memory knobs. The others do not change one replica's memory (noted), or need a scenario (refused).
const ServerOptionMap kMemoryServerOptions{
    analysis::PlanCommand::memory,
    {{"model", "model"}, {"hardware.tp", "tp"}, {"hardware.pp", "pp"},
     {"hardware.pp_layer_partition", "pp-layer-partition"}, {"quant.weights", "quant"},
     {"quant.kv_cache", "kv-dtype"}, {"engine.max_model_len", "max-model-len"},
     {"engine.gpu_memory_utilization", "gpu-memory-utilization"},
     {"engine.max_num_batched_tokens", "max-num-batched-tokens"}, {"engine.max_num_seqs", "max-num-seqs"},
     {"engine.block_size", "block-size"}, {"engine.cpu_offload_gb", "cpu-offload-gb"},
     {"engine.enable_lora", "enable-lora"}, {"engine.max_loras", "max-loras"}, {"engine.max_lora_rank", "max-lora-rank"},
     {"engine.runtime", "engine"}},
    "no-cuda-graphs", "no-prefix-caching"};
// Fields set by memory's own options, beside those a server line sets.
const std::vector<std::pair<std::string, std::string>> kMemoryFlags{
    {"hardware.gpu", "gpu"}, {"engine.cuda_graphs", "no-cuda-graphs"}, {"engine.enable_prefix_caching", "no-prefix-caching"},
    {"engine.runtime", "engine-version"}};

int run_memory(int argc, char** argv) {
  return guarded("memory", [&] {
    po::options_description opts("llmsim memory options");
    opts.add_options()
        ("model", po::value<std::string>(), "model id (llmsim catalog models) or path to a HF config.json (required unless "
                                             "--vllm-args names it)")
        ("gpu", po::value<std::string>()->required(), "GPU id (llmsim catalog gpus), '<gpu>:mig-<profile>', a GPU spec file, "
                                                       "or an option such as 2xrtx4090-24gb@pp, 2xa100-80gb-pcie+nvlink")
        ("num-gpus", po::value<int>(), "GPUs of one replica (default tp x pp)")
        ("tp", po::value<int>(), "tensor parallel size (default num-gpus / pp)")
        ("pp", po::value<int>()->default_value(1), "pipeline parallel size")
        ("pp-layer-partition", po::value<std::string>(), "layers of each pipeline stage, vLLM's VLLM_PP_LAYER_PARTITION "
                                                         "(\"18,17\"; default: vLLM's split)")
        ("quant", po::value<std::string>()->default_value("auto"), "weight format (llmsim catalog quants; auto = the checkpoint's quantization_config, else fp16)")
        ("kv-dtype", po::value<std::string>()->default_value("fp16"),
         "KV-cache dtype: fp16, bf16, fp8, int8, int4, or vLLM's --kv-cache-dtype value (auto, fp8_e4m3, fp8_e5m2, bfloat16)")
        ("max-model-len", po::value<std::string>()->default_value("auto"), "context length to plan for: a number (vLLM's strict check: "
                                                                          "does not fit when one such sequence's KV does not), or auto (also -1; "
                                                                          "the model's limit if it fits, else the largest that does)")
        ("gpu-memory-utilization", po::value<double>(), "fraction of GPU memory the engine may use (default 0.90, vLLM's; "
                                                         "an SGLang release's own mem_fraction_static by card and tp)")
        ("max-num-batched-tokens", po::value<int>(), "token budget of one iteration (sets the activation peak; default: vLLM V1's for the GPU, as in a scenario)")
        ("max-num-seqs", po::value<int>(), "most sequences in one batch (sampler rows; default: vLLM V1's for the GPU)")
        ("block-size", po::value<int>()->default_value(16), "KV block size in tokens")
        ("no-cuda-graphs", "plan without CUDA-graph memory (vLLM --enforce-eager)")
        ("no-prefix-caching", "plan with prefix caching off (SGLang --disable-radix-cache: a hybrid model's Mamba pool is "
                              "then max_running_requests states, 512 unset)")
        ("cpu-offload-gb", po::value<double>()->default_value(0), "GiB of weights per GPU kept in host memory (vLLM --cpu-offload-gb)")
        ("enable-lora", "plan vLLM's LoRA adapter slots (vLLM --enable-lora): their buffers come out of the KV cache")
        ("max-loras", po::value<int>(), "LoRA adapter slots on the GPU (vLLM --max-loras, default 1; needs --enable-lora)")
        ("max-lora-rank", po::value<int>(), "rank each slot is allocated at (vLLM --max-lora-rank, default 16; needs --enable-lora)")
        ("engine", po::value<std::string>(),
         "the server whose memory accounting to plan: vllm (default: V1's) or sglang (no profiling run; the KV pool "
         "is mem_fraction_static x total minus what is in use, by release, card and tp); --sglang-args sets it")
        ("engine-version", po::value<std::string>(),
         "the engine release to plan as (0.7.4, vllm==0.8.4, sglang==0.4.9): that release's memory accounting (V0 "
         "or V1, its profiling run) and scheduler defaults (engine.runtime); a bare version is --engine's release")
        ("json", "print the plan as JSON");
    add_server_options(opts);
    po::variables_map vm;
    if (!parse_args_with_server(argc, argv, opts, vm,
                                "usage: llmsim memory --model M --gpu G [--num-gpus N --tp N] --quant Q [--kv-dtype D] "
                                "[--max-model-len L] [--cpu-offload-gb G] [--engine vllm|sglang] [--engine-version V] [--vllm-args \"vllm serve M ...\" | "
                                "--sglang-args \"...\"] [--json]",
                                kMemoryServerOptions)) {
      return kOk;
    }
    if (!vm.count("model")) throw ConfigError("--model", "required: name the model (or give --vllm-args \"vllm serve MODEL ...\")");
    const auto& catalog = spec::Catalog::builtin();
    Problems problems;
    auto positive = [&](const char* flag, int v) {
      if (v < 1) problems.add(std::string("--") + flag, "must be >= 1, got " + std::to_string(v));
    };
    const int pp = vm["pp"].as<int>();
    positive("pp", pp);
    int tp = 1;
    if (vm.count("tp")) {
      tp = vm["tp"].as<int>();
      positive("tp", tp);
    }
    if (vm.count("num-gpus") && pp >= 1 && tp >= 1) {
      try {  // one rule (spec::split_for_count), with the CLI's flag names
        tp = spec::split_for_count(vm["num-gpus"].as<int>(), vm.count("tp") ? std::optional<int>(tp) : std::nullopt, pp,
                                   "--num-gpus").tp;
      } catch (const ConfigError& e) {
        const std::string what = e.what();  // "--num-gpus: <problem>" (tp and pp were checked above)
        problems.add(e.path(), what.substr(what.find(": ") + 2));
      }
    }
    int max_model_len = spec::kMaxModelLenAuto;
    bool auto_named = false;  // --max-model-len auto or -1 written out (not the default, not 0 = unset)
    if (const std::string len = vm["max-model-len"].as<std::string>(); to_lower(len) != "auto") {
      const auto n = parse_number(len);
      if (!n || *n != std::floor(*n) || *n < spec::kMaxModelLenAuto || *n > 2147483647.0)
        problems.add("--max-model-len", "must be a number of tokens >= 1 or auto (-1; 0 = unset = auto), got " + len);
      else if (*n > 0)
        max_model_len = static_cast<int>(*n);
      else
        auto_named = *n < 0;
    } else {
      auto_named = !vm["max-model-len"].defaulted();
    }
    problems.throw_if_any();
    // The flags as the scenario they stand for, planned as Python's llmsim.memory() and a simulation of it plan a
    // replica (spec::resolve: the policy's defaults for the GPU, the format on this card; memory::plan_memory), one
    // document for both (memory::to_json). Problems name the flag that set the field.
    // A flag enters the document only when given: one left out takes the scenario format's default and the
    // release's own (SGLang's mem_fraction_static by release, card and tp: spec::resolve), as simulate and Python's
    // llmsim.memory() plan it. The flags' shown defaults are vLLM's, which that rule gives for vLLM.
    Json engine = Json::object();
    if (vm.count("gpu-memory-utilization")) engine["gpu_memory_utilization"] = vm["gpu-memory-utilization"].as<double>();
    if (!vm["block-size"].defaulted()) engine["block_size"] = vm["block-size"].as<int>();
    if (!vm["cpu-offload-gb"].defaulted()) engine["cpu_offload_gb"] = vm["cpu-offload-gb"].as<double>();
    if (max_model_len > 0) engine["max_model_len"] = max_model_len;  // else vLLM's auto
    // "auto" or -1 written out asks for vLLM's auto by name (a release without it would refuse it: the plan says so);
    // left out, or 0, it is the planner's default.
    else if (auto_named) engine["max_model_len"] = "auto";
    if (vm.count("max-num-batched-tokens")) engine["max_num_batched_tokens"] = vm["max-num-batched-tokens"].as<int>();
    if (vm.count("max-num-seqs")) engine["max_num_seqs"] = vm["max-num-seqs"].as<int>();
    if (vm.count("no-cuda-graphs")) engine["cuda_graphs"] = false;
    if (vm.count("no-prefix-caching")) engine["enable_prefix_caching"] = false;
    if (vm.count("enable-lora")) engine["enable_lora"] = true;
    if (vm.count("max-loras")) engine["max_loras"] = vm["max-loras"].as<int>();
    if (vm.count("max-lora-rank")) engine["max_lora_rank"] = vm["max-lora-rank"].as<int>();
    // The server: vLLM (V1 unless a release says otherwise) or SGLang (--engine sglang, an SGLang line). A bare
    // --engine-version is that server's release, as `llmsim check --engine-version` reads one beside an SGLang line.
    std::string server = "vllm";
    if (vm.count("engine")) {
      server = to_lower(vm["engine"].as<std::string>());
      if (server != "vllm" && server != "sglang")
        throw ConfigError("--engine", "expected vllm or sglang, got '" + vm["engine"].as<std::string>() +
                                          "' (a release: --engine-version 0.4.9)");
    }
    if (vm.count("engine-version"))
      engine["runtime"] = spec::release_from_flag(vm["engine-version"].as<std::string>(), server, "--engine-version");
    else if (server == "sglang")
      engine["runtime"] = "sglang";
    // A tp or pp the user wrote (--tp/--pp/--num-gpus) counts against a counted GPU option, a 1 included; one not
    // written is left to the option ("2x..." is one replica of two GPUs: spec::split_for).
    Json hardware{{"gpu", vm["gpu"].as<std::string>()}};
    if (vm.count("tp") || vm.count("num-gpus")) hardware["tp"] = tp;
    if (!vm["pp"].defaulted() || vm.count("num-gpus")) hardware["pp"] = pp;
    if (vm.count("pp-layer-partition")) hardware["pp_layer_partition"] = vm["pp-layer-partition"].as<std::string>();
    const Json doc{{"model", vm["model"].as<std::string>()},
                   {"quant", {{"weights", vm["quant"].as<std::string>()}, {"kv_cache", vm["kv-dtype"].as<std::string>()}}},
                   {"hardware", hardware},
                   {"engine", engine}};
    spec::ResolvedScenario r;
    memory::MemoryPlan plan;
    try {
      r = spec::resolve_unbilled(spec::scenario_from_json(JsonView(doc, "")), catalog);
      plan = memory::plan_memory(r);
    } catch (const ConfigError& e) {
      throw flag_named(e, kMemoryServerOptions, kMemoryFlags);
    }
    const spec::ModelSpec& model = r.model;
    const spec::GpuSpec& gpu = r.gpu;
    const spec::ParallelConfig& par = r.scenario.hardware.parallel;
    const spec::Quantization& quant = r.quant;
    const spec::EngineConfig& e = r.scenario.engine;
    const std::vector<std::string>& notes = r.notes;
    if (vm.count("json")) {
      print_json(memory::to_json(r, plan));
      return kOk;
    }
    const auto& g = plan.per_gpu;
    std::cout << model.id << " on " << (par.gpus() > 1 ? std::to_string(par.gpus()) + " x " : "") << gpu.id
              << " (tp " << par.tp << ", pp " << par.pp << "), weights " << quant.weights.id << ", KV cache "
              << spec::to_string(quant.kv_dtype) << ", " << memory::describe_context(plan) << "\n";
    std::cout << "params " << fmt(static_cast<double>(plan.params) / 1e9, 2) << " B; KV cache "
              << fmt(plan.kv_bytes_per_token, 0) << " bytes per token (" << fmt(plan.kv_bytes_per_token / 1024, 1)
              << " KiB), " << fmt(plan.kv_bytes_per_token_per_gpu, 0) << " per GPU"
              << (plan.kv_mla_entries_aligned ? " (MLA entries padded to 256 bytes: vLLM V0 0.7.2-0.7.x)" : "")
              << (plan.kv_sliding_window > 0 ? "; sliding-window layers keep " + std::to_string(plan.kv_sliding_window) +
                                                    " tokens (" + std::to_string(plan.kv_cache_groups) + " KV-cache groups)"
                                              : std::string())
              << "\n";
    for (const auto& n : notes) std::cout << "note: " << n << "\n";
    std::cout << "\n";
    // GB = 10^9 bytes (the model-size arithmetic of the guides), GiB = 2^30 (what nvidia-smi's MiB and a card's
    // "24 GB" mean): both, so neither has to be converted by hand.
    Table t({"per GPU", "bytes", "GB", "GiB", "share"});
    auto row = [&](const std::string& name, std::int64_t b) {
      t.add({name, std::to_string(b), fmt(static_cast<double>(b) / 1e9, 2),
             fmt(static_cast<double>(b) / (1024.0 * 1024.0 * 1024.0), 2),
             fmt(100.0 * static_cast<double>(b) / static_cast<double>(g.total_bytes), 1) + "%"});
    };
    row("weights", g.weights_bytes);
    if (g.mla_absorbed_weights_bytes > 0)
      row("MLA absorbed decode weights (W_Q_UK, W_UV_O; vLLM 0.7.1-0.7.x)", g.mla_absorbed_weights_bytes);
    if (g.lora_bytes > 0)
      row("LoRA slots (max_loras " + std::to_string(e.max_loras) + " x rank " + std::to_string(e.max_lora_rank) + ")",
          g.lora_bytes);
    row("activations (profiling peak)", g.activation_bytes);
    row("runtime", g.runtime_bytes);
    row("  CUDA context", g.cuda_context_bytes);
    if (g.cuda_graph_bytes > 0) row("  CUDA graphs", g.cuda_graph_bytes);
    if (g.comm_buffer_bytes > 0) row("  NCCL / all-reduce buffers", g.comm_buffer_bytes);
    const std::int64_t other = g.runtime_bytes - g.cuda_context_bytes - g.cuda_graph_bytes - g.comm_buffer_bytes;
    if (other > 0) row("  other non-torch", other);
    if (g.linear_state_bytes > 0 && plan.linear_state_slots > 0)
      row("Mamba state pool (" + std::to_string(plan.linear_state_slots) + " slots)", g.linear_state_bytes);
    else if (g.linear_state_bytes > 0)
      row("linear-attention state (max_num_seqs " + std::to_string(e.max_num_seqs) + ")", g.linear_state_bytes);
    row("KV cache", g.kv_cache_bytes);
    row("free (margin)", g.free_bytes);
    row("total", g.total_bytes);
    t.print(std::cout);
    // Which runtime's accounting: V0 takes its snapshot before the communicators (charged in the budget), V1 after
    // them; SGLang profiles nothing (memory/engine_memory.hpp).
    const spec::Runtime rt = e.resolved_runtime();
    const bool v0 = rt == spec::Runtime::vllm_v0 || rt == spec::Runtime::vllm_v0_sync || rt == spec::Runtime::vllm_v0_paged;
    std::cout << "gpu_memory_utilization " << fmt(e.gpu_memory_utilization, 2) << " x total = "
              << fmt(static_cast<double>(g.requested_bytes) / 1e9, 2)
              << " GB shared by weights, activations, non-torch memory"
              << (v0 ? ", the communicators" : "") << " and the KV cache; the CUDA context"
              << (v0 ? (g.cuda_graph_bytes > 0 ? " and CUDA graphs" : "")
                     : (g.cuda_graph_bytes > 0 ? ", CUDA graphs and communicators" : " and communicators"))
              << " use the rest (runtime " << spec::to_string(rt)
              << (e.runtime_release ? ", " + *e.runtime_release : std::string()) << ")\n";
    if (g.offloaded_weights_bytes > 0)
      std::cout << "plus " << fmt(static_cast<double>(g.offloaded_weights_bytes) / 1e9, 2)
                << " GB of weights in host memory, copied over PCIe in every iteration\n";
    std::cout << "\n";
    if (plan.fits) {
      // With sliding-window layers the capacity counts tokens at every layer's cost, and long sequences take less:
      // labelled, so "82,752 tokens" beside "2 sequences of 131,072" is not read as one quantity (memory::kv_capacity_note).
      const bool windowed = !memory::kv_capacity_note(plan).empty();
      std::cout << "fits: yes. KV capacity " << plan.kv_capacity_tokens << " tokens (" << plan.kv_capacity_blocks
                << " blocks of " << e.block_size << ")"
                << (windowed ? std::string(" at every layer's cost per token (") +
                                   (plan.kv_sliding_groups > 0 ? "the simulation frees a decoder's blocks past the "
                                                                 "window as vLLM V1 does"
                                                               : "as the simulation charges them") +
                                   "); the sliding-window layers keep only their last " +
                                   std::to_string(plan.kv_sliding_window) + " tokens, so vLLM holds longer sequences in less:"
                             : std::string(","))
                << " " << plan.max_concurrent_seqs << " concurrent sequence"
                << (plan.max_concurrent_seqs == 1 ? "" : "s") << " of " << plan.max_model_len << " tokens";
      // The same pool at shorter contexts (memory::MemoryPlan::concurrent_seqs_at): "1 sequence of 50336" is not one user.
      std::string shorter;
      for (const auto& [tokens, seqs] : plan.concurrent_seqs_at)
        shorter += (shorter.empty() ? "" : ", ") + std::to_string(seqs) + " of " + std::to_string(tokens);
      if (!shorter.empty()) std::cout << "; at shorter contexts the same pool holds " << shorter;
      std::cout << "\n";
      if (const std::string unit = memory::kv_unit_note(r); !unit.empty()) std::cout << "(" << unit << ")\n";
    } else {
      std::cout << "fits: NO, cannot run because " << plan.reason << "\n";
    }
    if (plan.linear_state_blocks_per_seq > 0 && plan.fits)
      // vLLM V1 reserves nothing for max_num_seqs: a running sequence's state is blocks of the same pool.
      std::cout << "linear-attention state: max_num_seqs " << e.max_num_seqs << " -> " << plan.linear_state_seqs_fit
                << " sequences' state fit the pool (" << fmt(plan.linear_state_bytes_per_seq_per_gpu / 1e6, 1)
                << " MB each" << (par.gpus() > 1 ? " per GPU" : "") << "; the scheduler admits as many as their state and KV fit)\n";
    if (plan.linear_state_slots > 0) {
      // SGLang's Mamba pool (memory/sglang_mamba_pool.hpp): how it was split off and what it caps.
      const double ratio = plan.linear_state_memory_ratio;
      std::cout << "Mamba state pool (SGLang): " << plan.linear_state_slots << " slots of "
                << fmt(plan.linear_state_bytes_per_seq_per_gpu / 1e6, 1) << " MB"
                << (par.gpus() > 1 ? " per GPU" : "") << ", "
                << (ratio > 0 ? "the radix cache's share " + fmt(ratio, 2) + "/(1+" + fmt(ratio, 2) +
                                    ") of the memory left after the weights (mamba_full_memory_ratio)"
                              : std::string("one per running request (radix cache off: max_running_requests)"))
                << "; running requests capped at " << plan.max_running_requests
                << (ratio > 0 ? " (the lesser of max_running_requests " + std::to_string(e.max_num_seqs) +
                                    " and slots / " + std::to_string(spec::sglang::kMambaSlotsPerRunningRequest) + " = " +
                                    std::to_string(plan.linear_state_slots / spec::sglang::kMambaSlotsPerRunningRequest) + ")"
                              : std::string())
                << "\n";
    }
    if (plan.longest_context_tokens > 0)
      std::cout << "longest context one sequence can have: " << plan.longest_context_tokens << " tokens (model limit "
                << model.max_position_embeddings << ")\n";
    return kOk;
  });
}

}  // namespace

Command command_memory() {
  return {"memory", "does a model fit a GPU: weights, KV cache, activations, runtime per GPU", &run_memory};
}

}  // namespace llmsim::cli
