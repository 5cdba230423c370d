// `llmsim step`: the time of one engine iteration for a batch shape, with its per-op roofline breakdown.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <string>

#include "common.hpp"
#include "server_options.hpp"
#include "llmsim/analysis/step.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/perf/collective.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/perf/served_model.hpp"
#include "llmsim/perf/speculative.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/gpu_option.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "llmsim/spec/quantization.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::cli {

namespace {

const char* kUsage =
    "usage: llmsim step --model M --gpu G [--quant Q] [--kv-dtype D] [--tp N] [--pp N]\n"
    "                   [--prefill-tokens P --prefill-context C] [--decode-seqs B --context L]\n"
    "                   [--gpu-profile FILE] [--eager] [--engine vllm|RUNTIME] [--cpu-offload-gb G]\n"
    "                   [--enable-lora [--max-loras N --max-lora-rank R --lora-adapters A]]\n"
    "                   [--vllm-args \"vllm serve M ...\" | --sglang-args \"...\"] [--json]\n\n"
    "Time of one serving-engine iteration: one prefill chunk of P tokens after C cached tokens, plus B\n"
    "sequences decoding one token each with L tokens of context. Prints the per-op roofline breakdown.";

// What a server command line sets that one iteration's time reads: the model, the split, the formats, CUDA graphs,
// the runtime (SGLang's). The memory and scheduling knobs only bound which batches fit (noted: `llmsim memory`).
const ServerOptionMap kStepServerOptions{
    analysis::PlanCommand::step,
    {{"model", "model"}, {"hardware.tp", "tp"}, {"hardware.pp", "pp"}, {"quant.weights", "quant"},
     {"quant.kv_cache", "kv-dtype"}, {"engine.cpu_offload_gb", "cpu-offload-gb"}, {"engine.runtime", "engine"},
     {"engine.cuda_graph_max_bs", "cuda-graph-max-bs"}, {"engine.enable_lora", "enable-lora"},
     {"engine.max_loras", "max-loras"}, {"engine.max_lora_rank", "max-lora-rank"}},
    "eager"};

int run_step(int argc, char** argv) {
  po::options_description opts("step options");
  opts.add_options()
      ("model", po::value<std::string>(), "model id or path to a Hugging Face config.json (required unless --vllm-args "
                                          "names it)")
      ("gpu", po::value<std::string>()->required(), "GPU id ('a100-80gb-sxm', 'a100-80gb-sxm:mig-3g.40gb'), spec file, or "
                                                     "an option such as 2xrtx4090-24gb@pp, 2xa100-80gb-pcie+nvlink")
      ("quant", po::value<std::string>()->default_value("auto"), "weight format (fp16, awq-int4, fp8, ...; auto = the checkpoint's)")
      ("kv-dtype", po::value<std::string>()->default_value("fp16"), "KV-cache dtype (fp16, fp8, int8, ...)")
      ("tp", po::value<int>()->default_value(1), "tensor-parallel size")
      ("pp", po::value<int>()->default_value(1), "pipeline-parallel size")
      ("prefill-tokens", po::value<std::int64_t>()->default_value(0), "tokens of the prefill chunk")
      ("prefill-context", po::value<std::int64_t>()->default_value(0), "tokens already cached before the chunk")
      ("decode-seqs", po::value<std::int64_t>()->default_value(0), "sequences decoding one token")
      ("context", po::value<std::int64_t>()->default_value(0), "context length of each decoding sequence")
      ("gpu-profile", po::value<std::string>()->default_value(""), "calibrated HardwareProfile JSON file")
      ("eager", po::bool_switch(), "no CUDA graphs (vLLM --enforce-eager)")
      ("engine", po::value<std::string>()->default_value("vllm"),
       "runtime whose kernels and overheads to model: vllm (V1), vllm-v0, or a runtime name (vllm-v1, vllm-v0.5, vllm-v0-paged, "
       "sglang, lmdeploy-turbomind, gpt-fast, llama.cpp)")
      ("cpu-offload-gb", po::value<double>()->default_value(0), "GiB of weights per GPU in host memory (vLLM --cpu-offload-gb)")
      ("cuda-graph-max-bs", po::value<int>(),
       "SGLang's --cuda-graph-max-bs: the largest decode batch replayed from a CUDA graph (--engine sglang[==X]; "
       "default: the release's for the GPU and TP)")
      ("enable-lora", "run vLLM's LoRA shrink/expand kernels in the step (vLLM --enable-lora; op 'lora')")
      ("max-loras", po::value<int>(), "LoRA adapter slots (vLLM --max-loras, default 1; needs --enable-lora)")
      ("max-lora-rank", po::value<int>(), "rank the slots are padded to (vLLM --max-lora-rank, default 16; needs --enable-lora)")
      ("lora-adapters", po::value<int>(), "distinct adapters the step's requests use (workload.lora_adapters, default 1, "
                                          "at most --max-loras; needs --enable-lora)")
      ("speculative", po::value<std::string>()->default_value(""),
       "speculative decoding: the verification step of --decode-seqs with its proposer (draft, ngram, eagle, mtp)")
      ("draft-model", po::value<std::string>()->default_value(""), "draft model id or config.json (--speculative draft)")
      ("num-speculative-tokens", po::value<int>()->default_value(1), "k: tokens proposed per sequence (--speculative)")
      ("json", po::bool_switch(), "print JSON");
  add_server_options(opts);
  po::variables_map vm;
  if (!parse_args_with_server(argc, argv, opts, vm, kUsage, kStepServerOptions)) return kOk;
  if (!vm.count("model")) throw ConfigError("--model", "required: name the model (or give --vllm-args \"vllm serve MODEL ...\")");

  const analysis::StepLengths lengths{vm["prefill-tokens"].as<std::int64_t>(), vm["prefill-context"].as<std::int64_t>(),
                                      vm["decode-seqs"].as<std::int64_t>(), vm["context"].as<std::int64_t>()};

  const auto& catalog = spec::Catalog::builtin();
  const spec::ModelSpec model = catalog.model(vm["model"].as<std::string>(), "--model");
  // A tp or pp the user wrote (--tp/--pp, or -tp in --vllm-args) counts, a 1 included.
  spec::ParallelConfig parallel{vm["tp"].as<int>(), vm["pp"].as<int>(), !vm["tp"].defaulted(), !vm["pp"].defaulted()};
  if (parallel.tp < 1) throw ConfigError("--tp", "must be >= 1, got " + std::to_string(parallel.tp));
  if (parallel.pp < 1) throw ConfigError("--pp", "must be >= 1, got " + std::to_string(parallel.pp));
  // One GPU-option rule for every command: "2x…" sets the split unless --tp/--pp say it (and agree).
  const auto option = spec::parse_gpu_option(vm["gpu"].as<std::string>(), "--gpu");
  parallel = spec::split_for(option, parallel, "--tp");
  const spec::GpuSpec gpu = spec::gpu_for(option, parallel.gpus(), catalog, "--gpu");
  spec::Quantization quant;
  std::vector<std::string> notes = model.notes;
  quant.weights = spec::weight_format_for_model(model, vm["quant"].as<std::string>(), "--quant", notes);
  quant.kv_dtype = spec::parse_kv_dtype(vm["kv-dtype"].as<std::string>(), "--kv-dtype");
  perf::HardwareProfile profile = perf::default_profile(gpu);
  const std::string profile_path = vm["gpu-profile"].as<std::string>();
  if (!profile_path.empty()) {
    profile = perf::load_profile(profile_path, profile);
    const std::string parent = gpu.id.substr(0, gpu.id.find(':'));
    if (profile.gpu_id != gpu.id && profile.gpu_id != parent)
      throw ConfigError("--gpu-profile", "profile '" + profile_path + "' describes GPU '" + profile.gpu_id +
                                             "' but --gpu is '" + gpu.id + "'");
  }
  // A release without CUDA graphs (vLLM before 0.2.6) runs every step eagerly, as --eager does.
  const bool eager = vm["eager"].as<bool>() || !spec::release_has_cuda_graphs(vm["engine"].as<std::string>(), "--engine");
  // The engine as a scenario's engine.runtime / engine.policy reads it (the release's runtime, policy and
  // defaults: SGLang's scheduler and overlap, a vLLM release's V0 engine), so Python's llmsim.step() is the same.
  const std::string engine_name = vm["engine"].as<std::string>();
  spec::EngineConfig engine;
  {
    Json e = Json::object();
    e[engine_name == "vllm" || engine_name == "vllm-v0" ? "policy" : "runtime"] = engine_name;
    try {
      engine = spec::scenario_from_json(JsonView(Json{{"engine", e}}, "")).engine;
    } catch (const ConfigError& x) {
      throw ConfigError("--engine", x.what());
    }
  }
  engine.cuda_graphs = !eager;
  // The knobs a scenario leaves unset take the policy's defaults for the GPU (spec::effective_engine), as in
  // `memory` and `simulate`: the same activation peak, so the same KV room in all three.
  engine.max_num_seqs = 0;
  engine.max_num_batched_tokens = 0;
  engine = spec::effective_engine(engine, gpu, false, &model);
  const perf::Runtime generation = perf::runtime_of(engine);
  // A profile fitted from one runtime's runs prices another only with a warning, as on every scenario command.
  std::vector<std::string> warnings;
  if (!profile_path.empty())
    if (auto w = perf::runtime_mismatch(profile, generation)) warnings.push_back(std::move(*w));
  for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
  engine.cpu_offload_gb = vm["cpu-offload-gb"].as<double>();
  if (!(engine.cpu_offload_gb >= 0) || !std::isfinite(engine.cpu_offload_gb))
    throw ConfigError("--cpu-offload-gb", "must be >= 0, got " + format_given(engine.cpu_offload_gb));
  // A release ("vllm==0.4.1") also names its quantised kernels (pre-Marlin AWQ/GPTQ, FP8 on Ada).
  quant.kernels = spec::quant_kernels_for(engine_name, "--engine");
  perf::CostModel cm(model, quant, gpu, profile, parallel, !eager, engine.cpu_offload_gb * 1024.0 * 1024.0 * 1024.0,
                     generation);
  // SGLang's decode CUDA-graph limit: the release's for this card and TP, or the one asked (the rule scenarios use).
  std::optional<int> graph_bs;
  if (vm.count("cuda-graph-max-bs")) {
    graph_bs = vm["cuda-graph-max-bs"].as<int>();
    if (*graph_bs < 1) throw ConfigError("--cuda-graph-max-bs", "must be >= 1, got " + std::to_string(*graph_bs));
    if (generation != perf::Runtime::sglang)
      throw ConfigError("--cuda-graph-max-bs", "is SGLang's; --engine '" + engine_name + "' does not take it");
  }
  if (generation == perf::Runtime::sglang)
    cm = cm.with_max_graph_batch(spec::sglang_cuda_graph_max_bs(
        gpu, spec::is_engine_version(engine_name) ? std::optional<std::string>(engine_name) : std::nullopt, parallel.tp,
        graph_bs));
  // The engine's server, as a simulation prices it (perf/served_model.hpp): its host work per step, then (below,
  // after the proposer) async scheduling or SGLang's overlap scheduler — Python's llmsim.step() is the same.
  cm = perf::with_served_host(std::move(cm), engine, false);
  // vLLM's LoRA kernels (perf/lora_kernels.hpp), as make_cost_model adds them for a scenario's engine.enable_lora.
  for (const char* flag : {"max-loras", "max-lora-rank", "lora-adapters"})
    if (vm.count(flag) && !vm.count("enable-lora"))
      throw ConfigError(std::string("--") + flag, "takes effect only with --enable-lora (as vLLM's); add it or leave this out");
  if (vm.count("enable-lora")) {
    engine.enable_lora = true;
    if (vm.count("max-loras")) engine.max_loras = vm["max-loras"].as<int>();
    if (vm.count("max-lora-rank")) engine.max_lora_rank = vm["max-lora-rank"].as<int>();
    const int adapters = vm.count("lora-adapters") ? vm["lora-adapters"].as<int>() : 1;
    if (!(engine.max_loras >= 1 && engine.max_loras <= 1024))
      throw ConfigError("--max-loras", "must be in 1..1024 adapter slots, got " + std::to_string(engine.max_loras));
    if (std::find(std::begin(spec::kLoraRanks), std::end(spec::kLoraRanks), engine.max_lora_rank) == std::end(spec::kLoraRanks))
      throw ConfigError("--max-lora-rank", "must be one of vLLM's ranks 1, 8, 16, 32, 64, 128, 256, 320, 512, got " +
                                               std::to_string(engine.max_lora_rank));
    if (!(adapters >= 1 && adapters <= engine.max_loras))
      throw ConfigError("--lora-adapters", "must be in 1..--max-loras (" + std::to_string(engine.max_loras) +
                                               "): more adapters than slots are swapped in from host memory, which "
                                               "llmsim does not model; got " + std::to_string(adapters));
    cm = cm.with_lora(engine.max_loras, engine.max_lora_rank, adapters);
  }
  std::optional<spec::ResolvedSpeculation> speculation;
  const std::string method = vm["speculative"].as<std::string>();
  if (!method.empty() || !vm["num-speculative-tokens"].defaulted() || !vm["draft-model"].as<std::string>().empty()) {
    if (method.empty()) throw ConfigError("--speculative", "name the method (draft, ngram, eagle, mtp)");
    spec::SpeculativeConfig sc;
    sc.method = spec::parse_speculative_method(method, "--speculative");
    sc.draft_model = vm["draft-model"].as<std::string>();
    const int k = vm["num-speculative-tokens"].as<int>();
    sc.num_speculative_tokens = k;
    // One step's cost does not depend on the acceptance rate (it sets how many tokens the step yields).
    speculation = spec::resolve_speculation(sc, spec::default_acceptance_rate(sc.method).value_or(0.5), model, catalog);
    cm.set_proposer(perf::make_proposer(cm, *speculation, !eager));
  }

  cm = perf::with_engine_async(std::move(cm), engine, parallel.pp,
                               speculation ? std::optional<spec::SpeculativeConfig>(speculation->config) : std::nullopt);
  // The same checks (lengths, context, memory, KV room) as Python's llmsim.step().
  const perf::StepCost s = analysis::step_cost(cm, engine, lengths, analysis::StepNames::cli_flags,
                                               speculation ? &*speculation : nullptr);
  const std::string backend = perf::to_string(cm.decode_attention_backend());
  const perf::AllReduceModel allreduce(gpu, cm.profile(), parallel.tp, perf::runtime_traits(generation).allreduce);
  const double step_tokens = static_cast<double>(s.tokens);
  const std::string ar = perf::to_string(allreduce.algorithm(step_tokens * model.hidden_size * 2));
  if (vm["json"].as<bool>()) {  // the one writer Python's llmsim.step() uses too
    print_json(analysis::step_json(s, cm, notes, warnings, speculation ? &*speculation : nullptr));
    return kOk;
  }
  std::cout << model.id << " on " << gpu.id << (parallel.gpus() > 1 ? " x" + std::to_string(parallel.gpus()) : "")
            << " (" << cm.quant().weights.id << ", GEMMs in " << spec::to_string(cm.gemm_dtype()) << ", tp "
            << parallel.tp << ", pp " << parallel.pp << "): prefill " << lengths.prefill_tokens << " tokens after "
            << lengths.prefill_context << ", decode " << lengths.decode_seqs << " seqs at context " << lengths.context
            << "\n";
  std::cout << "engine " << perf::to_string(generation) << "; decode attention: " << backend
            << (parallel.tp > 1 ? "; all-reduce: " + ar + " over " + perf::to_string(allreduce.link()) : "") << "\n";
  if (speculation)
    std::cout << "speculative decoding: " << spec::to_string(speculation->config.method) << ", k = "
              << speculation->config.num_speculative_tokens << ": each decoder verifies k + 1 tokens; 'proposer' is "
              << (speculation->proposer ? speculation->proposer->id : std::string("the CPU's n-gram lookup (no GPU time)"))
              << "\n";
  for (const auto& n : notes) std::cout << "note: " << n << "\n";
  std::cout << "profile: " << cm.profile().source << "\n\n";
  Table t({"op", "time ms", "share %", "GFLOP", "MB", "bound", "% of peak"});
  for (const auto& o : s.ops)
    t.add({o.name, fmt(o.time_s * 1e3, 3), fmt(100 * o.time_s / s.time_s, 1), fmt(o.flops / 1e9, 2),
           fmt(o.bytes / 1e6, 1), perf::to_string(o.bound),
           o.bound == perf::Bound::overhead ? "" : fmt(100 * o.peak_fraction, 1)});
  t.print(std::cout);
  std::cout << "\niteration " << fmt(s.time_s * 1e3, 3) << " ms, bound by " << perf::to_string(s.bound) << ", "
            << fmt(static_cast<double>(s.tokens) / s.time_s, 1) << " tokens/s\n";
  return kOk;
}

}  // namespace

Command command_step() {
  return {"step", "time of one engine iteration with its per-op roofline breakdown",
          [](int argc, char** argv) { return guarded("step", [&] { return run_step(argc, argv); }); }};
}

}  // namespace llmsim::cli
